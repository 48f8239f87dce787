// A video task as the spec's video result (GET /api/v1/videos/{task_id},
// POST /api/v1/getAsyncResponse, and the video webhooks' data): the fields
// every style shares (taskId, chat_id, code, message, model, status,
// router_assets, usage) and the provider family's own shape, chosen by the
// task's result_style. docs/tasks.md says where each field sits.
import { timestampDate, timestampMs, type Timestamp } from "@bufbuild/protobuf/wkt";
import { TaskStatus, VideoResultStyle, type Task, type TaskOutput, type VideoParameters } from "../gen/router/v1/tasks_pb.js";
import { absoluteAssetUrl } from "./asset-url.ts";

/**
 * The statuses a task is shown in. EXPIRED is never set: a task past its
 * retention is gone from the store and answered 404 task_not_found.
 */
type ShownStatus = Exclude<TaskStatus, TaskStatus.EXPIRED>;

/** Each style's word for each status (the spec's success words: docs/contract.md, "Asynchronous media"). */
const STATUS_WORDS: Record<VideoResultStyle, Record<ShownStatus, string>> = {
  [VideoResultStyle.UNSPECIFIED]: words("queued", "in_progress", "completed"),
  [VideoResultStyle.PROGRESS]: words("queued", "in_progress", "completed"),
  [VideoResultStyle.PER_GENERATION]: words("waiting", "processing", "succeed"),
  [VideoResultStyle.DATA]: words("submitted", "processing", "completed"),
  [VideoResultStyle.BASE64]: words("queued", "running", "completed"),
};

function words(queued: string, running: string, succeeded: string): Record<ShownStatus, string> {
  return {
    [TaskStatus.UNSPECIFIED]: queued,
    [TaskStatus.QUEUED]: queued,
    [TaskStatus.RUNNING]: running,
    [TaskStatus.SUCCEEDED]: succeeded,
    [TaskStatus.FAILED]: "failed",
  };
}

export interface VideoResultOptions {
  /** The gateway's scheme and host: the core's asset paths are made absolute with it. */
  origin: string;
  /** The hosted bytes of each output, for the base64 style (`bytesBase64Encoded`); absent (all, or one output's): the field is left out. */
  assetBytes?: readonly (Uint8Array | undefined)[];
}

/**
 * `code` and `message` on every style: while the task is queued or running,
 * and once it succeeded, `code` is `ok` and `message` says where it stands;
 * once it failed, `code` is the task's error code (upstream_error,
 * content_moderated, request_moderated, timeout, ...) and `message` the
 * provider's own words.
 */
function codeAndMessage(task: Task): { code: string; message: string } {
  if (task.status === TaskStatus.FAILED) return { code: task.error?.code || "upstream_error", message: task.error?.message ?? "" };
  if (task.status === TaskStatus.SUCCEEDED) return { code: "ok", message: "The video is ready; download it from router_assets.urls." };
  if (task.status === TaskStatus.RUNNING) return { code: "ok", message: "The video is being generated." };
  return { code: "ok", message: "The video is queued." };
}

/** The seconds a request asked for (`length` or `seconds`), undefined when it did not say. */
export function videoSecondsAsked(video: Pick<VideoParameters, "length" | "seconds">): number | undefined {
  return video.length || video.seconds || undefined;
}

export function encodeVideoTask(task: Task, options: VideoResultOptions) {
  const style = task.resultStyle;
  const status = STATUS_WORDS[style][task.status as ShownStatus];
  const urls = (task.routerAssets?.urls ?? []).map((url) => absoluteAssetUrl(options.origin, url));
  const common = {
    taskId: task.id,
    chat_id: task.id,
    ...codeAndMessage(task),
    object: "video.task",
    model: task.modelId,
    status,
    router_assets: task.routerAssets
      ? { status: task.routerAssets.status, urls, cached_at: iso(task.routerAssets.cachedAt), expires_at: iso(task.routerAssets.expiresAt) }
      : null,
    usage: task.usage ? { videos: task.usage.videos, video_seconds: task.usage.videoSeconds, cost: Number(task.usage.cost) } : null,
  };
  const succeeded = task.status === TaskStatus.SUCCEEDED;
  const outputs = succeeded ? task.outputs : [];
  switch (style) {
    case VideoResultStyle.PER_GENERATION:
      return { ...common, generations: perGenerations(task, status, urls) };
    case VideoResultStyle.DATA:
      return {
        ...common,
        data: {
          task_id: task.id,
          status,
          status_msg: task.status === TaskStatus.FAILED ? common.message : "",
          created_at: ms(task.createdAt),
          updated_at: ms(task.updatedAt),
          generations: outputs.map((output, index) => ({ id: generationId(task, output, index), url: urls[index], duration: durationOf(task, output) })),
        },
      };
    case VideoResultStyle.BASE64:
      return {
        ...common,
        data: {
          status,
          generations: outputs.map((output, index) => ({
            mimeType: output.mediaType,
            ...(options.assetBytes?.[index] ? { bytesBase64Encoded: Buffer.from(options.assetBytes[index]).toString("base64") } : {}),
          })),
        },
      };
    default:
      return {
        ...common,
        id: task.id,
        object: "video",
        progress: succeeded ? 100 : Math.round(task.progress * 100),
        created_at: seconds(task.createdAt),
        completed_at: task.completedAt ? seconds(task.completedAt) : null,
        expires_at: task.expiresAt ? seconds(task.expiresAt) : null,
        prompt: task.video?.prompt ?? "",
        // OpenAI always knows (its default is "4"); another provider's default is known once it measured the video: null until then, as size is.
        seconds: String(videoSecondsAsked(task.video ?? { length: 0, seconds: 0 }) ?? durationOf(task, outputs[0]) ?? "") || null,
        size: task.video?.size || null,
        // OpenAI's Video type has it; the router makes no remixes.
        remixed_from_video_id: null,
        error: task.status === TaskStatus.FAILED ? { code: common.code, message: common.message } : null,
      };
  }
}

/**
 * Pollo's generations: one per output once done; before (and on failure), the
 * one video under way. Its id is `<task>-0` until the video is made, then
 * Pollo's own generation id (known only then), as Pollo's API answers it.
 */
function perGenerations(task: Task, status: string, urls: string[]) {
  const createdDate = iso(task.createdAt);
  if (task.status === TaskStatus.SUCCEEDED) {
    return task.outputs.map((output, index) => ({
      id: generationId(task, output, index),
      createdDate,
      updatedDate: iso(task.completedAt),
      status,
      url: urls[index],
      mediaType: output.mediaType.split("/")[0] || "video",
      failMsg: null,
    }));
  }
  const failMsg = task.status === TaskStatus.FAILED ? (task.error?.message ?? "") : null;
  return [{ id: `${task.id}-0`, createdDate, updatedDate: iso(task.updatedAt), status, url: null, mediaType: "video", failMsg }];
}

/** The provider's id of an output where it gave one, else the task id and the output's position. */
const generationId = (task: Task, output: TaskOutput, index: number) => output.upstreamId || `${task.id}-${index}`;

/** Kling's `duration`, a decimal string of seconds: as the provider measured it, else as asked. */
function durationOf(task: Task, output: TaskOutput | undefined): string | undefined {
  if (output && output.durationSeconds > 0) return String(output.durationSeconds);
  const asked = task.video && videoSecondsAsked(task.video);
  return asked ? String(asked) : undefined;
}

const iso = (value: Timestamp | undefined) => (value ? timestampDate(value).toISOString() : null);
const ms = (value: Timestamp | undefined) => (value ? timestampMs(value) : null);
const seconds = (value: Timestamp | undefined) => (value ? Math.floor(timestampMs(value) / 1000) : null);
