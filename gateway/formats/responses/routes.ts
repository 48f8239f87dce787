// The Responses API: POST /api/v1/responses decodes, runs on the core and
// answers the Response object as JSON or as OpenAI's event stream, or, with
// `background: true`, has the core run it and answers it queued. The stored
// answers are read, listed, deleted and cancelled through the core's
// ConversationService.
import { invalidParameter } from "../../../core/errors.ts";
import { cacheKeyOf } from "../../router-fields.ts";
import { ITEMS_LIMIT_DEFAULT, ITEMS_LIMIT_MAX } from "../../../wire/limits.ts";
import { ListOrder } from "../../../gen/router/v1/conversations_pb.js";
import { bearerKey } from "../../credentials.ts";
import { foldAnswer, startCall } from "../../start-call.ts";
import { writeEventStream } from "../../write-event-stream.ts";
import { queryString } from "../../formats/shared/query.ts";
import { takeBody, type FormatDeps, type FormatRoutes, type GatewayFormat } from "../format.ts";
import { decodeResponsesRequest } from "./decode-request.ts";
import { encodeResponsesError } from "./encode-error.ts";
import { encodeResponse, unixSeconds } from "./encode-response.ts";
import { createResponseStreamEncoder } from "./encode-stream.ts";
import { listInputItems } from "./input-items.ts";
import { encodeStoredResponse } from "./stored-response.ts";

export const responses: GatewayFormat = { encodeError: encodeResponsesError, register: registerResponsesRoutes };

function registerResponsesRoutes(router: FormatRoutes, { core }: FormatDeps) {
  router.post("/api/v1/responses", async (ctx) => {
    const apiKey = bearerKey(ctx.req.headers);
    const { request, stream, background, echo } = decodeResponsesRequest(takeBody(ctx), { apiKey, requestId: ctx.state.requestId, cacheKey: cacheKeyOf(ctx.req.headers) });
    ctx.state.requestTags = request.requestTags;
    if (background) {
      const { turn } = await core.conversations.generateInBackground({ request });
      ctx.body = encodeStoredResponse(turn!);
      return;
    }
    const call = await startCall(ctx, core, request);
    if (!stream) {
      ctx.body = encodeResponse(await foldAnswer(ctx, call), echo, unixSeconds());
      return;
    }
    writeEventStream(ctx, call, createResponseStreamEncoder(call.start, echo));
  });

  router.get("/api/v1/responses/:id", async (ctx) => {
    const { turn } = await core.conversations.getTurn({ caller: { apiKey: bearerKey(ctx.req.headers) }, id: ctx.params.id });
    ctx.body = encodeStoredResponse(turn!);
  });

  router.delete("/api/v1/responses/:id", async (ctx) => {
    const { id } = await core.conversations.deleteTurn({ caller: { apiKey: bearerKey(ctx.req.headers) }, id: ctx.params.id });
    ctx.body = { id, object: "response", deleted: true };
  });

  router.post("/api/v1/responses/:id/cancel", async (ctx) => {
    const { turn } = await core.conversations.cancelTurn({ caller: { apiKey: bearerKey(ctx.req.headers) }, id: ctx.params.id });
    ctx.body = encodeStoredResponse(turn!);
  });

  router.get("/api/v1/responses/:id/input_items", async (ctx) => {
    ctx.body = await listInputItems(core, {
      apiKey: bearerKey(ctx.req.headers),
      responseId: ctx.params.id,
      after: queryString(ctx.query.after, "after"),
      limit: queryLimit(queryString(ctx.query.limit, "limit")),
      order: queryOrder(queryString(ctx.query.order, "order")),
    });
  });
}

/** OpenAI's default when absent; 1 to ITEMS_LIMIT_MAX. */
function queryLimit(value: string | undefined): number {
  if (value === undefined) return ITEMS_LIMIT_DEFAULT;
  const limit = /^\d{1,3}$/.test(value) ? Number(value) : 0;
  if (limit < 1 || limit > ITEMS_LIMIT_MAX) throw invalidParameter("limit", `limit must be an integer between 1 and ${ITEMS_LIMIT_MAX}.`);
  return limit;
}

function queryOrder(value: string | undefined): ListOrder {
  if (value === undefined) return ListOrder.UNSPECIFIED;
  if (value === "asc") return ListOrder.ASC;
  if (value === "desc") return ListOrder.DESC;
  throw invalidParameter("order", "order must be asc or desc.");
}
