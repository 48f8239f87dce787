// Errors in the Messages format (docs/contract.md, "Formats"): the spec's error
// object in Anthropic's envelope, `{"type": "error", "error": {...}}`, so that
// both the spec's fields (message, type, param, code) and Anthropic's clients
// (which read error.type and error.message) hold. A 401 keeps the spec's
// `type: invalid_request_error`. Beside it `request_id`, which Anthropic's
// ErrorResponse always has: the request's id, on every error of these routes (a
// 405, an unreadable body, the /v1/models routes). Inside a committed stream the
// same error object is the `error` event (encode-stream.ts).
import type { PublicError } from "../../errors/http-status.ts";
import { specErrorBody } from "../../errors/spec-error-body.ts";

export function messagesErrorBody(error: PublicError, requestId: string | null) {
  return { type: "error", ...specErrorBody(error), request_id: requestId };
}
