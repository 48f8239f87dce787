// Errors in the chat format: the spec's body as JSON, or, once a stream has
// started, one in-band `data:` event carrying the same `error` object.
import { errorBody, type PublicError } from "../../errors/http-status.ts";

export function encodeChatStreamError(error: PublicError): string {
  return JSON.stringify(errorBody(error));
}
