// Reads a multipart/form-data body, for the few routes whose official clients
// send one (the OpenAI SDK's videos.create); every other body goes to the JSON
// reader as before. The form is parsed by Node's own fetch implementation
// (undici's Response.formData()), after the body was read within the app's
// limit, the same as a JSON body's. docs/requests.md states the rules.
import type { IncomingMessage } from "node:http";
import type { Middleware } from "koa";
import { callerWentAway, Code, routerError } from "../core/errors.ts";
import { payloadTooLarge } from "./read-body.ts";

/**
 * `ctx.request.body` is the form's `FormData` when the request declares
 * multipart/form-data, else whatever `readJson` makes of it.
 */
export function readFormOr(readJson: Middleware, limitBytes: number): Middleware {
  return async (ctx, next) => {
    const contentType = ctx.get("content-type");
    if (!/^multipart\/form-data\s*;/i.test(contentType)) return readJson(ctx, next);
    const encoding = ctx.get("content-encoding").trim().toLowerCase();
    if (encoding !== "" && encoding !== "identity") {
      throw routerError(Code.InvalidArgument, "unsupported_content_encoding", `Content-Encoding ${JSON.stringify(encoding)} is not supported on a multipart/form-data body; send it uncompressed.`);
    }
    const bytes = await readUpTo(ctx.req, limitBytes);
    try {
      ctx.request.body = await new Response(bytes, { headers: { "content-type": contentType } }).formData();
    } catch {
      throw routerError(Code.InvalidArgument, "invalid_form", "The request body is not valid multipart/form-data (its parts or its boundary).", { param: "body" });
    }
    return next();
  };
}

/**
 * The whole body, refused (413) as soon as it passes `limit` bytes. Read by
 * events, not `for await`, which would destroy the socket before the 413 is
 * answered; the rest of a too large body is left unread, as the JSON reader does.
 */
function readUpTo(request: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      finish();
      request.pause();
      reject(payloadTooLarge());
    };
    const onEnd = () => {
      finish();
      resolve(Buffer.concat(chunks));
    };
    const onGone = () => {
      finish();
      reject(callerWentAway());
    };
    const finish = () => {
      request.off("data", onData).off("end", onEnd).off("aborted", onGone).off("error", onGone);
    };
    request.on("data", onData).on("end", onEnd).on("aborted", onGone).on("error", onGone);
  });
}
