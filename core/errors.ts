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

/** The most of a caller's value an error quotes: enough to recognise it, never the caller's input sent back whole. */
export const MAX_ECHOED_CHARS = 256;
/** The longest error message: a builder that quotes a caller's value without echoed() is still bounded. */
export const MAX_ERROR_MESSAGE_CHARS = 4096;

/**
 * A caller's value (an id, a model name, a path) as an error message quotes
 * it: past MAX_ECHOED_CHARS, its start and how much was left out. A 31 MB
 * task id is not sent back in a 31 MB 404.
 */
export function echoed(value: string, max = MAX_ECHOED_CHARS): string {
  if (value.length <= max) return value;
  // Not between the two halves of a surrogate pair.
  const end = isHighSurrogate(value.charCodeAt(max - 1)) ? max - 1 : max;
  return `${value.slice(0, end)}... (${value.length - end} more characters)`;
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;

export function routerError(code: Code, reason: string, message: string, options: ErrorOptions = {}): ConnectError {
  // Every error is built here: no message or param can carry a caller's input back unbounded.
  message = echoed(message, MAX_ERROR_MESSAGE_CHARS);
  const detail = create(ErrorDetailSchema, {
    reason,
    // Room for a path that quotes an echoed() name (`tools[0].<name>... (n more characters)`).
    param: echoed(options.param ?? "", 4 * MAX_ECHOED_CHARS),
    retryAfterSeconds: options.retryAfterSeconds ?? 0,
    metadata: options.metadata,
  });
  return new ConnectError(message, code, undefined, [{ desc: ErrorDetailSchema, value: detail }], options.cause);
}

/** Reads the ErrorDetail of any error (absent for errors the core did not make). */
export function errorDetailOf(error: ConnectError): ErrorDetail | undefined {
  return error.findDetails(ErrorDetailSchema)[0];
}

/** `how`: the headers the endpoint reads a key from (the Messages endpoints take `x-api-key` too). */
export const missingApiKey = (how = "Authorization: Bearer <API_KEY>") =>
  routerError(Code.Unauthenticated, "missing_api_key", `No API key provided. Send ${how}.`);

/** The caller stopped waiting (its connection closed or its call was cancelled): nobody reads the answer. */
export const callerWentAway = () => routerError(Code.Canceled, "client_closed", "The caller went away.");

/** A bare model name (`claude-sonnet-4-5`) that several catalogue models have: the caller must send one of their ids. */
export const ambiguousModel = (name: string, ids: string[], param: string) =>
  routerError(Code.InvalidArgument, "ambiguous_model", `Model ${echoed(name)} names several models: ${ids.join(", ")}; send one of these ids.`, {
    param,
    metadata: { candidates: ids },
  });

/** The one answer for a task the caller may not see: missing, another organisation's, or (on a kind's own endpoint) a task of another kind. */
export const taskNotFound = (id: string) => routerError(Code.NotFound, "task_not_found", `No task with id ${JSON.stringify(echoed(id))} was found.`, { param: "task_id" });

/**
 * The reason of a media create on a model none of whose routes runs media
 * tasks of the kind (core/tasks/media-model.ts): the gateway's Interactions
 * format then serves the video through the hub, where a chat protocol may make it.
 */
export const NO_MEDIA_ROUTE = "no_media_route";

export const invalidParameter = (param: string, message: string) =>
  routerError(Code.InvalidArgument, "invalid_parameter", message, { param });
