import { create, type JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import { Modality, ModalityTokensSchema, type ModalityTokens } from "../../../gen/router/v1/inference_pb.js";
import type { UsageInit } from "../block-writer.ts";

const count = z.number().int().nonnegative().optional();

/** The usage object of a completion or of the final stream chunk (loose: vendors add fields). */
export const openAiUsageSchema = z.looseObject({
  prompt_tokens: z.number().int().nonnegative().default(0),
  completion_tokens: z.number().int().nonnegative().default(0),
  prompt_tokens_details: z.looseObject({ cached_tokens: count, audio_tokens: count, image_tokens: count }).nullish(),
  completion_tokens_details: z.looseObject({ reasoning_tokens: count, audio_tokens: count, image_tokens: count }).nullish(),
  // DeepSeek reports cache hits under its own name.
  prompt_cache_hit_tokens: count,
});

export type OpenAiUsage = z.infer<typeof openAiUsageSchema>;

type ModalityDetails = { audio_tokens?: number; image_tokens?: number } | null | undefined;

export function convertUsage(usage: OpenAiUsage): UsageInit {
  return {
    inputTokens: usage.prompt_tokens,
    cachedInputTokens: usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? 0,
    cacheWriteTokens: 0,
    outputTokens: usage.completion_tokens,
    reasoningTokens: usage.completion_tokens_details?.reasoning_tokens ?? 0,
    inputByModality: byModality(usage.prompt_tokens_details),
    outputByModality: byModality(usage.completion_tokens_details),
    // Parsed from the upstream's JSON, so JSON (the schema only fills in missing counts).
    raw: usage as JsonObject,
  };
}

/** The audio and image shares OpenAI reports (the rest is text, not repeated here). */
function byModality(details: ModalityDetails): ModalityTokens[] {
  const counts: ModalityTokens[] = [];
  if (details?.audio_tokens) counts.push(create(ModalityTokensSchema, { modality: Modality.AUDIO, tokens: details.audio_tokens }));
  if (details?.image_tokens) counts.push(create(ModalityTokensSchema, { modality: Modality.IMAGE, tokens: details.image_tokens }));
  return counts;
}
