import { create, type JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import { Modality, ModalityTokensSchema, type ModalityTokens } from "../../../gen/router/v1/inference_pb.js";
import type { UsageInit } from "../block-writer.ts";

const count = z.number().int().nonnegative().optional();

/** Gemini's ModalityTokenCount list (`promptTokensDetails`, `candidatesTokensDetails`). */
const modalityCountsSchema = z.array(z.looseObject({ modality: z.string().optional(), tokenCount: count })).nullish();

/** GenerateContentResponse.usageMetadata (loose: Google adds fields). */
export const geminiUsageSchema = z.looseObject({
  promptTokenCount: count,
  cachedContentTokenCount: count,
  candidatesTokenCount: count,
  toolUsePromptTokenCount: count,
  thoughtsTokenCount: count,
  totalTokenCount: count,
  promptTokensDetails: modalityCountsSchema,
  candidatesTokensDetails: modalityCountsSchema,
});

export type GeminiUsage = z.infer<typeof geminiUsageSchema>;

const MODALITIES: Record<string, Modality> = {
  TEXT: Modality.TEXT,
  IMAGE: Modality.IMAGE,
  AUDIO: Modality.AUDIO,
  VIDEO: Modality.VIDEO,
  DOCUMENT: Modality.DOCUMENT,
};

/**
 * promptTokenCount already includes the cached tokens. totalTokenCount is
 * prompt + toolUsePrompt + candidates + thoughts: the tool-use prompt (search
 * results fed to the model) is input billed beside the prompt, and the
 * thoughts are output beside the candidates.
 */
export function convertUsage(usage: GeminiUsage): UsageInit {
  const thoughts = usage.thoughtsTokenCount ?? 0;
  return {
    inputTokens: (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0),
    cachedInputTokens: usage.cachedContentTokenCount ?? 0,
    cacheWriteTokens: 0,
    outputTokens: (usage.candidatesTokenCount ?? 0) + thoughts,
    reasoningTokens: thoughts,
    inputByModality: byModality(usage.promptTokensDetails),
    outputByModality: byModality(usage.candidatesTokensDetails),
    // Parsed from the upstream's JSON, unchanged (the schema adds no defaults).
    raw: usage as JsonObject,
  };
}

function byModality(details: z.infer<typeof modalityCountsSchema>): ModalityTokens[] {
  return (details ?? []).map((detail) =>
    create(ModalityTokensSchema, { modality: MODALITIES[detail.modality ?? ""] ?? Modality.UNSPECIFIED, tokens: detail.tokenCount ?? 0 }),
  );
}
