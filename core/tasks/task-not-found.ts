// The one answer for a task the caller may not see: missing, another
// organisation's, or (on a kind's own endpoint) a task of another kind.
import { Code, echoed, routerError } from "../errors.ts";
import { TaskKind, type Task } from "../../gen/router/v1/tasks_pb.js";

export const taskNotFound = (id: string) => routerError(Code.NotFound, "task_not_found", `No task with id ${JSON.stringify(echoed(id))} was found.`, { param: "task_id" });

/** The task when it is of `kind`; else 404 task_not_found under the id asked, as for a task that does not exist. */
export function taskOfKind(task: Task, kind: TaskKind, id: string): Task {
  if (task.kind !== kind) throw taskNotFound(id);
  return task;
}
