import { z } from "zod";
import type { TokenUsage } from "../types.ts";

/** The usage object of a completion or of the final stream chunk (loose: vendors add fields). */
export const openAiUsageSchema = z.looseObject({
  prompt_tokens: z.number().int().nonnegative().default(0),
  completion_tokens: z.number().int().nonnegative().default(0),
  prompt_tokens_details: z.looseObject({ cached_tokens: z.number().int().nonnegative().optional() }).nullish(),
  completion_tokens_details: z.looseObject({ reasoning_tokens: z.number().int().nonnegative().optional() }).nullish(),
  // DeepSeek reports cache hits under its own name.
  prompt_cache_hit_tokens: z.number().int().nonnegative().optional(),
});

export function convertUsage(usage: z.infer<typeof openAiUsageSchema>): TokenUsage {
  return {
    inputTokens: usage.prompt_tokens,
    cachedInputTokens: usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? 0,
    cacheWriteTokens: 0,
    outputTokens: usage.completion_tokens,
    reasoningTokens: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}
