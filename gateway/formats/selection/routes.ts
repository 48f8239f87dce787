// POST /api/v1/model/selection and POST /v1/model/selection: which model
// router/auto would pick for a prompt, and why (docs/selection.md). A key is
// needed, as everywhere; nothing runs and nothing is charged.
import type { SelectModelResponse } from "../../../gen/router/v1/selection_pb.js";
import { bearerKey } from "../../credentials.ts";
import { specErrorBody } from "../../errors/spec-error-body.ts";
import { takeBody, type FormatDeps, type FormatRoutes, type GatewayFormat } from "../format.ts";
import { decodeSelectionRequest } from "./decode-request.ts";

export const selection: GatewayFormat = { encodeError: specErrorBody, register: registerSelectionRoutes };

function registerSelectionRoutes(router: FormatRoutes, { core }: FormatDeps) {
  for (const path of ["/api/v1/model/selection", "/v1/model/selection"]) {
    router.post(path, async (ctx) => {
      const apiKey = bearerKey(ctx.headers);
      const answer = await core.selection.selectModel(decodeSelectionRequest(takeBody(ctx), apiKey));
      ctx.body = encodeSelection(answer);
    });
  }
}

/**
 * The spec's model selection result (`top_candidates` are model ids; `selected_model`
 * is "" when none fits, `error` saying why), then the router's own explanation:
 * each candidate's score and why, the difficulty, the confidence, the reasoning effort.
 */
function encodeSelection(answer: SelectModelResponse) {
  return {
    selected_model: answer.selectedModel,
    assigned_tags: answer.assignedTags,
    top_candidates: answer.topCandidates.map(({ model }) => model),
    selection_strategy: answer.selectionStrategy,
    candidate_scores: answer.topCandidates.map(({ model, score, why }) => ({ model, score, why })),
    difficulty: answer.difficulty,
    confidence: answer.confidence,
    ...(answer.reasoningEffort && { reasoning_effort: answer.reasoningEffort }),
    ...(answer.error && { error: answer.error }),
  };
}
