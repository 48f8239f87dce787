// The errors an inference ends with when its providers fail, each carrying the
// routing trace (`metadata.attempts`) so the caller sees what was tried.
import type { JsonObject } from "@bufbuild/protobuf";
import type { RoutingAttempt } from "../../gen/router/v1/inference_pb.js";
import { Code, ConnectError, routerError } from "../errors.ts";
import { UpstreamError } from "../providers/types.ts";

function traceJson(trace: readonly RoutingAttempt[]): JsonObject {
  return { attempts: trace.map((t) => ({ model: t.modelId, provider: t.provider, outcome: t.outcome, reason: t.reason })) };
}

/**
 * An answer that broke off after its first event: 502 upstream_error, whose trace says the
 * serving attempt (the start's last, traced `ok` when it began) failed, and why.
 */
export function brokeOff(error: unknown, trace: readonly RoutingAttempt[]): ConnectError {
  const why = error instanceof UpstreamError ? error.message : String(error);
  const reason = error instanceof UpstreamError ? error.reason : "internal_error";
  const failed = trace.map((entry, index) => (index === trace.length - 1 ? { ...entry, outcome: "error", reason } : entry));
  return routerError(Code.Unavailable, "upstream_error", `The provider's answer broke off before it was complete: ${why}`, {
    metadata: traceJson(failed),
    cause: error,
  });
}

/** A 4xx from upstream is the caller's problem: surface it as a 400 with the upstream's words. */
export function upstreamRejected(error: UpstreamError, trace: RoutingAttempt[]): ConnectError {
  return routerError(Code.InvalidArgument, "upstream_invalid_request", `The provider rejected the request: ${error.message}`, {
    metadata: traceJson(trace),
  });
}

/**
 * docs/contract.md: 502 upstream_error after all fallbacks, 429 when every attempt
 * was rate limited; either says Retry-After when a provider asked for a wait.
 */
export function allAttemptsFailed(trace: RoutingAttempt[], retryAfterSeconds: number): ConnectError {
  const failures = trace.filter((t) => t.outcome === "error");
  const allRateLimited = failures.length > 0 && failures.every((t) => t.reason === "http_429");
  const options = { metadata: traceJson(trace), retryAfterSeconds };
  return allRateLimited
    ? routerError(Code.ResourceExhausted, "upstream_rate_limited", "Every provider for this model is rate limiting; retry later.", options)
    : routerError(Code.Unavailable, "upstream_error", "Every provider for this model failed.", options);
}
