// A create served by a synchronous provider, answered as OpenAI's images
// object (what the official SDK's images.generate reads) plus the spec's
// `chat_id` and `usage.cost`: `data[]` holds the router's hosted URLs, or the
// stored bytes as base64 for `response_format: b64_json`. A task that failed
// is answered as the error it ended with (docs/tasks.md, "Synchronous images").
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { TaskStatus, type Task } from "../../../gen/router/v1/tasks_pb.js";
import { Code, routerError } from "../../../core/errors.ts";
import type { CoreClient } from "../../core-client.ts";
import { readAssetBytes } from "../../formats/shared/open-asset.ts";
import { imageSizeOf } from "../../../wire/image-task.ts";
import type { TraceEntry } from "../../headers.ts";
import { imageTokenUsage } from "../../../wire/image-token-usage.ts";
import { absoluteAssetUrl } from "../../../wire/asset-url.ts";

/** A failed task's error code, as the status the caller gets (gateway/errors/http-status.ts maps the code). */
const FAILURE_CODES: Record<string, Code> = {
  // The provider's safety system refused the prompt or the image: the request's content, a 400.
  content_moderated: Code.InvalidArgument,
  request_moderated: Code.InvalidArgument,
  // The provider failed: 502 (upstream_error is mapped by its reason).
  upstream_error: Code.Unavailable,
  timeout: Code.DeadlineExceeded,
  no_provider_available: Code.Unavailable,
};

/**
 * The providers the task was tried on, in order, as the routing trace gives
 * them (x-router-trace): each one left for the next (docs/tasks.md,
 * "Fallback"), then the one it is on, `error` with its code once it failed.
 */
export function taskTrace(task: Task): TraceEntry[] {
  const left = task.attempts.map((attempt) => ({ model: attempt.modelId, provider: attempt.provider, outcome: attempt.outcome, reason: attempt.reason }));
  const failed = task.status === TaskStatus.FAILED;
  return [...left, { model: task.modelId, provider: task.provider, outcome: failed ? "error" : "ok", reason: failed ? (task.error?.code ?? "") : "" }];
}

export async function encodeSyncImages(task: Task, format: "url" | "b64_json", origin: string, core: CoreClient, apiKey: string) {
  // The trace goes in the error metadata, which gives it the x-router-trace header too (error-headers.ts).
  const metadata = { chat_id: task.id, attempts: taskTrace(task).map((entry) => ({ ...entry })) };
  if (task.status === TaskStatus.FAILED) {
    const code = task.error?.code || "upstream_error";
    throw routerError(FAILURE_CODES[code] ?? Code.Unavailable, code, task.error?.message || "The image generation failed.", { metadata });
  }
  if (task.status !== TaskStatus.SUCCEEDED) {
    // The wait is bounded by the provider's request timeout; the task goes on and can still be read.
    throw routerError(Code.DeadlineExceeded, "timeout", `The image was not ready in time; it goes on as task ${task.id} (GET /api/v1/images/${task.id}).`, { metadata });
  }
  const data = await Promise.all(
    task.outputs.map(async (_, index) => {
      if (format === "url") return { url: absoluteAssetUrl(origin, task.routerAssets?.urls[index] ?? "") };
      return { b64_json: (await readAssetBytes(core, apiKey, task.id, index)).toString("base64") };
    }),
  );
  const image = task.image;
  return {
    created: Math.floor(timestampMs(task.completedAt ?? task.createdAt!) / 1000),
    data,
    ...(imageSizeOf(task) !== undefined && { size: imageSizeOf(task) }),
    ...(image?.quality && image.quality !== "auto" && { quality: image.quality }),
    ...(image?.outputFormat && { output_format: image.outputFormat }),
    ...(image?.background && image.background !== "auto" && { background: image.background }),
    chat_id: task.id,
    model: task.modelId,
    // OpenAI's token counts (the SDK declares them required): the provider's, or 0 where it reports none.
    usage: { images: task.usage?.images ?? data.length, cost: Number(task.usage?.cost ?? 0), ...imageTokenUsage(task.usage) },
  };
}
