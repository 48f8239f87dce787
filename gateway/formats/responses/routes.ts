// POST /api/v1/responses: decode, run on the core, answer the Response object
// as JSON or as OpenAI's event stream. Synchronous only (background: 400 for now).
import { bearerKey } from "../../credentials.ts";
import { foldAnswer, startCall } from "../../start-call.ts";
import { writeEventStream } from "../../write-event-stream.ts";
import type { FormatDeps, FormatRoutes, GatewayFormat } from "../format.ts";
import { decodeResponsesRequest } from "./decode-request.ts";
import { encodeResponsesError } from "./encode-error.ts";
import { encodeResponse } from "./encode-response.ts";
import { createResponseStreamEncoder } from "./encode-stream.ts";

export const responses: GatewayFormat = { encodeError: encodeResponsesError, register: registerResponsesRoutes };

function registerResponsesRoutes(router: FormatRoutes, { core }: FormatDeps) {
  router.post("/api/v1/responses", async (ctx) => {
    const apiKey = bearerKey(ctx.req.headers);
    const { request, stream, body } = decodeResponsesRequest(ctx.request.body, { apiKey, requestId: ctx.state.requestId });
    ctx.state.requestTags = request.requestTags;
    const call = await startCall(ctx, core, request);
    if (!stream) {
      ctx.body = encodeResponse(await foldAnswer(ctx, call), body);
      return;
    }
    await writeEventStream(ctx, call, createResponseStreamEncoder(call.start, body));
  });
}
