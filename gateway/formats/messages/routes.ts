// The Messages API (Anthropic's wire format) on every model: POST /v1/messages
// and its /api/v1 alias decode, run on the core and answer the Message object
// as JSON or as Anthropic's event stream; count_tokens counts without running.
// GET /v1/models answers the catalogue in Anthropic's shape (models.ts).
// Errors come in this format's envelope (encode-error.ts).
import { messagesKey } from "../../credentials.ts";
import { cacheKeyOf } from "../../router-fields.ts";
import { foldAnswer, startCall } from "../../start-call.ts";
import { writeEventStream } from "../../write-event-stream.ts";
import { takeBody, type FormatDeps, type FormatRoutes, type GatewayFormat } from "../format.ts";
import { decodeMessagesRequest, type DecodeContext } from "./decode-request.ts";
import { messagesErrorBody } from "./encode-error.ts";
import { encodeMessage } from "./encode-response.ts";
import { createMessageStreamEncoder } from "./encode-stream.ts";
import { registerModelRoutes } from "./models.ts";
import type { Context } from "koa";

export const messages: GatewayFormat = { encodeError: messagesErrorBody, requestIdHeader: "request-id", register: registerMessagesRoutes };

/** Both paths the spec names for each endpoint. */
const PREFIXES = ["/v1", "/api/v1"];

function registerMessagesRoutes(router: FormatRoutes, deps: FormatDeps) {
  const { core } = deps;
  // Anthropic's shape at /v1 only: /api/v1/models is the spec's catalogue (formats/catalogue).
  registerModelRoutes(router, deps);
  for (const prefix of PREFIXES) {
    router.post(`${prefix}/messages`, async (ctx) => {
      const { request, stream } = decodeMessagesRequest(takeBody(ctx), decodeContext(ctx));
      ctx.state.requestTags = request.requestTags;
      const call = await startCall(ctx, core, request);
      if (!stream) {
        ctx.body = encodeMessage(await foldAnswer(ctx, call));
        return;
      }
      writeEventStream(ctx, call, createMessageStreamEncoder(call.start));
    });

    router.post(`${prefix}/messages/count_tokens`, async (ctx) => {
      const { request } = decodeMessagesRequest(takeBody(ctx), decodeContext(ctx), true);
      const counted = await core.inference.countTokens({ request });
      ctx.body = { input_tokens: counted.inputTokens, exact: counted.exact };
    });
  }
}

function decodeContext(ctx: Context): DecodeContext {
  return { apiKey: messagesKey(ctx.req.headers), requestId: ctx.state.requestId, cacheKey: cacheKeyOf(ctx.req.headers), betas: betasOf(ctx.req.headers["anthropic-beta"]) };
}

/** `anthropic-beta: a,b` (one header or several) as its values. */
function betasOf(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  return (Array.isArray(header) ? header : [header]).flatMap((value) => value.split(",")).map((value) => value.trim()).filter(Boolean);
}

