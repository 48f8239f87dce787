// Which instance runs which task: every unfinished task has one lease in the
// store; the instance holding it runs the task (run-job.ts) and renews the
// lease every third of its length. A sweep, as often, looks for unfinished
// tasks whose lease is free (new, or its instance died) and takes them. A
// lease this instance fails to renew (another took it) stops its run at once.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Task } from "../../gen/router/v1/tasks_pb.js";
import { UnreadableRecordError } from "../accounts/store-errors.ts";
import { isFinished, LEASE_LOST } from "./run-job.ts";
import type { TaskRef, TaskStore } from "./store.ts";

export interface TaskPollerOptions {
  store: TaskStore;
  leaseMs: number;
  /** How often ended() reads the store for a task that runs on another instance. */
  watchMs: number;
  /** Runs one task until it ends or the signal aborts. */
  run(task: Task, signal: AbortSignal): Promise<void>;
  logger?: { warn(details: object, message: string): void; error(details: object, message: string): void };
}

export interface TaskPoller {
  /** This instance's name on the leases it holds. */
  readonly owner: string;
  /** Takes the task's lease and runs it here, unless another instance holds it (a new task: at once). */
  adopt(ref: TaskRef): Promise<void>;
  /**
   * Resolves when the task has ended (or is gone), or after `withinMs`,
   * whichever comes first: a synchronous create answers once its task has
   * ended. A run here is awaited; a task another instance took (its sweep
   * may lease a new task before the instance that made it) is read from the
   * store every `watchMs`. Gives the ended task as last read, so the create
   * need not read it again; undefined when it did not end (or cannot be read).
   */
  ended(ref: TaskRef, withinMs: number): Promise<Task | undefined>;
  /** One sweep now (tests; the timer runs them otherwise). */
  sweep(): Promise<void>;
  /** Resolves when no task runs here (tests). */
  idle(): Promise<void>;
  /** Stops every run here and gives up their leases, so another instance goes on at once. */
  close(): Promise<void>;
  /** Stops every run here and keeps their leases until they pass, as an instance that died does (tests). */
  halt(): Promise<void>;
}

export function createTaskPoller(options: TaskPollerOptions): TaskPoller {
  const { store, leaseMs } = options;
  const owner = randomUUID();
  const running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  const keyOf = (ref: TaskRef) => `${ref.organizationId}\u0000${ref.id}`;
  let closed = false;
  /** Set by halt(): runs stop without giving up their leases. */
  let keepLeases = false;

  async function adopt(ref: TaskRef) {
    const key = keyOf(ref);
    if (closed || running.has(key)) return;
    // Reserved before the first await, so two adoptions of one task here run it once.
    const controller = new AbortController();
    const slot = { controller, done: Promise.resolve() };
    running.set(key, slot);
    slot.done = runLeased(ref, controller)
      .catch((error: unknown) => options.logger?.error({ err: error, taskId: ref.id }, "media task run failed"))
      .finally(() => running.delete(key));
  }

  async function runLeased(ref: TaskRef, controller: AbortController) {
    if (!(await store.lease(ref.id, owner, leaseMs))) return;
    const renewal = setInterval(() => {
      store.lease(ref.id, owner, leaseMs).then(
        (held) => held || controller.abort(LEASE_LOST),
        (error: unknown) => options.logger?.warn({ err: error, taskId: ref.id }, "could not renew a media task's lease"),
      );
    }, Math.max(1, Math.floor(leaseMs / 3)));
    renewal.unref();
    try {
      const task = await readTask(ref);
      // Gone (retention passed), unreadable, or ended elsewhere: nothing is left to run.
      if (!task || isFinished(task.status)) await store.finish(ref);
      else await options.run(task, controller.signal);
    } finally {
      clearInterval(renewal);
      if (!keepLeases) await store.unlease(ref.id, owner).catch(() => undefined);
    }
  }

  /**
   * The task, or undefined when it cannot be decoded: it is then logged once
   * and left off the unfinished list, rather than failing every sweep until it expires.
   */
  async function readTask(ref: TaskRef): Promise<Task | undefined> {
    try {
      return await store.get(ref.organizationId, ref.id);
    } catch (error) {
      if (!(error instanceof UnreadableRecordError)) throw error;
      options.logger?.error({ err: error, taskId: ref.id }, "media task record unreadable: dropped from the unfinished tasks");
      return undefined;
    }
  }

  async function sweep() {
    if (closed) return;
    let refs: TaskRef[];
    try {
      refs = await store.unfinished();
    } catch (error) {
      options.logger?.warn({ err: error }, "could not list unfinished media tasks");
      return;
    }
    await Promise.all(refs.map((ref) => adopt(ref)));
  }

  /** Waits for `work`, or `ms` at most. */
  async function within(work: Promise<void>, ms: number) {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
    await Promise.race([work, bound]).finally(() => clearTimeout(timer));
  }

  const timer = setInterval(() => void sweep(), Math.max(1, Math.floor(leaseMs / 3)));
  timer.unref();

  return {
    owner,
    adopt,
    async ended(ref, withinMs) {
      const deadline = Date.now() + withinMs;
      for (let left = withinMs; left > 0 && !closed; left = deadline - Date.now()) {
        const run = running.get(keyOf(ref));
        if (run) {
          await within(run.done, left);
          continue;
        }
        const task = await store.get(ref.organizationId, ref.id).catch(() => undefined);
        // Gone, ended, or a store that cannot answer (the create's own read of it then tells).
        if (!task) return undefined;
        if (isFinished(task.status)) return task;
        await sleep(Math.min(options.watchMs, left));
      }
      return undefined;
    },
    sweep,
    async idle() {
      while (running.size > 0) await Promise.all([...running.values()].map((run) => run.done));
    },
    async close() {
      closed = true;
      clearInterval(timer);
      for (const run of running.values()) run.controller.abort();
      await this.idle();
    },
    async halt() {
      keepLeases = true;
      await this.close();
    },
  };
}
