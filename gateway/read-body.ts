// Reads a request body as JSON. One rule for every content type: a POST, PUT or
// PATCH body is JSON whatever Content-Type it declares, so the SDKs
// (application/json), `curl -d` (application/x-www-form-urlencoded) and
// text/plain all work, and a body that is not JSON (a form, XML, multipart) is
// told so. docs/requests.md states the rules.
import { bodyParser } from "@koa/bodyparser";
import type { IncomingMessage } from "node:http";
import type { Middleware } from "koa";
import { callerWentAway, Code, ConnectError, routerError } from "../core/errors.ts";
import { makeWellFormed, mayHoldLoneSurrogate } from "../wire/well-formed.ts";

/** What the body parser (through inflation) can undo; anything else is 415. */
const SUPPORTED_ENCODINGS = ["identity", "gzip", "deflate", "br"];

/**
 * Sets `ctx.request.body` to the parsed JSON value, or to undefined when the
 * body is empty (the decoder then says so instead of "model is required").
 */
export function readJsonBody(limitBytes: number): Middleware {
  const parse = bodyParser({
    enableTypes: ["json"],
    detectJSON: () => true,
    // Any JSON value, so that `"hi"` is told "must be a JSON object", not "not valid JSON".
    jsonStrict: false,
    jsonLimit: limitBytes,
    encoding: "utf-8",
    onError: (error, ctx) => {
      // A body of only whitespace is an empty body: leave ctx.request.body undefined.
      if (!isBlank((error as { body?: unknown }).body)) throw asBodyError(error, ctx.get("content-encoding"));
    },
  });
  // No frame of its own waits for the route: a streamed answer keeps every waiting frame as long as it lasts.
  return (ctx, next) => {
    normaliseContentEncoding(ctx.req);
    return parse(ctx, () => {
      // Undefined when onError let a blank body through unparsed.
      const raw: string | undefined = ctx.request.rawBody;
      if (raw === undefined || raw === "") ctx.request.body = undefined;
      // A lone surrogate is replaced by U+FFFD here, at the edge; the text tells first whether the body can hold one.
      else if (mayHoldLoneSurrogate(raw)) ctx.request.body = makeWellFormed(ctx.request.body);
      return next();
    });
  };
}

/** A body over the app's limit (413), JSON or form. */
export function payloadTooLarge(): ConnectError {
  return routerError(Code.InvalidArgument, "payload_too_large", "The request body is too large.");
}

function isBlank(body: unknown): boolean {
  return typeof body === "string" && body.trim() === "";
}

/**
 * Content codings are case-insensitive (RFC 9110); the inflater only knows lower case.
 * An empty body (Content-Length: 0) is empty whatever its encoding: nothing to inflate.
 */
function normaliseContentEncoding(req: IncomingMessage): void {
  if (req.headers["content-length"] === "0") delete req.headers["content-encoding"];
  const encoding = req.headers["content-encoding"];
  if (encoding !== undefined) req.headers["content-encoding"] = encoding.trim().toLowerCase() || "identity";
}

/**
 * The parser's failures (http-errors from raw-body and co-body, zlib errors
 * from the inflater) in the spec's shape. Anything unrecognised stays as it is
 * and becomes a logged 500: it would be a bug.
 */
function asBodyError(error: unknown, contentEncoding: string): unknown {
  if (error instanceof ConnectError || !(error instanceof Error)) return error;
  const { status, type } = error as { status?: number; type?: string };
  if (status === 413) return payloadTooLarge();
  if (type === "request.aborted") return callerWentAway();
  if (status === 415 && error.message.startsWith("Unsupported Content-Encoding")) {
    const supported = SUPPORTED_ENCODINGS.join(", ");
    return routerError(Code.InvalidArgument, "unsupported_content_encoding", `Content-Encoding ${JSON.stringify(contentEncoding)} is not supported; use one of ${supported}.`);
  }
  if (error instanceof SyntaxError && error.message === "Object contains forbidden prototype property") {
    return routerError(Code.InvalidArgument, "invalid_parameter", 'The request body contains the key "__proto__", which is not accepted.', { param: "body" });
  }
  // co-body marks a JSON syntax error with status 400.
  if (status === 400 && error instanceof SyntaxError) {
    return routerError(Code.InvalidArgument, "invalid_json", "The request body is not valid JSON.", { param: "body" });
  }
  if (isZlibError(error)) {
    // zlib's own words ("incorrect header check") would mean little to a client.
    const message = `The request body could not be decoded as ${contentEncoding}, its Content-Encoding: it is not ${contentEncoding} data, or it is cut short.`;
    return routerError(Code.InvalidArgument, "invalid_body_encoding", message, { param: "body" });
  }
  return error;
}

/** gzip and deflate fail with Z_DATA_ERROR and the like, brotli with ERR_BROTLI_... or ERR__ERROR_FORMAT_... */
function isZlibError(error: Error): boolean {
  const { code, errno } = error as { code?: unknown; errno?: unknown };
  return typeof errno === "number" && typeof code === "string" && (code.startsWith("Z_") || code.startsWith("ERR_"));
}
