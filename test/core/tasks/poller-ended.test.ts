// The poller's ended(), which a synchronous image create waits on: a task run
// by another instance (its sweep leased the new task first) is waited for by
// reading the shared store, not answered at once; the wait still stops at its bound.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TaskSchema, TaskStatus, type Task } from "../../../gen/router/v1/tasks_pb.js";
import { createMemoryTaskStore } from "../../../core/tasks/memory-store.ts";
import { createTaskPoller, type TaskPoller } from "../../../core/tasks/poller.ts";
import type { TaskStore } from "../../../core/tasks/store.ts";

const pollers: TaskPoller[] = [];
afterEach(async () => {
  await Promise.all(pollers.splice(0).map((poller) => poller.close()));
});

/** A store both instances share, counting the reads of the task. */
function sharedStore() {
  const store = createMemoryTaskStore();
  let reads = 0;
  const counted: TaskStore = { ...store, get: (organizationId, id) => ((reads += 1), store.get(organizationId, id)) };
  return { store: counted, reads: () => reads };
}

const newTask = () =>
  create(TaskSchema, { id: "rtr_1", organizationId: "org", status: TaskStatus.QUEUED, expiresAt: timestampFromMs(Date.now() + 60_000) });

describe("ended()", () => {
  it("waits for a task another instance runs, reading the store, until it finished there", async () => {
    const { store, reads } = sharedStore();
    let finish!: () => void;
    const released = new Promise<void>((resolve) => (finish = resolve));
    const elsewhere = createTaskPoller({
      store,
      leaseMs: 60_000,
      watchMs: 5,
      run: async (task: Task) => {
        await released;
        await store.save({ ...task, status: TaskStatus.SUCCEEDED });
        await store.finish(task);
      },
    });
    const here = createTaskPoller({ store, leaseMs: 60_000, watchMs: 5, run: () => Promise.reject(new Error("runs elsewhere")) });
    pollers.push(elsewhere, here);
    const task = newTask();
    await store.create(task);
    // The other instance's sweep takes the task before this one adopts it.
    await elsewhere.sweep();
    await here.adopt(task);

    let ended = false;
    const waiting = here.ended(task, 30_000).then(() => (ended = true));
    const readsBefore = reads();
    await vi.waitFor(() => expect(reads()).toBeGreaterThan(readsBefore + 2));
    expect(ended).toBe(false);
    const started = Date.now();
    finish();
    await waiting;
    expect((await store.get("org", task.id))?.status).toBe(TaskStatus.SUCCEEDED);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("stops waiting at its bound while the task is still unfinished elsewhere", async () => {
    const { store } = sharedStore();
    const elsewhere = createTaskPoller({ store, leaseMs: 60_000, watchMs: 5, run: (_task, signal) => new Promise((resolve) => signal.addEventListener("abort", () => resolve())) });
    const here = createTaskPoller({ store, leaseMs: 60_000, watchMs: 5, run: () => Promise.reject(new Error("runs elsewhere")) });
    pollers.push(elsewhere, here);
    const task = newTask();
    await store.create(task);
    await elsewhere.sweep();
    await here.ended(task, 50);
    expect((await store.get("org", task.id))?.status).toBe(TaskStatus.QUEUED);
  });

  it("answers at once for a task that is gone", async () => {
    const { store } = sharedStore();
    const here = createTaskPoller({ store, leaseMs: 60_000, watchMs: 60_000, run: async () => undefined });
    pollers.push(here);
    const started = Date.now();
    await here.ended({ organizationId: "org", id: "rtr_gone" }, 30_000);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
