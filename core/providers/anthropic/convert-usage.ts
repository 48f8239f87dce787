// Anthropic's usage reports as the hub's usage. A stream reports usage more
// than once (message_start, then message_delta); each report's counts are
// running totals, so the latest value of each field wins.
import type { JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import type { UsageInit } from "../block-writer.ts";

const count = z.number().int().nonnegative().nullish();

export const usageSchema = z.looseObject({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: count,
  cache_read_input_tokens: count,
  // The split of cache_creation_input_tokens by time to live.
  cache_creation: z.looseObject({ ephemeral_1h_input_tokens: count }).nullish(),
  // The reasoning share of output_tokens (not added to it); absent from older answers.
  output_tokens_details: z.looseObject({ thinking_tokens: count }).nullish(),
});

export type AnthropicUsage = z.infer<typeof usageSchema>;

type Counts = Record<"input_tokens" | "output_tokens" | "cache_creation_input_tokens" | "cache_read_input_tokens" | "cache_creation_1h" | "thinking_tokens", number>;

export interface UsageTotals {
  /** One report (absent from an event that has none). */
  add(reported: AnthropicUsage | null | undefined): void;
  /** Whether any report came: an answer without one is incomplete. */
  reported(): boolean;
  /** The hub's usage, with the reports' own JSON merged as `raw`. */
  total(): UsageInit;
}

export function createUsageTotals(): UsageTotals {
  const usage: Counts = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation_1h: 0, thinking_tokens: 0 };
  let rawUsage: JsonObject | undefined;
  return {
    add(reported) {
      if (!reported) return;
      // Parsed from the upstream's JSON; later reports (message_delta) update earlier ones.
      rawUsage = { ...rawUsage, ...(reported as JsonObject) };
      for (const key of ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"] as const) {
        const value = reported[key];
        if (typeof value === "number") usage[key] = value;
      }
      const written1h = reported.cache_creation?.ephemeral_1h_input_tokens;
      if (typeof written1h === "number") usage.cache_creation_1h = written1h;
      const thinking = reported.output_tokens_details?.thinking_tokens;
      if (typeof thinking === "number") usage.thinking_tokens = thinking;
    },
    reported: () => rawUsage !== undefined,
    total: () => ({ ...tokenUsage(usage), raw: rawUsage }),
  };
}

/**
 * Anthropic counts cache reads and writes apart from `input_tokens`; the hub's
 * input count includes both. Thinking tokens are part of `output_tokens`, and
 * `output_tokens_details.thinking_tokens` says how many (0 when not reported).
 */
function tokenUsage(usage: Counts): UsageInit {
  return {
    inputTokens: usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens,
    cachedInputTokens: usage.cache_read_input_tokens,
    cacheWriteTokens: usage.cache_creation_input_tokens,
    cacheWrite1hTokens: Math.min(usage.cache_creation_1h, usage.cache_creation_input_tokens),
    outputTokens: usage.output_tokens,
    reasoningTokens: Math.min(usage.thinking_tokens, usage.output_tokens),
  };
}
