// POST /api/v1/chat/completions: decode, run on the core, encode as JSON or SSE.
import type Router from "@koa/router";
import type { Context } from "koa";
import type { CoreClient } from "../../core-client.ts";
import { bearerKey } from "../../credentials.ts";
import { toPublicError } from "../../errors/http-status.ts";
import { foldEvents } from "../../fold.ts";
import { createSseWriter } from "../../sse.ts";
import { routingHeaders, startCall, type StartedCall } from "../../start-call.ts";
import { decodeChatRequest } from "./decode-request.ts";
import { encodeChatCompletion } from "./encode-response.ts";
import { encodeChatStreamError } from "./encode-error.ts";
import { createChunkEncoder } from "./encode-stream.ts";

export function registerChatCompletionRoutes(router: Router, core: CoreClient) {
  router.post("/api/v1/chat/completions", async (ctx) => {
    const apiKey = bearerKey(ctx.req.headers);
    const cacheKey = ctx.get("cache_key") || undefined;
    const { request, stream } = decodeChatRequest(ctx.request.body, { apiKey, requestId: ctx.state.requestId, cacheKey });
    ctx.state.requestTags = request.requestTags;
    // Until the first event, a failure throws from here and becomes an HTTP error.
    const call = await startCall(ctx, core, request);
    if (!stream) {
      const folded = await foldEvents(call.start, call.rest);
      ctx.set(routingHeaders(folded.start));
      ctx.body = encodeChatCompletion(folded);
      return;
    }
    await writeChatStream(ctx, call);
  });
}

async function writeChatStream(ctx: Context, call: StartedCall) {
  const { start, first, rest } = call;
  ctx.respond = false;
  const sse = createSseWriter(ctx.res);
  sse.commit({ "x-request-id": ctx.state.requestId, ...routingHeaders(start) });
  // A failure from here on is logged with the provider that was serving.
  ctx.state.provider = start.provider;
  const encoder = createChunkEncoder(start);
  try {
    await sse.send(encoder.encode(first));
    for (let step = await rest.next(); !step.done; step = await rest.next()) {
      await sse.send(encoder.encode(step.value));
    }
    await sse.send([{ data: "[DONE]" }]);
  } catch (error) {
    // After commit, errors travel in-band; a vanished client needs nothing.
    if (!call.signal.aborted) {
      ctx.state.streamError = error;
      await sse.send([{ data: encodeChatStreamError(toPublicError(error)) }]);
    }
  } finally {
    sse.end();
  }
}
