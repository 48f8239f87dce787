// The Interactions API (Google's, as the @google/genai SDK calls it) on every
// model: POST /v1/interactions decodes, runs on the core and answers the
// Interaction resource as JSON or as Google's event stream, or, with
// `background: true`, has the core run it and answers it in progress. A stored
// interaction runs to its end even when its client leaves, so GET finds it.
// GET (as JSON, or as its event stream again, resumable by `last_event_id`),
// DELETE and cancel go through the core's ConversationService. Every path
// also at /api/v1. The key comes as `x-goog-api-key` or Bearer.
import type { Context } from "koa";
import { invalidParameter } from "../../../core/errors.ts";
import type { Turn } from "../../../gen/router/v1/conversations_pb.js";
import { googleKey } from "../../credentials.ts";
import { toPublicError } from "../../errors/http-status.ts";
import { createSseWriter } from "../../sse.ts";
import { foldAnswer, startCall } from "../../start-call.ts";
import { writeEventStream } from "../../write-event-stream.ts";
import { queryString } from "../../formats/shared/query.ts";
import { takeBody, type FormatDeps, type FormatRoutes, type GatewayFormat } from "../format.ts";
import { decodeInteractionsRequest } from "./decode-request.ts";
import { encodeInteractionsError, errorOf, unknownModelIsInvalid } from "./encode-error.ts";
import { encodeFoldedInteraction } from "./encode-response.ts";
import { createInteractionStreamEncoder } from "./encode-stream.ts";
import { parseEventId } from "./event-position.ts";
import { replayInteraction, type ReplayOptions } from "./replay-stream.ts";
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
      const { request, stream, background, previousInteractionId } = decodeInteractionsRequest(body, { apiKey: googleKey(ctx.req.headers), requestId: ctx.state.requestId });
      ctx.state.requestTags = request.requestTags;
      if (background) {
        const { turn } = await core.conversations.generateInBackground({ request }).catch(unknownModelIsInvalid);
        ctx.body = encodeStoredInteraction(turn!, false);
        return;
      }
      const call = await startCall(ctx, core, request, { finishWhenClientLeaves: request.store !== false }).catch((error: unknown) => videoModelInstead(error, ctx, core, body));
      if (!call) return; // a video model's: answered as a video interaction
      if (!stream) {
        ctx.body = encodeFoldedInteraction(await foldAnswer(ctx, call), previousInteractionId, now());
        return;
      }
      writeEventStream(ctx, call, createInteractionStreamEncoder(call.start, { previousInteractionId, now }));
    });

    router.get(`${prefix}/interactions/:id`, async (ctx) => {
      const includeInput = booleanQuery(ctx, "include_input") ?? false;
      const stream = booleanQuery(ctx, "stream") ?? false;
      const lastEventId = queryString(ctx.query.last_event_id, "last_event_id");
      if (lastEventId !== undefined && !stream) throw invalidParameter("last_event_id", "last_event_id resumes a stream: it needs stream=true.");
      const resumeAfter = lastEventId === undefined ? undefined : parseEventId(lastEventId);
      const read = { caller: { apiKey: googleKey(ctx.req.headers) }, id: ctx.params.id };
      let turn;
      try {
        ({ turn } = await core.conversations.getTurn(read));
      } catch (error) {
        // No stored turn: the id may be a video interaction's task; else the turn's 404.
        const video = await videoInteractionInstead(error, ctx, core, includeInput);
        if (stream) throw invalidParameter("stream", "A video interaction is read without stream: GET it as JSON.");
        ctx.body = video;
        return;
      }
      if (!stream) {
        ctx.body = encodeStoredInteraction(turn!, includeInput);
        return;
      }
      writeReplay(ctx, turn!, { reload: async () => (await core.conversations.getTurn(read)).turn!, resumeAfter });
    });

    router.delete(`${prefix}/interactions/:id`, async (ctx) => {
      const { id } = await core.conversations
        .deleteTurn({ caller: { apiKey: googleKey(ctx.req.headers) }, id: ctx.params.id })
        .catch((error: unknown) => refuseVideoDeleteInstead(error, ctx, core));
      ctx.body = { id, object: "interaction", deleted: true };
    });

    router.post(`${prefix}/interactions/:id/cancel`, async (ctx) => {
      const { turn } = await core.conversations.cancelTurn({ caller: { apiKey: googleKey(ctx.req.headers) }, id: ctx.params.id });
      ctx.body = encodeStoredInteraction(turn!, false);
    });
  }
}

/** How often a stream of a background interaction still running reads it again (and repeats its status). */
const REPLAY_POLL_MS = 1_000;

/** The stored interaction's event stream, written once its head is sent; a client that leaves ends the wait. */
function writeReplay(ctx: Context, turn: Turn, options: Pick<ReplayOptions, "reload" | "resumeAfter">) {
  const sse = createSseWriter(ctx.res);
  const left = new AbortController();
  ctx.res.once("close", () => left.abort());
  sse.commit({ "x-request-id": ctx.state.requestId });
  ctx.respond = false;
  ctx.state.eventStream = replayInteraction(turn, sse, { ...options, pollMs: REPLAY_POLL_MS, signal: left.signal })
    .catch(async (error: unknown) => {
      if (left.signal.aborted) return;
      ctx.state.streamError = error;
      await sse.send([{ data: JSON.stringify({ event_type: "error", error: errorOf(toPublicError(error)), event_id: "error" }) }]);
    })
    .finally(() => sse.end());
}

/** A `true`/`false` query parameter, given at most once. */
function booleanQuery(ctx: Context, name: string): boolean | undefined {
  const value = queryString(ctx.query[name], name);
  if (value === undefined) return undefined;
  if (value === "true") return true;
  if (value === "false") return false;
  throw invalidParameter(name, `Query parameter ${name} must be true or false.`);
}
