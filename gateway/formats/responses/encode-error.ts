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

/** The failed response's `error` (OpenAI's ResponseError, whose `code` is a closed list). */
export function responseErrorOf(error: PublicError): { code: string; message: string } {
  return { code: error.status === 429 ? "rate_limit_exceeded" : "server_error", message: error.message };
}
