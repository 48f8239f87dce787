// A store's refusal, or its failure, as the core's one error type. The gateway
// maps reasons to statuses (gateway/errors/http-status.ts).
import { Code, ConnectError, routerError } from "../errors.ts";
import { formatNanos } from "./ledger-units.ts";
import type { Refusal } from "./store.ts";
import { StoreUnavailableError } from "./store-errors.ts";
import { nextUtcMidnight } from "./windows.ts";

/** `lowerHint`: what an insufficient-credits refusal suggests lowering (the request's own cost drivers), `lower max_tokens` unless said. */
export function refusalError(refusal: Refusal, now: number, lowerHint = "lower max_tokens"): ConnectError {
  switch (refusal.reason) {
    case "invalid_api_key":
      return routerError(Code.Unauthenticated, "invalid_api_key", "Invalid API key.");
    case "key_disabled":
      return routerError(Code.Unauthenticated, "key_disabled", "This API key has been disabled.");
    case "model_not_allowed":
      return routerError(Code.PermissionDenied, "model_not_allowed", `This API key may not use ${refusal.modelId}.`, { param: "model" });
    case "rate_limited": {
      const who = refusal.scope === "key" ? "this API key" : "your organisation";
      return routerError(Code.ResourceExhausted, "rate_limit_exceeded", `Rate limit reached: ${refusal.limit} ${refusal.unit} per minute for ${who}.`, {
        retryAfterSeconds: secondsUntil(refusal.resetAt, now),
        metadata: { scope: refusal.scope, unit: refusal.unit, limit: refusal.limit, reset_at: new Date(refusal.resetAt).toISOString() },
      });
    }
    case "insufficient_credits":
      return routerError(
        Code.FailedPrecondition,
        "insufficient_credits",
        `Insufficient credits: this request may cost up to ${formatNanos(refusal.neededNanos)} USD and the balance is ${formatNanos(refusal.balanceNanos)} USD. Top up, or ${lowerHint}.`,
        { metadata: { balance: formatNanos(refusal.balanceNanos), required: formatNanos(refusal.neededNanos) } },
      );
    case "free_quota_exhausted": {
      const resetAt = nextUtcMidnight(now);
      return routerError(Code.ResourceExhausted, "free_quota_exhausted", `The daily free quota of ${refusal.modelId} is used up (${refusal.used} of ${refusal.limit}).`, {
        param: "model",
        retryAfterSeconds: secondsUntil(resetAt, now),
        // The spec puts these at the top level of the 429 body.
        metadata: { quota_limit: refusal.limit, quota_used: refusal.used, reset_at: new Date(resetAt).toISOString() },
      });
    }
    case "no_free_model_available":
      return noFreeModelAvailable();
    case "duplicate_request":
      return routerError(Code.AlreadyExists, "duplicate_request", "A request with this id is already in flight.");
  }
}

export const noFreeModelAvailable = () =>
  routerError(Code.InvalidArgument, "no_free_model_available", "No free model can serve this request now (capabilities or today's quotas).", {
    param: "model",
  });

/** Without its state store the core cannot tell who pays: it refuses rather than serve free. */
export function storeUnavailable(error: unknown): ConnectError {
  return routerError(Code.Unavailable, "state_unavailable", "Account state is unavailable; retry shortly.", { retryAfterSeconds: 1, cause: error });
}

export function isStoreFailure(error: unknown): boolean {
  return error instanceof StoreUnavailableError;
}

/** A store call whose failure to reach its backend becomes the 503 above; other errors pass as they are. */
export async function fromStore<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch (error) {
    throw isStoreFailure(error) ? storeUnavailable(error) : error;
  }
}

function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}
