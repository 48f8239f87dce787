// Video interactions, served by the media task system (docs/interactions.md,
// "Video"): the create makes a video task (CreateVideo), waits for it
// (await-task.ts) and answers the interaction with its video, keeping the
// connection alive meanwhile: as JSON, the 200 and then a newline every
// keep-alive before the resource (JSON allows leading whitespace), once the
// wait outlasts one keep-alive (a task that fails sooner is still a real
// HTTP error); as a stream, the event stream at once. The interaction's id is
// the task's, so GET /v1/interactions/{id} reads the task back as the
// interaction when no stored turn has that id.
import { PassThrough } from "node:stream";
import type { Context } from "koa";
import { ambiguousModel, callerWentAway, Code, ConnectError, errorDetailOf, routerError } from "../../../core/errors.ts";
import { TaskKind, TaskStatus, type Task } from "../../../gen/router/v1/tasks_pb.js";
import { modelOfBareName, parseModelReference } from "../../../wire/model-name.ts";
import type { CoreClient } from "../../core-client.ts";
import { googleKey } from "../../credentials.ts";
import { toPublicError } from "../../errors/http-status.ts";
import { createSseWriter, type SseWriter } from "../../sse.ts";
import { unlessNotFound } from "../../formats/shared/unless-not-found.ts";
import { originOf } from "../origin.ts";
import { awaitTask, hasEnded, TASK_WAIT } from "./await-task.ts";
import { unknownModelIsInvalid } from "./encode-error.ts";
import { encodeVideoInteraction, videoContentsOf, videoFailure, type VideoSource } from "./encode-video.ts";
import { createVideoStreamFrames } from "./encode-video-stream.ts";
import { videoEchoOf } from "./video-echo.ts";
import { decodeVideoInteraction } from "./video-request.ts";

export { asksForVideo } from "./video-request.ts";

/** POST /v1/interactions asking for a video. */
export async function answerVideoInteraction(ctx: Context, core: CoreClient, body: unknown): Promise<void> {
  const apiKey = googleKey(ctx.req.headers);
  const origin = originOf(ctx);
  const { request, stream, delivery } = decodeVideoInteraction(body, { apiKey, idempotencyKey: ctx.get("idempotency-key"), origin });
  request.model = await catalogueIdOf(core, request.model);
  const { task } = await core.tasks.createVideo(request).catch(inInteractionTerms);
  const source: VideoSource = { core, apiKey, origin, delivery };
  const signal = abortWhenClientLeaves(ctx);
  // The task goes on in the core whoever waits: a client that leaves stops only this wait.
  const ended = awaitTask(core, apiKey, task!, signal);
  // Awaited by the answer below, possibly after it failed: not an unhandled rejection meanwhile.
  ended.catch(() => {});
  if (stream) streamVideoInteraction(ctx, task!, ended, source);
  else await answerVideoJson(ctx, task!, ended, source, signal);
}

/**
 * A text interaction the hub refused by its model (`error`) when that model
 * makes videos: answered as a video interaction after all, as the spec has it
 * ("for video models a string prompt generates video"); any other refusal is
 * thrown as the text interactions answer it. Asked only on that refusal, so
 * a text request costs no catalogue read. Undefined once answered.
 */
export async function videoModelInstead(error: unknown, ctx: Context, core: CoreClient, body: unknown): Promise<undefined> {
  const model = typeof body === "object" && body !== null ? (body as { model?: unknown }).model : undefined;
  const refusedModel = error instanceof ConnectError && error.code === Code.InvalidArgument && errorDetailOf(error)?.param === "model";
  if (!refusedModel || typeof model !== "string" || !(await makesVideo(core, model))) return unknownModelIsInvalid(error);
  await answerVideoInteraction(ctx, core, body);
  return undefined;
}

/**
 * GET of an id no stored turn has (`error`, the turn's 404): the video
 * interaction whose task has that id, with the delivery its create asked for.
 * Any other id (another organisation's task, a task no interaction made) gets
 * the turn's 404 as it was.
 */
export async function videoInteractionInstead(error: unknown, ctx: Context, core: CoreClient, includeInput: boolean) {
  const apiKey = googleKey(ctx.req.headers);
  const { task, delivery } = await videoInteractionTask(error, core, apiKey, ctx.params.id);
  return encodeVideoInteraction(task, await videoContentsOf(task, { core, apiKey, origin: originOf(ctx), delivery }), includeInput);
}

/**
 * DELETE of a video interaction's id: refused, as the video is its task's,
 * kept (and its hosted copy served) until the task's retention passes; the
 * task system deletes no task before. Any other id gets the turn's 404.
 */
export async function refuseVideoDeleteInstead(error: unknown, ctx: Context, core: CoreClient): Promise<never> {
  const { task } = await videoInteractionTask(error, core, googleKey(ctx.req.headers), ctx.params.id);
  throw routerError(
    Code.FailedPrecondition,
    "video_interaction_not_deletable",
    `Interaction ${task.id} is a video: it is kept with its video task until the task's retention passes (tasks.retention_seconds), and cannot be deleted before.`,
    { param: "id" },
  );
}

async function videoInteractionTask(error: unknown, core: CoreClient, apiKey: string, id: string) {
  if (!(error instanceof ConnectError) || error.code !== Code.NotFound) throw error;
  const task = (await unlessNotFound(core.tasks.getTask({ caller: { apiKey }, id }), undefined))?.task;
  const echo = task?.kind === TaskKind.VIDEO ? videoEchoOf(task.storedEcho) : undefined;
  if (!task || !echo) throw error;
  return { task, delivery: echo.delivery };
}

// ---- the JSON answer ----

async function answerVideoJson(ctx: Context, task: Task, ended: Promise<Task>, source: VideoSource, signal: AbortSignal): Promise<void> {
  const soon = await within(ended, TASK_WAIT.keepAliveMs);
  if (soon) {
    if (signal.aborted) throw callerWentAway();
    if (soon.status === TaskStatus.FAILED || soon.status === TaskStatus.EXPIRED) throw videoFailure(soon);
    ctx.body = encodeVideoInteraction(soon, await videoContentsOf(soon, source));
    return;
  }
  // Still running: the 200 now, so that no proxy or client gives up on a silent connection.
  const body = new PassThrough();
  // Koa destroys the body when the client leaves; nothing is left to tell then.
  body.on("error", () => {});
  ctx.status = 200;
  ctx.type = "application/json";
  ctx.body = body;
  body.write("\n");
  ctx.state.eventStream = finishVideoJson(body, task, ended, source);
}

async function finishVideoJson(body: PassThrough, task: Task, ended: Promise<Task>, source: VideoSource): Promise<void> {
  const alive = setInterval(() => void (body.destroyed || body.write("\n")), TASK_WAIT.keepAliveMs);
  try {
    // A wait that broke off (the core out of reach) answers the interaction as created, in progress: GET tells the rest.
    const last = await ended.catch(() => task);
    if (body.destroyed) return;
    // A hosted copy that cannot be read inline is given by its URL: the 200 is sent, no error can replace it.
    const contents = await videoContentsOf(last, source).catch(() => videoContentsOf(last, { ...source, delivery: "uri" }));
    if (!body.destroyed) body.end(JSON.stringify(encodeVideoInteraction(last, contents)));
  } finally {
    clearInterval(alive);
  }
}

/** The promise's value if it settles within `ms` (its rejection thrown), else undefined. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// ---- the stream ----

function streamVideoInteraction(ctx: Context, task: Task, ended: Promise<Task>, source: VideoSource): void {
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

// ---- the request ----

/** The catalogue id a bare model name stands for (the format takes bare names); an id with its provider as it is. */
async function catalogueIdOf(core: CoreClient, model: string): Promise<string> {
  if (model.includes("/")) return model;
  const reference = parseModelReference(model, () => false);
  const { models } = await core.catalogue.listModels({});
  const found = modelOfBareName(models, (candidate) => candidate.id, reference.baseId, (ids) => ambiguousModel(reference.baseId, ids, "model"));
  return found ? found.id + (reference.suffix ? `:${reference.suffix}` : "") : model;
}

/** Whether the model (a bare name too) is in the catalogue and makes videos. */
async function makesVideo(core: CoreClient, model: string): Promise<boolean> {
  const id = await catalogueIdOf(core, model).catch(() => model);
  const found = await unlessNotFound(core.catalogue.getModel({ id: parseModelReference(id, () => false).baseId }), undefined);
  return found?.model?.architecture?.outputModalities.includes("video") ?? false;
}

/** The task system's parameter names that the interaction spells otherwise. */
const INTERACTION_PARAMS: Record<string, string> = {
  prompt: "input",
  image: "input",
  aspectRatio: "response_format.aspect_ratio",
  resolution: "response_format.resolution",
  seed: "generation_config.seed",
};

/** A refused create named in the interaction's own terms; an unknown model a 400, as the text interactions answer it. */
function inInteractionTerms(error: unknown): never {
  const detail = error instanceof ConnectError ? errorDetailOf(error) : undefined;
  const param = detail && INTERACTION_PARAMS[detail.param];
  if (param) {
    const { code, rawMessage } = error as ConnectError;
    throw routerError(code, detail.reason, rawMessage, { param, retryAfterSeconds: detail.retryAfterSeconds, metadata: detail.metadata, cause: error });
  }
  return unknownModelIsInvalid(error);
}

/** Aborts when the response closes before it finished (the client went away), as start-call.ts's calls do. */
function abortWhenClientLeaves(ctx: Context): AbortSignal {
  const controller = new AbortController();
  ctx.res.once("close", () => {
    if (!ctx.res.writableFinished) controller.abort();
  });
  if (ctx.req.socket.destroyed) controller.abort();
  return controller.signal;
}
