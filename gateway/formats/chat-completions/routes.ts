// POST /api/v1/chat/completions: decode, run on the core, encode as JSON or SSE.
import { bearerKey } from "../../credentials.ts";
import { cacheKeyOf } from "../../router-fields.ts";
import { foldAnswer, startCall } from "../../start-call.ts";
import { writeEventStream } from "../../write-event-stream.ts";
import type { Context } from "koa";
import type { CoreClient } from "../../core-client.ts";
import { takeBody, type FormatDeps, type FormatRoutes, type GatewayFormat } from "../format.ts";
import { decodeChatRequest } from "./decode-request.ts";
import { encodeChatError } from "./encode-error.ts";
import { encodeChatCompletion } from "./encode-response.ts";
import { createChunkEncoder } from "./encode-stream.ts";

/** Another format's answer to a body this path also takes; true when it answered. */
export type OtherBody = (ctx: Context, core: CoreClient, apiKey: string) => Promise<boolean>;

/**
 * Chat completions. `otherBody` answers first the bodies another format owns at this path (the
 * spec's video request body: index.ts gives it the videos format's `answerVideoBody`), so no
 * format imports another.
 */
export const chatCompletionsWith = (otherBody: OtherBody): GatewayFormat => ({
  encodeError: encodeChatError,
  register: (router, deps) => registerChatCompletionRoutes(router, deps, otherBody),
});

function registerChatCompletionRoutes(router: FormatRoutes, { core }: FormatDeps, otherBody: OtherBody) {
  router.post("/api/v1/chat/completions", async (ctx) => {
    const apiKey = bearerKey(ctx.req.headers);
    // A video model with the video request body makes a video task (videos/chat-video.ts).
    if (await otherBody(ctx, core, apiKey)) return;
    const { request, stream } = decodeChatRequest(takeBody(ctx), { apiKey, requestId: ctx.state.requestId, cacheKey: cacheKeyOf(ctx.req.headers) });
    ctx.state.requestTags = request.requestTags;
    // Until the first event, a failure throws from here and becomes an HTTP error.
    const call = await startCall(ctx, core, request);
    if (!stream) {
      ctx.body = encodeChatCompletion(await foldAnswer(ctx, call));
      return;
    }
    writeEventStream(ctx, call, createChunkEncoder(call.start));
  });
}
