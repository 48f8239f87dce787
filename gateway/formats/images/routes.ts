// The images endpoints (spec: POST /api/v1/images/generations, GET
// /api/v1/images/{task_id}; OpenAI's POST /api/v1/images/edits) and the hosted assets of media tasks (GET
// /api/v1/assets/{task_id}/{index}, to the key or as a signed link). docs/tasks.md.
import type { Context } from "koa";
import { TaskKind, TaskStatus, type CreateImageRequest } from "../../../gen/router/v1/tasks_pb.js";
import { invalidParameter } from "../../../core/errors.ts";
import { taskOfKind } from "../../formats/shared/task-of-kind.ts";
import { bearerKey } from "../../credentials.ts";
import { specErrorBody } from "../../errors/spec-error-body.ts";
import type { FormatDeps, FormatRoutes, GatewayFormat } from "../format.ts";
import { decodeImageRequest } from "./decode-request.ts";
import { editOfForm } from "./edit-form.ts";
import { encodeSyncImages, taskTrace } from "./encode-response.ts";
import { traceHeader } from "../../headers.ts";
import { encodeImageTask } from "../../../wire/image-task.ts";
import { mediaCacheFields } from "../../formats/shared/cache-fields.ts";
import { originOf } from "../origin.ts";
import { serveAsset } from "./serve-asset.ts";
import { signedLinkOf } from "./signed-link.ts";
import { serveVideoContent } from "./video-content.ts";

/** The largest asset index a request may name: nine digits (no task has nearly so many assets). */
const MAX_ASSET_INDEX = 999_999_999;

const ENDED = new Set([TaskStatus.SUCCEEDED, TaskStatus.FAILED]);

export const images: GatewayFormat = { encodeError: specErrorBody, register: registerImageRoutes };

function registerImageRoutes(router: FormatRoutes, { core }: FormatDeps) {
  /** Creates the image task and answers it: its images once it has ended synchronously, else the task as it stands. */
  const answerCreate = async (ctx: Context, fields: unknown, uploads?: CreateImageRequest["editUploads"]) => {
    const apiKey = bearerKey(ctx.headers);
    const { request, body } = decodeImageRequest(fields, apiKey, ctx.get("idempotency-key"), originOf(ctx));
    if (uploads) request.editUploads = uploads;
    request.cacheKey = ctx.get("cache_key");
    const created = await core.tasks.createImage(request);
    const task = created.task!;
    // A synchronous provider's task has ended by now, and so may have one `response_type: sync` waited
    // for on an asynchronous provider (or a cache hit's, ended before): its images are the answer; else the task as it stands is.
    const wantsImages = body.response_type === "sync" || body.response_format === "b64_json";
    const answersImages = task.synchronous || (wantsImages && ENDED.has(task.status));
    const answer = answersImages ? await encodeSyncImages(task, body.response_format ?? "url", originOf(ctx), core, apiKey) : encodeImageTask(task, originOf(ctx));
    ctx.set("x-router-trace", traceHeader(taskTrace(task)));
    ctx.body = { ...answer, ...mediaCacheFields(request.cacheKey, created) };
  };

  router.post("/api/v1/images/generations", (ctx) => answerCreate(ctx, ctx.request.body));

  // The OpenAI SDK's images.edit: a multipart form of images, an optional mask and the generation's fields.
  router.post(
    "/api/v1/images/edits",
    async (ctx) => {
      const edit = await editOfForm(ctx.request.body);
      await answerCreate(ctx, edit.body, edit.uploads);
    },
    { form: true },
  );

  router.get("/api/v1/images/:taskId", async (ctx) => {
    const apiKey = bearerKey(ctx.headers);
    const { task } = await core.tasks.getTask({ caller: { apiKey }, id: ctx.params.taskId });
    // A video task is answered at /videos/{id} (and getAsyncResponse) only.
    ctx.body = encodeImageTask(taskOfKind(task!, TaskKind.IMAGE, ctx.params.taskId), originOf(ctx));
  });

  router.get("/api/v1/assets/:taskId/:index", async (ctx) => {
    // A signed link needs no key (docs/tasks.md, "Signed links"); without one, the caller's key.
    const link = signedLinkOf(ctx.query);
    const access = link ? { link } : { caller: { apiKey: bearerKey(ctx.headers) } };
    // Digits only: Number() would read "1e3" as 1000 and " 1" as 1. Nine digits keep it exact and within the core's uint32.
    const index = /^\d{1,9}$/.test(ctx.params.index) ? Number(ctx.params.index) : -1;
    if (index < 0) throw invalidParameter("index", `The asset index is a whole number from 0 to ${MAX_ASSET_INDEX}, in digits.`);
    await serveAsset(ctx, core, access, ctx.params.taskId, index);
  });

  // OpenAI's download of a video (videos.downloadContent): a hosted asset, so served here.
  router.get("/api/v1/videos/:taskId/content", async (ctx) => serveVideoContent(ctx, core, bearerKey(ctx.headers), ctx.params.taskId));
}
