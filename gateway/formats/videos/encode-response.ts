// A task as the video endpoints answer it: a video task in its provider
// family's style (wire/video-task.ts), with the hosted bytes read back
// for the base64 style; an image task (getAsyncResponse answers those too) as
// the images endpoint does.
import { TaskKind, TaskStatus, VideoResultStyle, type Task } from "../../../gen/router/v1/tasks_pb.js";
import { encodeVideoTask } from "../../../wire/video-task.ts";
import type { CoreClient } from "../../core-client.ts";
import { INLINE_VIDEO_LIMIT_BYTES } from "../../limits.ts";
import { encodeImageTask } from "../../../wire/image-task.ts";
import { readAssetBytesUpTo } from "../../formats/shared/open-asset.ts";

/** The message of a base64-style result whose videos are not all inline. */
export const VIDEO_NOT_INLINE_MESSAGE = `The video is ready; a video larger than ${INLINE_VIDEO_LIMIT_BYTES / 1024 / 1024} MiB has no bytesBase64Encoded: download it from router_assets.urls.`;

export async function encodeTask(task: Task, origin: string, core: CoreClient, apiKey: string) {
  if (task.kind !== TaskKind.VIDEO) return encodeImageTask(task, origin);
  if (task.resultStyle !== VideoResultStyle.BASE64 || task.status !== TaskStatus.SUCCEEDED) return encodeVideoTask(task, { origin });
  const assetBytes = await inlineVideos(task, core, apiKey);
  const result = encodeVideoTask(task, { origin, assetBytes });
  return assetBytes.includes(undefined) ? { ...result, message: VIDEO_NOT_INLINE_MESSAGE } : result;
}

/**
 * Each video's bytes, or undefined for one over the inline limit (its stored
 * size says so before anything is read; the asset's head, should the record
 * not know it). One at a time: a failed read leaves no other read running, and
 * at most one video is held beyond those already read.
 */
async function inlineVideos(task: Task, core: CoreClient, apiKey: string): Promise<(Buffer | undefined)[]> {
  const videos: (Buffer | undefined)[] = [];
  for (const [index, output] of task.outputs.entries()) {
    const tooLarge = Number(output.sizeBytes) > INLINE_VIDEO_LIMIT_BYTES;
    videos.push(tooLarge ? undefined : await readAssetBytesUpTo(core, apiKey, task.id, index, INLINE_VIDEO_LIMIT_BYTES));
  }
  return videos;
}
