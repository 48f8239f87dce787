// Response headers shared by answers and error answers: the routing trace and
// OpenAI's rate-limit headers.

/** One attempt of the routing trace, as answers and error metadata both give it. */
export interface TraceEntry {
  model: string;
  provider: string;
  outcome: string;
  reason: string;
}

/** `x-router-trace`: `<model>@<provider>;<outcome>[;<reason>]`, comma separated, in order. */
export function traceHeader(entries: TraceEntry[]): string {
  return entries.map((e) => `${e.model}@${e.provider};${e.outcome}${e.reason ? `;${e.reason}` : ""}`).join(", ");
}

/**
 * OpenAI's rate-limit headers (decisions.md), so OpenAI-style clients can pace
 * themselves: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, the reset
 * as a duration ("12s").
 */
export function rateLimitHeaders(unit: "requests" | "tokens", limit: number, remaining: number, resetSeconds: number): Record<string, string> {
  return {
    [`x-ratelimit-limit-${unit}`]: String(limit),
    [`x-ratelimit-remaining-${unit}`]: String(remaining),
    [`x-ratelimit-reset-${unit}`]: `${Math.max(0, resetSeconds)}s`,
  };
}
