// Errors in the Responses format: before the stream commits, the spec's body
// (the same as chat). Inside a committed stream, OpenAI's in-band `error`
// event, then `response.failed` (encode-stream.ts sends both, numbered).
import type { PublicError } from "../../errors/http-status.ts";
import { specErrorBody } from "../../errors/spec-error-body.ts";

export const encodeResponsesError = specErrorBody;

/** The `error` stream event's fields (OpenAI's ResponseErrorEvent), without its sequence number. */
export function errorEventOf(error: PublicError) {
  return { type: "error", code: error.code || null, message: error.message, param: error.param };
}

/**
 * The failed response's `error` (OpenAI's ResponseError, whose `code` is a
 * closed list): ours is told as rate_limit_exceeded or server_error, the
 * message ours as it was. Decided by our reason code, the one thing both a
 * stream's error and a stored turn's (TurnError.code) carry.
 */
export function responseErrorOf({ code, message }: { code: string; message: string }): { code: string; message: string } {
  return { code: RATE_LIMITED_REASONS.has(code) ? "rate_limit_exceeded" : "server_error", message };
}

/** The core's reasons of a 429 (ResourceExhausted). */
const RATE_LIMITED_REASONS: ReadonlySet<string> = new Set(["rate_limit_exceeded", "upstream_rate_limited", "free_quota_exhausted"]);
