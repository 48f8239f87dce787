// How long an image create waits for its task before answering
// (docs/tasks.md, "Synchronous images"): a synchronous provider's task until
// it ends, or until it fell back to an asynchronous provider (then the
// caller gets the task, as from any asynchronous provider); a task
// `response_type: sync` put on an asynchronous provider (the model has no
// other) until it ends or tasks.sync_wait_ms passed (then, too, the task as
// it stands: nothing is lost, it goes on).
import type { Task } from "../../gen/router/v1/tasks_pb.js";
import { fromStore } from "../accounts/refusals.ts";
import type { TaskPoller } from "./poller.ts";
import { isFinished } from "./run-job.ts";
import type { TaskStore } from "./store.ts";

export interface AnswerWait {
  poller: TaskPoller;
  store: TaskStore;
  /** How often the task is read while it runs (tasks.poll_interval_ms): a fallback is seen within it. */
  watchMs: number;
}

/** The task once it ended, or once the wait is over (as last read); `untilAsync`: also once it is no longer synchronous (fell back). */
export async function awaitAnswer(task: Task, withinMs: number, { poller, store, watchMs }: AnswerWait, untilAsync: boolean): Promise<Task> {
  const deadline = Date.now() + withinMs;
  let current = task;
  for (let left = withinMs; left > 0; left = deadline - Date.now()) {
    const ended = await poller.ended(current, Math.min(left, watchMs));
    if (ended) return ended;
    const read = await fromStore(store.get(task.organizationId, task.id));
    // Gone (retention passed, deleted): the task as last seen.
    if (!read) return current;
    current = read;
    if (isFinished(current.status) || (untilAsync && !current.synchronous)) return current;
  }
  return current;
}
