// Errors in the chat format: the spec's body as JSON, or, once a stream has
// started, one in-band `data:` event carrying the same `error` object.
import type { PublicError } from "../../errors/http-status.ts";
import { specErrorBody } from "../../errors/spec-error-body.ts";
import type { SseEvent } from "../../sse.ts";

export const encodeChatError = specErrorBody;

export function encodeChatStreamError(error: PublicError): SseEvent[] {
  return [{ data: JSON.stringify(specErrorBody(error)) }];
}
