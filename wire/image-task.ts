// An image task as the spec's image result (GET /api/v1/images/{task_id}, and
// the data of its webhook): chat_id, created, size, data[] (the hosted URLs),
// router_assets; plus the task's status, progress and, when it failed, the
// provider's message.
import { timestampDate, timestampMs } from "@bufbuild/protobuf/wkt";
import { TaskStatus, type Task } from "../gen/router/v1/tasks_pb.js";
import { imageTokenUsage, reportedTokens } from "./image-token-usage.ts";
import { absoluteAssetUrl } from "./asset-url.ts";

const STATUS_WORDS: Record<TaskStatus, string> = {
  [TaskStatus.UNSPECIFIED]: "queued",
  [TaskStatus.QUEUED]: "queued",
  [TaskStatus.RUNNING]: "running",
  [TaskStatus.SUCCEEDED]: "completed",
  [TaskStatus.FAILED]: "failed",
  [TaskStatus.EXPIRED]: "expired",
};

/** `origin`: the gateway's own scheme and host, which the core's asset paths are made absolute with. */
export function encodeImageTask(task: Task, origin: string) {
  const urls = (task.routerAssets?.urls ?? []).map((url) => absoluteAssetUrl(origin, url));
  return {
    taskId: task.id,
    chat_id: task.id,
    object: "image.task",
    model: task.modelId,
    status: STATUS_WORDS[task.status],
    progress: Math.round(task.progress * 100),
    created: task.createdAt ? Math.floor(timestampMs(task.createdAt) / 1000) : 0,
    // The dimensions once made; `auto` while the provider has yet to choose them.
    size: imageSizeOf(task) ?? "auto",
    data: task.status === TaskStatus.SUCCEEDED ? urls.map((url) => ({ url })) : [],
    router_assets: task.routerAssets
      ? {
          status: task.routerAssets.status,
          urls,
          cached_at: task.routerAssets.cachedAt ? timestampDate(task.routerAssets.cachedAt).toISOString() : null,
          expires_at: task.routerAssets.expiresAt ? timestampDate(task.routerAssets.expiresAt).toISOString() : null,
        }
      : null,
    // OpenAI's token counts where the provider reported any (its gpt-image models); the other providers' usage is images and cost.
    usage: task.usage ? { images: task.usage.images, cost: Number(task.usage.cost), ...(reportedTokens(task.usage) && imageTokenUsage(task.usage)) } : null,
    error: task.error ? { code: task.error.code, message: task.error.message } : null,
  };
}

/**
 * An image task's `size` as the spec means it, the image's dimensions: the
 * size asked (`WIDTHxHEIGHT`, what the provider was told to make); when none
 * was, those the first image delivered has (read from its bytes by the core),
 * and undefined until then (the provider chooses).
 */
export function imageSizeOf(task: Task): string | undefined {
  const asked = task.image?.size;
  if (asked && asked !== "auto") return asked;
  const delivered = task.outputs.find((output) => output.width > 0 && output.height > 0);
  return delivered ? `${delivered.width}x${delivered.height}` : undefined;
}
