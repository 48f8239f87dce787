// Waits for a media task to end, as a synchronous create must (a video
// interaction answers once its video is made): reads it with GetTask, first
// soon and then less and less often, until it succeeded, failed or expired.
// The core's poller runs the job meanwhile, whether or not anyone waits.
import { setTimeout as sleep } from "node:timers/promises";
import { TaskStatus, type Task } from "../../../gen/router/v1/tasks_pb.js";
import type { CoreClient } from "../../core-client.ts";

export interface TaskWait {
  /** The first pause before reading the task again; each next one half again as long, up to maxPollMs. */
  firstPollMs: number;
  maxPollMs: number;
  /** How often a waiting answer shows it is alive (whitespace before the JSON, a status event on a stream). */
  keepAliveMs: number;
  /**
   * The longest a create waits: past it the interaction is answered as it
   * stands (in progress; GET it later). The task's own deadline
   * (tasks.timeout_seconds) normally ends it first.
   */
  maxWaitMs: number;
}

/**
 * The waits of every video interaction. Google's video models take one to
 * several minutes, so a read every few seconds costs nothing and tells the
 * end soon enough. Tests shorten them (the object is shared on purpose).
 */
export const TASK_WAIT: TaskWait = { firstPollMs: 250, maxPollMs: 5_000, keepAliveMs: 10_000, maxWaitMs: 30 * 60_000 };

export const hasEnded = (task: Task) => task.status === TaskStatus.SUCCEEDED || task.status === TaskStatus.FAILED || task.status === TaskStatus.EXPIRED;

/**
 * The task once it has ended; as last read when `signal` aborts (the client
 * left) or `wait.maxWaitMs` passed. A failed read (the core out of reach) is
 * thrown: the caller answers with what it knows.
 */
export async function awaitTask(core: CoreClient, apiKey: string, task: Task, signal: AbortSignal, wait: TaskWait = TASK_WAIT): Promise<Task> {
  const giveUpAt = performance.now() + wait.maxWaitMs;
  let pause = wait.firstPollMs;
  let last = task;
  while (!hasEnded(last) && !signal.aborted) {
    const left = giveUpAt - performance.now();
    if (left <= 0) break;
    try {
      await sleep(Math.min(pause, left), undefined, { signal });
    } catch {
      break; // aborted
    }
    pause = Math.min(pause * 1.5, wait.maxPollMs);
    const { task: read } = await core.tasks.getTask({ caller: { apiKey }, id: task.id }, { signal });
    last = read ?? last;
  }
  return last;
}
