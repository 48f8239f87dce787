// A task read on a kind's own endpoint (GET /api/v1/images/{id}, /videos/{id}):
// a task of another kind is as unknown as a missing one.
import { taskNotFound } from "../../../core/errors.ts";
import { TaskKind, type Task } from "../../../gen/router/v1/tasks_pb.js";

/** The task when it is of `kind`; else 404 task_not_found under the id asked, as for a task that does not exist. */
export function taskOfKind(task: Task, kind: TaskKind, id: string): Task {
  if (task.kind !== kind) throw taskNotFound(id);
  return task;
}
