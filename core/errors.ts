// The one error type the core throws: a ConnectError carrying an ErrorDetail
// with a stable reason. The gateway maps (code, reason) to HTTP in one place.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema, type ErrorDetail } from "../gen/router/v1/errors_pb.js";

export { Code, ConnectError };

export interface ErrorOptions {
  param?: string;
  retryAfterSeconds?: number;
  metadata?: JsonObject;
  cause?: unknown;
}

export function routerError(code: Code, reason: string, message: string, options: ErrorOptions = {}): ConnectError {
  const detail = create(ErrorDetailSchema, {
    reason,
    param: options.param ?? "",
    retryAfterSeconds: options.retryAfterSeconds ?? 0,
    metadata: options.metadata,
  });
  return new ConnectError(message, code, undefined, [{ desc: ErrorDetailSchema, value: detail }], options.cause);
}

/** Reads the ErrorDetail of any error (absent for errors the core did not make). */
export function errorDetailOf(error: ConnectError): ErrorDetail | undefined {
  return error.findDetails(ErrorDetailSchema)[0];
}

export const missingApiKey = () =>
  routerError(Code.Unauthenticated, "missing_api_key", "No API key provided. Send Authorization: Bearer <API_KEY>.");

/** The caller stopped waiting (its connection closed or its call was cancelled): nobody reads the answer. */
export const callerWentAway = () => routerError(Code.Canceled, "client_closed", "The caller went away.");

export const invalidParameter = (param: string, message: string) =>
  routerError(Code.InvalidArgument, "invalid_parameter", message, { param });
