// The Interactions API (Google's, as the @google/genai SDK calls it) on every
// model: POST /v1/interactions decodes, runs on the core and answers the
// Interaction resource as JSON or as Google's event stream; GET and DELETE
// read and forget the stored turn through the core's ConversationService.
// Every path also at /api/v1. The key comes as `x-goog-api-key` or Bearer.
import type { Context } from "koa";
import { invalidParameter } from "../../../core/errors.ts";
import { googleKey } from "../../credentials.ts";
import { foldAnswer, startCall } from "../../start-call.ts";
import { writeEventStream } from "../../write-event-stream.ts";
import { takeBody, type FormatDeps, type FormatRoutes, type GatewayFormat } from "../format.ts";
import { decodeInteractionsRequest } from "./decode-request.ts";
import { encodeInteractionsError } from "./encode-error.ts";
import { encodeFoldedInteraction } from "./encode-response.ts";
import { createInteractionStreamEncoder } from "./encode-stream.ts";
import { encodeStoredInteraction } from "./stored-interaction.ts";
import { answerVideoInteraction, asksForVideo, refuseVideoDeleteInstead, videoInteractionInstead, videoModelInstead } from "./video-interaction.ts";

export const interactions: GatewayFormat = { encodeError: encodeInteractionsError, register: registerInteractionsRoutes };

/** Both paths the spec names for each endpoint. */
const PREFIXES = ["/v1", "/api/v1"];

const now = () => new Date();

function registerInteractionsRoutes(router: FormatRoutes, { core }: FormatDeps) {
  for (const prefix of PREFIXES) {
    router.post(`${prefix}/interactions`, async (ctx) => {
      const body = takeBody(ctx);
      // A video is made by the media task system, not the hub (video-interaction.ts).
      if (asksForVideo(body)) return answerVideoInteraction(ctx, core, body);
      const { request, stream, previousInteractionId } = decodeInteractionsRequest(body, { apiKey: googleKey(ctx.req.headers), requestId: ctx.state.requestId });
      ctx.state.requestTags = request.requestTags;
      const call = await startCall(ctx, core, request).catch((error: unknown) => videoModelInstead(error, ctx, core, body));
      if (!call) return; // a video model's: answered as a video interaction
      if (!stream) {
        ctx.body = encodeFoldedInteraction(await foldAnswer(ctx, call), previousInteractionId, now());
        return;
      }
      writeEventStream(ctx, call, createInteractionStreamEncoder(call.start, previousInteractionId, now));
    });

    router.get(`${prefix}/interactions/:id`, async (ctx) => {
      const includeInput = booleanQuery(ctx, "include_input") ?? false;
      if (booleanQuery(ctx, "stream")) throw invalidParameter("stream", "Streaming a stored interaction (GET with stream=true) is not served yet; GET it without stream.");
      if (ctx.query.last_event_id !== undefined) throw invalidParameter("last_event_id", "Resuming a stream (last_event_id) is not served yet.");
      let turn;
      try {
        ({ turn } = await core.conversations.getTurn({ caller: { apiKey: googleKey(ctx.req.headers) }, id: ctx.params.id }));
      } catch (error) {
        // No stored turn: the id may be a video interaction's task; else the turn's 404.
        ctx.body = await videoInteractionInstead(error, ctx, core, includeInput);
        return;
      }
      ctx.body = encodeStoredInteraction(turn!, includeInput);
    });

    router.delete(`${prefix}/interactions/:id`, async (ctx) => {
      const { id } = await core.conversations
        .deleteTurn({ caller: { apiKey: googleKey(ctx.req.headers) }, id: ctx.params.id })
        .catch((error: unknown) => refuseVideoDeleteInstead(error, ctx, core));
      ctx.body = { id, object: "interaction", deleted: true };
    });
  }
}

/** A `true`/`false` query parameter, given at most once. */
function booleanQuery(ctx: Context, name: string): boolean | undefined {
  const value = ctx.query[name];
  if (value === undefined) return undefined;
  if (value === "true") return true;
  if (value === "false") return false;
  throw invalidParameter(name, `Query parameter ${name} must be true or false, given once.`);
}
