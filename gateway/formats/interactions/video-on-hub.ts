// A video interaction on a model whose routes run no video tasks but speak a
// chat protocol that makes videos (Veo on gemini-interactions): the core's
// task system refuses it (NO_MEDIA_ROUTE) and the hub serves it, the request
// decoded as a text interaction's with MediaOptions.video (aspect ratio,
// resolution) in place of response_format. The video comes inline (`data`,
// `mime_type`) whatever `delivery` says: the hub carries the bytes and hosts
// no copy. The wait is kept alive: a stream repeats its status update until
// the video's step starts (encode-stream.ts's keepAlive); a JSON answer sends
// its 200 and newlines (kept-alive-json.ts), every TASK_WAIT.keepAliveMs.
import { create } from "@bufbuild/protobuf";
import type { Context } from "koa";
import { MediaOptionsSchema, type ResponseStart } from "../../../gen/router/v1/inference_pb.js";
import type { CoreClient } from "../../core-client.ts";
import { googleKey } from "../../credentials.ts";
import { toPublicError } from "../../errors/http-status.ts";
import { foldAnswer, startCall } from "../../start-call.ts";
import { writeEventStream } from "../../write-event-stream.ts";
import { TASK_WAIT } from "./await-task.ts";
import { decodeInteractionsRequest } from "./decode-request.ts";
import { unknownModelIsInvalid } from "./encode-error.ts";
import { encodeFoldedInteraction, encodeInteraction } from "./encode-response.ts";
import { createInteractionStreamEncoder } from "./encode-stream.ts";
import { answerJsonKeptAlive } from "./kept-alive-json.ts";

export interface HubVideo {
  aspectRatio: string;
  resolution: string;
}

const now = () => new Date();

/** `body` as the video decoder checked it (video-request.ts): its fields are a text interaction's but `response_format`. */
export async function answerVideoOnHub(ctx: Context, core: CoreClient, body: object, video: HubVideo, stream: boolean): Promise<void> {
  const { response_format: _format, ...rest } = body as Record<string, unknown>;
  const { request, previousInteractionId } = decodeInteractionsRequest(rest, { apiKey: googleKey(ctx.req.headers), requestId: ctx.state.requestId });
  request.media = create(MediaOptionsSchema, { video });
  ctx.state.requestTags = request.requestTags;
  // A client that leaves has it cancelled upstream, kept or not: a stored turn keeps no video, so it could never be fetched.
  const call = await startCall(ctx, core, request).catch(unknownModelIsInvalid);
  if (stream) {
    writeEventStream(ctx, call, createInteractionStreamEncoder(call.start, { previousInteractionId, now }), { keepAliveMs: TASK_WAIT.keepAliveMs });
    return;
  }
  const answer = foldAnswer(ctx, call).then((folded) => encodeFoldedInteraction(folded, previousInteractionId, now()));
  await answerJsonKeptAlive(ctx, answer, (error) => failedInteraction(call.start, previousInteractionId, error));
}

/** After the 200 no error body can follow: the interaction `failed`, with Google's `errors`. */
function failedInteraction(start: ResponseStart, previousInteractionId: string | undefined, error: unknown) {
  const { code, message } = toPublicError(error);
  const head = { id: start.id, model: start.model, created: new Date(Number(start.created) * 1000), updated: now(), previousInteractionId, status: "failed", errors: [{ code, message }] };
  return encodeInteraction(head, [], undefined, start.id);
}
