// Errors in the Messages format (decisions.md, "Formats"): the spec's error
// object in Anthropic's envelope, `{"type": "error", "error": {...}}`, so that
// both the spec's fields (message, type, param, code) and Anthropic's clients
// (which read error.type and error.message) hold. A 401 keeps the spec's
// `type: invalid_request_error`. Beside it `request_id`, which Anthropic's
// ErrorResponse always has (null where the id is not known: a body that could
// not be read is refused before the route's handler runs). Inside a committed
// stream the same error object is the `error` event (encode-stream.ts).
import type { PublicError } from "../../errors/http-status.ts";
import { specErrorBody } from "../../errors/spec-error-body.ts";

export function messagesErrorBody(error: PublicError, requestId: string | null = null) {
  return { type: "error", ...specErrorBody(error), request_id: requestId };
}
