// GET /api/v1/videos/{id}/content?variant=video: a finished video's bytes, as
// OpenAI's videos API serves them (the openai SDK's videos.downloadContent), for
// a video task of any provider. It is the task's first hosted asset, served as
// GET /api/v1/assets/{id}/0 serves it (ranges included); here with the hosted
// assets' code, which this format owns. docs/tasks.md, "Download a video".
import type { Context } from "koa";
import { Code, echoed, invalidParameter, routerError } from "../../../core/errors.ts";
import { TaskKind, TaskStatus } from "../../../gen/router/v1/tasks_pb.js";
import type { CoreClient } from "../../core-client.ts";
import { taskOfKind } from "../../formats/shared/task-of-kind.ts";
import { serveAsset } from "./serve-asset.ts";

/** OpenAI's variants: the router keeps the video only (no provider gives a thumbnail or a spritesheet). */
const OPENAI_VARIANTS = ["video", "thumbnail", "spritesheet"];

export async function serveVideoContent(ctx: Context, core: CoreClient, apiKey: string, id: string) {
  const variant = ctx.query.variant ?? "video";
  if (typeof variant !== "string" || !OPENAI_VARIANTS.includes(variant)) throw invalidParameter("variant", `variant must be one of ${OPENAI_VARIANTS.join(", ")}.`);
  const { task } = await core.tasks.getTask({ caller: { apiKey }, id });
  const video = taskOfKind(task!, TaskKind.VIDEO, id);
  if (variant !== "video") throw routerError(Code.NotFound, "asset_not_found", `This router keeps no ${variant} of a video, only the video itself (variant=video).`, { param: "variant" });
  if (video.status !== TaskStatus.SUCCEEDED) {
    throw routerError(Code.NotFound, "asset_not_found", `Video ${echoed(id)} has no content: it is ${TaskStatus[video.status].toLowerCase()}; poll GET /api/v1/videos/${echoed(id)} until it is completed.`, { param: "video_id" });
  }
  await serveAsset(ctx, core, { caller: { apiKey } }, video.id, 0);
}
