// A video task as the Interaction resource: `completed` with one model output
// step holding the video (base64 `data` for `delivery: inline`, else the
// hosted asset's `uri`), `in_progress` while it runs, `failed` with Google's
// `errors` once it failed; its usage is the task's charge (a task counts no
// tokens). And the failure as an HTTP error, for a create that had not yet
// answered anything when its task failed.
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, routerError } from "../../../core/errors.ts";
import { UsageSchema } from "../../../gen/router/v1/inference_pb.js";
import { TaskStatus, type Task } from "../../../gen/router/v1/tasks_pb.js";
import { absoluteAssetUrl } from "../../../wire/asset-url.ts";
import { bareModelName } from "../../../wire/model-name.ts";
import type { CoreClient } from "../../core-client.ts";
import { INLINE_VIDEO_LIMIT_BYTES } from "../../limits.ts";
import { readAssetBytesUpTo } from "../../formats/shared/open-asset.ts";
import { encodeInteraction, type Step } from "./encode-response.ts";
import type { VideoDelivery } from "./video-echo.ts";

export interface VideoContent {
  type: "video";
  data?: string;
  uri?: string;
  mime_type: string;
}

/** Where the video's hosted copy is read from (its bytes for inline delivery) and shown (its URL). */
export interface VideoSource {
  core: CoreClient;
  apiKey: string;
  /** The gateway's scheme and host as the caller reached it: the asset paths are made absolute with it. */
  origin: string;
  delivery: VideoDelivery;
}

/**
 * The task's videos as content blocks. Inline: the hosted bytes as base64,
 * unless a video is larger than INLINE_VIDEO_LIMIT_BYTES (as the base64
 * video results have it), which is given by `uri` instead.
 */
export async function videoContentsOf(task: Task, { core, apiKey, origin, delivery }: VideoSource): Promise<VideoContent[]> {
  if (task.status !== TaskStatus.SUCCEEDED) return [];
  const contents: VideoContent[] = [];
  // One at a time: at most one video is held beyond those already read.
  for (const [index, output] of task.outputs.entries()) {
    const uri = absoluteAssetUrl(origin, task.routerAssets?.urls[index] ?? "");
    const inline = delivery === "inline" && Number(output.sizeBytes) <= INLINE_VIDEO_LIMIT_BYTES;
    const bytes = inline ? await readAssetBytesUpTo(core, apiKey, task.id, index, INLINE_VIDEO_LIMIT_BYTES) : undefined;
    contents.push(bytes ? { type: "video", data: bytes.toString("base64"), mime_type: output.mediaType } : { type: "video", uri, mime_type: output.mediaType });
  }
  return contents;
}

/** The interaction's status word for the task's. */
export function interactionStatusOf(task: Task): "completed" | "failed" | "in_progress" {
  if (task.status === TaskStatus.SUCCEEDED) return "completed";
  if (task.status === TaskStatus.FAILED || task.status === TaskStatus.EXPIRED) return "failed";
  return "in_progress";
}

/** The interaction's head fields as the text interactions have them (the model bare, as the spec shows it). */
export function videoHead(task: Task) {
  const created = task.createdAt ? timestampDate(task.createdAt) : new Date(0);
  const updated = task.completedAt ?? task.updatedAt;
  return { id: task.id, model: bareModelName(task.modelId), created, updated: updated ? timestampDate(updated) : created, previousInteractionId: undefined };
}

/**
 * The resource. `includeInput` (GET's include_input) puts what the task was
 * asked first: the prompt, and the input image by its URL.
 */
export function encodeVideoInteraction(task: Task, contents: VideoContent[], includeInput = false) {
  const steps: Step[] = [];
  if (includeInput) steps.push({ type: "user_input", content: inputOf(task) });
  if (contents.length > 0) steps.push({ type: "model_output", content: contents });
  const usage = create(UsageSchema, { cost: task.usage?.cost || "0" });
  const status = interactionStatusOf(task);
  return {
    ...encodeInteraction(videoHead(task), steps, usage, task.id),
    status,
    ...(status === "failed" && { errors: [failureOf(task)] }),
  };
}

function inputOf(task: Task) {
  const video = task.video;
  const content: object[] = [{ type: "text", text: video?.prompt ?? "" }];
  if (video?.imageUrl) content.push({ type: "image", uri: video.imageUrl });
  return content;
}

/** Google's error entry: the task's stable code and the provider's words. */
function failureOf(task: Task): { code: string; message: string } {
  if (task.status === TaskStatus.EXPIRED) return { code: "expired", message: "The video's task expired." };
  return { code: task.error?.code || "upstream_error", message: task.error?.message || "The video generation failed." };
}

/** A failed task's code as the status the caller gets (gateway/errors/http-status.ts maps the code), as synchronous images answer it. */
const FAILURE_CODES: Record<string, Code> = {
  // The provider's safety system refused the prompt or the video: the request's content, a 400.
  content_moderated: Code.InvalidArgument,
  request_moderated: Code.InvalidArgument,
  // The provider failed: 502 (upstream_error is mapped by its reason).
  upstream_error: Code.Unavailable,
  timeout: Code.DeadlineExceeded,
};

/** The failed task as the error a create answers when nothing was sent yet (metadata names the interaction, which GET shows too). */
export function videoFailure(task: Task) {
  const { code, message } = failureOf(task);
  return routerError(FAILURE_CODES[code] ?? Code.Unavailable, code, message, { metadata: { interaction_id: task.id } });
}
