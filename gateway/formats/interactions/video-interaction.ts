// Video interactions, served by the media task system (docs/interactions.md,
// "Video"): the create makes a video task (CreateVideo), waits for it
// (await-task.ts) and answers the interaction with its video (answer-video.ts).
// The interaction's id is the task's, so GET /v1/interactions/{id} reads the
// task back as the interaction when no stored turn has that id. A video model
// asked without response_format is answered here too, once the hub refused it.
// A model with no route that runs video tasks is served by the hub instead
// (video-on-hub.ts), when a chat protocol of its routes makes videos.
import type { Context } from "koa";
import { ambiguousModel, Code, ConnectError, errorDetailOf, NO_MEDIA_ROUTE, routerError } from "../../../core/errors.ts";
import { TaskKind } from "../../../gen/router/v1/tasks_pb.js";
import { modelOfBareName, parseModelReference } from "../../../wire/model-name.ts";
import type { CoreClient } from "../../core-client.ts";
import { googleKey } from "../../credentials.ts";
import { unlessNotFound } from "../../formats/shared/unless-not-found.ts";
import { originOf } from "../origin.ts";
import { answerVideoJson, streamVideoInteraction } from "./answer-video.ts";
import { awaitTask } from "./await-task.ts";
import { unknownModelIsInvalid } from "./encode-error.ts";
import { encodeVideoInteraction, videoContentsOf, type VideoSource } from "./encode-video.ts";
import { videoEchoOf } from "./video-echo.ts";
import { answerVideoOnHub } from "./video-on-hub.ts";
import { decodeVideoInteraction } from "./video-request.ts";

export { asksForVideo } from "./video-request.ts";

/** POST /v1/interactions asking for a video. */
export async function answerVideoInteraction(ctx: Context, core: CoreClient, body: unknown): Promise<void> {
  const apiKey = googleKey(ctx.req.headers);
  const origin = originOf(ctx);
  const { request, stream, delivery } = decodeVideoInteraction(body, { apiKey, idempotencyKey: ctx.get("idempotency-key"), origin });
  request.model = await catalogueIdOf(core, request.model);
  const created = await core.tasks.createVideo(request).catch((error: unknown) => {
    // A model whose routes run no video tasks may make videos through the hub (a chat protocol that does).
    if (error instanceof ConnectError && errorDetailOf(error)?.reason === NO_MEDIA_ROUTE) return undefined;
    return inInteractionTerms(error);
  });
  if (!created) return answerVideoOnHub(ctx, core, body as object, { aspectRatio: request.video!.aspectRatio, resolution: request.video!.resolution }, stream);
  const { task } = created;
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

// ---- the request ----

/** The catalogue id a bare model name stands for (the format takes bare names); an id with its provider as it is. */
async function catalogueIdOf(core: CoreClient, model: string): Promise<string> {
  if (model.includes("/")) return model;
  const reference = parseModelReference(model, () => false);
  const { models } = await core.catalogue.listModels({});
  const found = modelOfBareName(models, (candidate) => candidate.id, reference.baseId, (ids) => ambiguousModel(reference.baseId, ids, "model"));
  return found ? found.id + reference.suffixes.map((suffix) => `:${suffix}`).join("") : model;
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
