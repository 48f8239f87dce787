// Creates a video task from a video request body and answers it: the one path
// of POST /api/v1/videos and of a video body sent to the chat route.
import type { Context } from "koa";
import type { CoreClient } from "../../core-client.ts";
import { originOf } from "../origin.ts";
import { decodeVideoRequest } from "./decode-request.ts";
import { encodeTask } from "./encode-response.ts";
import { mediaCacheFields } from "../../formats/shared/cache-fields.ts";

export async function answerVideoCreate(ctx: Context, core: CoreClient, apiKey: string, body: unknown): Promise<void> {
  const origin = originOf(ctx);
  const request = decodeVideoRequest(body, apiKey, ctx.get("idempotency-key"), origin);
  request.cacheKey = ctx.get("cache_key");
  const created = await core.tasks.createVideo(request);
  ctx.body = { ...(await encodeTask(created.task!, origin, core, apiKey)), ...mediaCacheFields(request.cacheKey, created) };
}
