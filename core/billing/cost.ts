// The cost of one request from its token usage and the serving provider's prices
// (docs/contract.md): uncached prompt, cache reads, cache writes and completion tokens
// (reasoning included) at their own rates, plus the per-request fee. Cache
// writes kept an hour have a rate of their own (Anthropic's 1h TTL), and so
// may output tokens of an image, audio or video (Gemini reports output by
// modality; a video token costs more than a text one).
import type { Modality, Usage } from "../../gen/router/v1/inference_pb.js";
import type { Money } from "./money.ts";

export interface TokenPrices {
  prompt: Money;
  completion: Money;
  request: Money;
  inputCacheRead: Money;
  inputCacheWrite: Money;
  /** Cache writes kept an hour. */
  inputCacheWrite1h: Money;
  /** Output tokens of these modalities, where they have a price of their own (the others: `completion`). */
  completionByModality?: Partial<Record<Modality, Money>>;
}

/**
 * The token counts a cost is made of (reasoning is part of output, priced
 * with it): the proto Usage an adapter reports, whose `cost` the core fills in
 * from this, or an estimate shaped like it.
 */
export type UsageCounts = Pick<Usage, "inputTokens" | "cachedInputTokens" | "cacheWriteTokens" | "outputTokens" | "reasoningTokens"> &
  Partial<Pick<Usage, "cacheWrite1hTokens" | "outputByModality">>;

export function costOf(usage: UsageCounts, prices: TokenPrices): Money {
  const cacheWrite1h = Math.min(usage.cacheWrite1hTokens ?? 0, usage.cacheWriteTokens);
  const uncachedPrompt = Math.max(0, usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens);
  return (
    BigInt(uncachedPrompt) * prices.prompt +
    BigInt(usage.cachedInputTokens) * prices.inputCacheRead +
    BigInt(usage.cacheWriteTokens - cacheWrite1h) * prices.inputCacheWrite +
    BigInt(cacheWrite1h) * prices.inputCacheWrite1h +
    outputCost(usage, prices) +
    prices.request
  );
}

/** Output tokens at the completion price, but those of a modality with a price of its own (never more of them than the output has) at that. */
function outputCost(usage: UsageCounts, prices: TokenPrices): Money {
  let cost = 0n;
  let rest = usage.outputTokens;
  const own = prices.completionByModality;
  if (own) {
    for (const { modality, tokens } of usage.outputByModality ?? []) {
      const price = own[modality];
      if (price === undefined) continue;
      const counted = Math.min(Math.max(0, tokens), rest);
      cost += BigInt(counted) * price;
      rest -= counted;
    }
  }
  return cost + BigInt(rest) * prices.completion;
}
