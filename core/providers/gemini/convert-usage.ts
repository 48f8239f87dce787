import { z } from "zod";
import type { TokenUsage } from "../types.ts";

const count = z.number().int().nonnegative().optional();

/** GenerateContentResponse.usageMetadata (loose: Google adds per-modality details). */
export const geminiUsageSchema = z.looseObject({
  promptTokenCount: count,
  cachedContentTokenCount: count,
  candidatesTokenCount: count,
  toolUsePromptTokenCount: count,
  thoughtsTokenCount: count,
  totalTokenCount: count,
});

export type GeminiUsage = z.infer<typeof geminiUsageSchema>;

/**
 * promptTokenCount already includes the cached tokens. totalTokenCount is
 * prompt + toolUsePrompt + candidates + thoughts: the tool-use prompt (search
 * results fed to the model) is input billed beside the prompt, and the
 * thoughts are output beside the candidates.
 */
export function convertUsage(usage: GeminiUsage): TokenUsage {
  const thoughts = usage.thoughtsTokenCount ?? 0;
  return {
    inputTokens: (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0),
    cachedInputTokens: usage.cachedContentTokenCount ?? 0,
    cacheWriteTokens: 0,
    outputTokens: (usage.candidatesTokenCount ?? 0) + thoughts,
    reasoningTokens: thoughts,
  };
}
