// The cost of one request from its token usage and the serving provider's prices
// (decisions.md): uncached prompt, cache reads, cache writes and completion tokens
// (reasoning included) at their own rates, plus the per-request fee.
import type { TokenUsage } from "../providers/types.ts";
import type { Money } from "./money.ts";

export interface TokenPrices {
  prompt: Money;
  completion: Money;
  request: Money;
  inputCacheRead: Money;
  inputCacheWrite: Money;
}

export function costOf(usage: TokenUsage, prices: TokenPrices): Money {
  const uncachedPrompt = Math.max(0, usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens);
  return (
    BigInt(uncachedPrompt) * prices.prompt +
    BigInt(usage.cachedInputTokens) * prices.inputCacheRead +
    BigInt(usage.cacheWriteTokens) * prices.inputCacheWrite +
    BigInt(usage.outputTokens) * prices.completion +
    prices.request
  );
}
