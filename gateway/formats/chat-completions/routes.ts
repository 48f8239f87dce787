// POST /api/v1/chat/completions: decode, run on the core, encode as JSON or SSE.
import { bearerKey } from "../../credentials.ts";
import { foldAnswer, startCall } from "../../start-call.ts";
import { writeEventStream } from "../../write-event-stream.ts";
import { takeBody, type FormatDeps, type FormatRoutes, type GatewayFormat } from "../format.ts";
import { answerVideoBody } from "../videos/chat-video.ts";
import { decodeChatRequest } from "./decode-request.ts";
import { encodeChatError } from "./encode-error.ts";
import { encodeChatCompletion } from "./encode-response.ts";
import { createChunkEncoder } from "./encode-stream.ts";

export const chatCompletions: GatewayFormat = { encodeError: encodeChatError, register: registerChatCompletionRoutes };

function registerChatCompletionRoutes(router: FormatRoutes, { core }: FormatDeps) {
  router.post("/api/v1/chat/completions", async (ctx) => {
    const apiKey = bearerKey(ctx.req.headers);
    // A video model with the video request body makes a video task (videos/chat-video.ts).
    if (await answerVideoBody(ctx, core, apiKey)) return;
    const cacheKey = ctx.get("cache_key") || undefined;
    const { request, stream } = decodeChatRequest(takeBody(ctx), { apiKey, requestId: ctx.state.requestId, cacheKey });
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
