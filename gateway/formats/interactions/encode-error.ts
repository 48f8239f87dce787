// Errors in the Interactions format: the spec's body, `{error: {message, type,
// param, code}}`, which is also Google's shape (the @google/genai SDK reads
// `error.message` and `error.code`). Inside a committed stream, Google's
// `error` event carries the same object (encode-stream.ts).
import { Code, ConnectError, errorDetailOf, routerError } from "../../../core/errors.ts";
import type { PublicError } from "../../errors/http-status.ts";
import { specErrorBody } from "../../errors/spec-error-body.ts";

export const encodeInteractionsError = specErrorBody;

/** The `error` stream event's error object. */
export const errorOf = (error: PublicError) => specErrorBody(error).error;

/**
 * The spec answers an unknown model in this format with a 400 (the core's is a
 * 404 model_not_found, as chat's): the same reason and message, as an invalid
 * `model`. Any other error is rethrown as it is.
 */
export function unknownModelIsInvalid(error: unknown): never {
  if (error instanceof ConnectError && errorDetailOf(error)?.reason === "model_not_found") {
    throw routerError(Code.InvalidArgument, "model_not_found", error.rawMessage, { param: "model", cause: error });
  }
  throw error;
}
