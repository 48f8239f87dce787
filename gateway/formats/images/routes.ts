// The images endpoints (spec: POST /api/v1/images/generations, GET
// /api/v1/images/{task_id}) and the hosted assets of media tasks (GET
// /api/v1/assets/{task_id}/{index}, to the key or as a signed link). docs/tasks.md.
import { TaskKind } from "../../../gen/router/v1/tasks_pb.js";
import { invalidParameter } from "../../../core/errors.ts";
import { taskOfKind } from "../../formats/shared/task-of-kind.ts";
import { bearerKey } from "../../credentials.ts";
import { specErrorBody } from "../../errors/spec-error-body.ts";
import type { FormatDeps, FormatRoutes, GatewayFormat } from "../format.ts";
import { decodeImageRequest } from "./decode-request.ts";
import { encodeSyncImages } from "./encode-response.ts";
import { encodeImageTask } from "../../../wire/image-task.ts";
import { originOf } from "../origin.ts";
import { serveAsset } from "./serve-asset.ts";
import { signedLinkOf } from "./signed-link.ts";

/** The largest asset index a request may name: nine digits (no task has nearly so many assets). */
const MAX_ASSET_INDEX = 999_999_999;

export const images: GatewayFormat = { encodeError: specErrorBody, register: registerImageRoutes };

function registerImageRoutes(router: FormatRoutes, { core }: FormatDeps) {
  router.post("/api/v1/images/generations", async (ctx) => {
    const apiKey = bearerKey(ctx.headers);
    const { request, body } = decodeImageRequest(ctx.request.body, apiKey, ctx.get("idempotency-key"), originOf(ctx));
    const { task } = await core.tasks.createImage(request);
    // A synchronous provider's task has ended by now: its images are the answer, else the queued task is.
    ctx.body = task!.synchronous ? await encodeSyncImages(task!, body.response_format ?? "url", originOf(ctx), core, apiKey) : encodeImageTask(task!, originOf(ctx));
  });

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
}
