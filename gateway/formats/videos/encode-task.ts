// A task as the video endpoints answer it: a video task in its provider
// family's style (core/tasks/video-result.ts), with the hosted bytes read back
// for the base64 style; an image task (getAsyncResponse answers those too) as
// the images endpoint does.
import { TaskKind, TaskStatus, VideoResultStyle, type Task } from "../../../gen/router/v1/tasks_pb.js";
import { encodeVideoTask } from "../../../core/tasks/video-result.ts";
import type { CoreClient } from "../../core-client.ts";
import { encodeImageTask } from "../images/encode-task.ts";
import { readAssetBytes } from "../images/open-asset.ts";

export async function encodeTask(task: Task, origin: string, core: CoreClient, apiKey: string) {
  if (task.kind !== TaskKind.VIDEO) return encodeImageTask(task, origin);
  const inline = task.resultStyle === VideoResultStyle.BASE64 && task.status === TaskStatus.SUCCEEDED;
  const assetBytes = inline
    ? await Promise.all(task.outputs.map((_, index) => readAssetBytes(core, apiKey, task.id, index)))
    : undefined;
  return encodeVideoTask(task, { origin, assetBytes });
}
