// The cost of one request from its token usage and the serving provider's prices
// (decisions.md): uncached prompt, cache reads, cache writes and completion tokens
// (reasoning included) at their own rates, plus the per-request fee. Cache
// writes kept an hour have a rate of their own (Anthropic's 1h TTL).
import type { TokenUsage } from "../providers/types.ts";
import type { Money } from "./money.ts";

export interface TokenPrices {
  prompt: Money;
  completion: Money;
  request: Money;
  inputCacheRead: Money;
  inputCacheWrite: Money;
  /** Cache writes kept an hour. */
  inputCacheWrite1h: Money;
}

export function costOf(usage: TokenUsage, prices: TokenPrices): Money {
  const cacheWrite1h = Math.min(usage.cacheWrite1hTokens ?? 0, usage.cacheWriteTokens);
  const uncachedPrompt = Math.max(0, usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens);
  return (
    BigInt(uncachedPrompt) * prices.prompt +
    BigInt(usage.cachedInputTokens) * prices.inputCacheRead +
    BigInt(usage.cacheWriteTokens - cacheWrite1h) * prices.inputCacheWrite +
    BigInt(cacheWrite1h) * prices.inputCacheWrite1h +
    BigInt(usage.outputTokens) * prices.completion +
    prices.request
  );
}
