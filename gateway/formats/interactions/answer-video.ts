// How a video interaction's create answers while its task runs, keeping the
// connection alive: as JSON, a plain answer when the task ends within one
// keep-alive (a failure then is a real HTTP error), else the 200 at once and a
// newline every keep-alive before the resource (JSON allows whitespace before
// a value); as a stream, the event stream at once, with a status update every
// keep-alive (encode-video-stream.ts).
import type { Context } from "koa";
import { callerWentAway, Code, routerError } from "../../../core/errors.ts";
import { TaskStatus, type Task } from "../../../gen/router/v1/tasks_pb.js";
import { toPublicError } from "../../errors/http-status.ts";
import { createSseWriter, type SseWriter } from "../../sse.ts";
import { hasEnded, TASK_WAIT } from "./await-task.ts";
import { encodeVideoInteraction, videoContentsOf, videoFailure, type VideoSource } from "./encode-video.ts";
import { createVideoStreamFrames } from "./encode-video-stream.ts";
import { keptAlive, within } from "./kept-alive-json.ts";

/** The JSON answer: `ended` is the wait for the task (await-task.ts), `signal` aborted when the client left. */
export async function answerVideoJson(ctx: Context, task: Task, ended: Promise<Task>, source: VideoSource, signal: AbortSignal): Promise<void> {
  const soon = await within(ended, TASK_WAIT.keepAliveMs);
  if (soon) {
    if (signal.aborted) throw callerWentAway();
    if (soon.status === TaskStatus.FAILED || soon.status === TaskStatus.EXPIRED) throw videoFailure(soon);
    ctx.body = encodeVideoInteraction(soon, await videoContentsOf(soon, source));
    return;
  }
  // Still running: the 200 now, so that no proxy or client gives up on a silent connection.
  ctx.state.eventStream = keptAlive(ctx, async () => {
    // A wait that broke off (the core out of reach) answers the interaction as created, in progress: GET tells the rest.
    const last = await ended.catch(() => task);
    // A hosted copy that cannot be read inline is given by its URL: the 200 is sent, no error can replace it.
    const contents = await videoContentsOf(last, source).catch(() => videoContentsOf(last, { ...source, delivery: "uri" }));
    return encodeVideoInteraction(last, contents);
  });
}

// ---- the stream ----

/** The event stream, committed at once; it ends when the wait does (the route returns first, as text streams do). */
export function streamVideoInteraction(ctx: Context, task: Task, ended: Promise<Task>, source: VideoSource): void {
  const frames = createVideoStreamFrames(task);
  const sse = createSseWriter(ctx.res);
  const committed = sse.commit({ "x-request-id": ctx.state.requestId }, frames.opening());
  ctx.respond = false;
  ctx.state.eventStream = relayVideo(sse, committed, frames, ended, source);
}

async function relayVideo(sse: SseWriter, committed: Promise<void> | undefined, frames: ReturnType<typeof createVideoStreamFrames>, ended: Promise<Task>, source: VideoSource) {
  const alive = setInterval(() => void sse.send(frames.alive()), TASK_WAIT.keepAliveMs);
  try {
    if (committed) await committed;
    const last = await ended;
    if (last.status === TaskStatus.SUCCEEDED) await sse.send(frames.completed(last, await videoContentsOf(last, source)));
    else await sse.send(frames.failed(toPublicError(hasEnded(last) ? videoFailure(last) : notReadyYet(last))));
  } catch (error) {
    await sse.send(frames.failed(toPublicError(error)));
  } finally {
    clearInterval(alive);
    sse.end();
  }
}

/** A stream whose wait gave up (TASK_WAIT.maxWaitMs) while the video is still being made. */
const notReadyYet = (task: Task) =>
  routerError(Code.DeadlineExceeded, "timeout", `The video is not ready yet; it goes on: GET /v1/interactions/${task.id} until its status is completed.`, { metadata: { interaction_id: task.id } });
