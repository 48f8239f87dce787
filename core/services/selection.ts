// SelectModel: which model router/auto would serve the prompt with, and why
// (docs/selection.md). The caller's key is checked (401 first) and its
// allow-list and organisation's preference apply; nothing runs, nothing is charged.
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { SelectModelResponseSchema, type SelectionService } from "../../gen/router/v1/selection_pb.js";
import type { Accounts } from "../accounts/accounts.ts";
import { authenticate } from "../accounts/check-key.ts";
import type { Catalogue } from "../catalogue/catalogue.ts";
import { invalidParameter } from "../errors.ts";
import type { SelectionNeeds } from "../selection/filter.ts";
import { selectModel } from "../selection/select.ts";

const INPUT_MODALITIES = ["image", "audio", "file"] as const;

export function createSelectionService(catalogue: Catalogue, accounts: Accounts): ServiceImpl<typeof SelectionService> {
  return {
    async selectModel(request) {
      const key = await authenticate(accounts, request.caller);
      const needs = request.needs;
      const modalities = needs?.inputModalities ?? [];
      const unknown = modalities.find((m) => !(INPUT_MODALITIES as readonly string[]).includes(m));
      if (unknown !== undefined) throw invalidParameter("needs.input_modalities", `input modality must be one of ${INPUT_MODALITIES.join(", ")}.`);
      const preference = request.preference;
      if (preference !== undefined && !(preference >= 0 && preference <= 1)) throw invalidParameter("preference", "preference must be a number from 0 (cheapest) to 1 (best quality).");
      const selectionNeeds: SelectionNeeds = {
        tools: needs?.tools,
        structuredOutput: needs?.structuredOutput,
        inputModalities: modalities as SelectionNeeds["inputModalities"],
        contextTokens: needs?.contextTokens,
        maxTokens: needs?.maxTokens,
      };
      const selection = selectModel({ messages: request.messages, needs: selectionNeeds, preference }, catalogue, {
        model: request.model,
        allowedModels: key.allowedModels,
        organizationId: key.organizationId,
      });
      return create(SelectModelResponseSchema, {
        selectedModel: selection.selectedModel,
        assignedTags: selection.assignedTags,
        difficulty: selection.difficulty,
        confidence: selection.confidence,
        topCandidates: selection.topCandidates,
        selectionStrategy: selection.strategy,
        reasoningEffort: selection.reasoningEffort ?? "",
        error: selection.error ?? "",
      });
    },
  };
}
