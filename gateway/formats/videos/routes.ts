// The video endpoints (spec: POST /api/v1/videos, GET /api/v1/videos/{task_id},
// POST /api/v1/getAsyncResponse). The hosted assets are served by the images
// format's /api/v1/assets route. docs/tasks.md.
import { z } from "zod";
import { TaskKind } from "../../../gen/router/v1/tasks_pb.js";
import { echoed, invalidParameter, taskNotFound } from "../../../core/errors.ts";
import { taskOfKind } from "../../formats/shared/task-of-kind.ts";
import { bearerKey } from "../../credentials.ts";
import { specErrorBody } from "../../errors/spec-error-body.ts";
import { nullMeansAbsent, validateBody } from "../../validation.ts";
import type { CoreClient } from "../../core-client.ts";
import type { FormatDeps, FormatRoutes, GatewayFormat } from "../format.ts";
import { answerVideoCreate } from "./create-video.ts";
import { encodeTask } from "./encode-response.ts";
import { videoBodyOfForm } from "./form-body.ts";
import { originOf } from "../origin.ts";
import { unlessNotFound } from "../../formats/shared/unless-not-found.ts";

const asyncResponseBody = nullMeansAbsent(z.object({ taskId: z.string().min(1), model: z.string().min(1).optional() }).strict());

export const videos: GatewayFormat = { encodeError: specErrorBody, register: registerVideoRoutes };

function registerVideoRoutes(router: FormatRoutes, { core }: FormatDeps) {
  // The OpenAI SDK's videos.create sends a multipart form: taken as well as JSON.
  router.post(
    "/api/v1/videos",
    async (ctx) => {
      const apiKey = bearerKey(ctx.headers);
      const body: unknown = ctx.request.body instanceof FormData ? videoBodyOfForm(ctx.request.body) : ctx.request.body;
      await answerVideoCreate(ctx, core, apiKey, body);
    },
    { form: true },
  );

  router.get("/api/v1/videos/:taskId", async (ctx) => {
    const apiKey = bearerKey(ctx.headers);
    const { task } = await core.tasks.getTask({ caller: { apiKey }, id: ctx.params.taskId });
    // An image task is answered at /images/{id} (and getAsyncResponse) only.
    ctx.body = await encodeTask(taskOfKind(task!, TaskKind.VIDEO, ctx.params.taskId), originOf(ctx), core, apiKey);
  });

  router.post("/api/v1/getAsyncResponse", async (ctx) => {
    const apiKey = bearerKey(ctx.headers);
    const { taskId, model } = validateBody(asyncResponseBody, ctx.request.body);
    const task = await findTask(core, apiKey, taskId, model);
    if (model !== undefined && task.modelId !== model) throw invalidParameter("model", `Task ${taskId} was created with another model than ${echoed(model)}.`);
    ctx.body = await encodeTask(task, originOf(ctx), core, apiKey);
  });
}

/**
 * The task a getAsyncResponse names (spec, and docs/contract.md, "Asynchronous media"): the service
 * id creation answered, alone (it is ours and unique); a provider-prefixed id (`<provider>:<upstream id>`)
 * alone; a provider's own unprefixed id with `model`, as the upstream id of one of the model's providers.
 */
async function findTask(core: CoreClient, apiKey: string, taskId: string, model: string | undefined) {
  const caller = { apiKey };
  if (taskId.includes(":")) return (await core.tasks.getTask({ caller, id: taskId })).task!;
  const direct = await unlessNotFound(core.tasks.getTask({ caller, id: taskId }), undefined);
  if (direct?.task) return direct.task;
  if (model === undefined) throw invalidParameter("model", "model is required with a provider's own job id: send the model it was created with, or the id as <provider>:<id>.");
  const { providerData } = await unlessNotFound(core.catalogue.getModel({ id: model }), { providerData: [] });
  for (const provider of new Set(providerData.map((entry) => entry.providerId))) {
    const found = await unlessNotFound(core.tasks.getTask({ caller, id: `${provider}:${taskId}` }), undefined);
    if (found?.task) return found.task;
  }
  throw taskNotFound(taskId);
}
