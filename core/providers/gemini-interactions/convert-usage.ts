// The interaction's `usage` (Usage in @google/genai's Interactions types) as
// the hub's counts. Its totals are Gemini's usageMetadata under other names:
// total_input_tokens includes the cached ones, total_tool_use_tokens (what
// Google's own tools fed the model) is input beside it, and thoughts
// (total_thought_tokens) are output beside total_output_tokens.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import { Modality, ModalityTokensSchema, type ModalityTokens } from "../../../gen/router/v1/inference_pb.js";
import type { UsageInit } from "../block-writer.ts";

const count = z.number().int().nonnegative().optional();

/** ModalityTokens lists (`input_tokens_by_modality`, ...): the modality in lower case. */
const modalityCountsSchema = z.array(z.looseObject({ modality: z.string().optional(), tokens: count })).nullish();

/** Loose: Google adds fields (grounding_tool_count, the by-modality lists of cached and tool-use tokens). */
export const interactionsUsageSchema = z.looseObject({
  total_input_tokens: count,
  total_cached_tokens: count,
  total_output_tokens: count,
  total_thought_tokens: count,
  total_tool_use_tokens: count,
  total_tokens: count,
  input_tokens_by_modality: modalityCountsSchema,
  output_tokens_by_modality: modalityCountsSchema,
});

export type InteractionsUsage = z.infer<typeof interactionsUsageSchema>;

const MODALITIES: Record<string, Modality> = {
  text: Modality.TEXT,
  image: Modality.IMAGE,
  audio: Modality.AUDIO,
  video: Modality.VIDEO,
  document: Modality.DOCUMENT,
};

export function convertUsage(usage: InteractionsUsage): UsageInit {
  const thoughts = usage.total_thought_tokens ?? 0;
  return {
    inputTokens: (usage.total_input_tokens ?? 0) + (usage.total_tool_use_tokens ?? 0),
    cachedInputTokens: usage.total_cached_tokens ?? 0,
    cacheWriteTokens: 0,
    outputTokens: (usage.total_output_tokens ?? 0) + thoughts,
    reasoningTokens: thoughts,
    inputByModality: byModality(usage.input_tokens_by_modality),
    outputByModality: byModality(usage.output_tokens_by_modality),
    // Parsed from the upstream's JSON, unchanged (the schema adds no defaults).
    raw: usage as JsonObject,
  };
}

function byModality(details: z.infer<typeof modalityCountsSchema>): ModalityTokens[] {
  return (details ?? []).map((detail) =>
    create(ModalityTokensSchema, { modality: MODALITIES[(detail.modality ?? "").toLowerCase()] ?? Modality.UNSPECIFIED, tokens: detail.tokens ?? 0 }),
  );
}
