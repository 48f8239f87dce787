// The body of a finished task's webhook (beyond the spec; core/tasks/webhooks.ts
// signs and delivers it): Standard Webhooks' payload around the task as its
// kind's GET answers it.
import { TaskKind, TaskStatus, type Task } from "../gen/router/v1/tasks_pb.js";
import { encodeImageTask } from "./image-task.ts";
import { encodeVideoTask } from "./video-task.ts";

/**
 * `{type, timestamp, data}` (Standard Webhooks' payload), data shaped as GET
 * /api/v1/images/{task_id} or GET /api/v1/videos/{task_id} answers (a
 * base64-style video's generations without their bytes: the body stays small,
 * and router_assets.urls has the video).
 */
export function webhookPayload(task: Task, now: Date) {
  const succeeded = task.status === TaskStatus.SUCCEEDED;
  if (task.kind === TaskKind.VIDEO) {
    return { type: succeeded ? "video.completed" : "video.failed", timestamp: now.toISOString(), data: encodeVideoTask(task, { origin: task.publicOrigin }) };
  }
  return { type: succeeded ? "image.completed" : "image.failed", timestamp: now.toISOString(), data: encodeImageTask(task, task.publicOrigin) };
}
