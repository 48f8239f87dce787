// The headers of an error answer, the same whatever format shapes its body.
import { rateLimitHeaders, traceHeader, type TraceEntry } from "../headers.ts";
import type { PublicError } from "./http-status.ts";

/** Statuses worth retrying as they are (the official SDKs' own rule): a timeout, a conflict, a rate limit, a server error. */
const isRetryableStatus = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;

/**
 * 5xx reasons that are the configuration's, not a passing fault: no enabled provider serves
 * the model (its key is not set, or the request names providers that do not serve it).
 * Retrying cannot change the answer, so the SDKs are told not to.
 */
const CONFIGURATION_REASONS = new Set(["no_provider_available"]);

/**
 * 429 reasons that last hours, not seconds: the daily free quota resets at the next UTC midnight.
 * The SDKs' short backoff cannot outwait it, so their retries only delay the answer.
 */
const LONG_WAIT_REASONS = new Set(["free_quota_exhausted"]);

const isRetryable = (error: PublicError) => isRetryableStatus(error.status) && !CONFIGURATION_REASONS.has(error.code) && !LONG_WAIT_REASONS.has(error.code);

/** Retry-After, the routing trace, the exceeded rate-limit window, and whether to retry. */
export function errorHeaders(error: PublicError): Record<string, string> {
  const headers: Record<string, string> = {};
  // The OpenAI and Anthropic SDKs (and the agents built on them) read it: a refused key or a bad
  // request is not retried ten times with backoff before the caller sees it.
  if (!isRetryable(error)) headers["x-should-retry"] = "false";
  if (error.retryAfterSeconds > 0) headers["retry-after"] = String(error.retryAfterSeconds);
  const attempts = error.metadata?.attempts;
  if (Array.isArray(attempts) && attempts.length > 0) headers["x-router-trace"] = traceHeader(attempts as unknown as TraceEntry[]);
  // The exhausted window (a rate limit, or the daily free quota as a request limit).
  const exhausted =
    error.code === "rate_limit_exceeded" ? { unit: error.metadata?.unit === "tokens" ? ("tokens" as const) : ("requests" as const), limit: error.metadata?.limit }
    : error.code === "free_quota_exhausted" ? { unit: "requests" as const, limit: error.metadata?.quota_limit }
    : undefined;
  if (exhausted && typeof exhausted.limit === "number") Object.assign(headers, rateLimitHeaders(exhausted.unit, exhausted.limit, 0, error.retryAfterSeconds));
  return headers;
}
