// The wait of a synchronous video create (await-task.ts) on a scripted core:
// it reads the task until it ends, less and less often; it stops reading at
// once when its client leaves, and gives up at its longest wait, answering
// the task as last read either way.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { awaitTask, type TaskWait } from "../../../../gateway/formats/interactions/await-task.ts";
import type { CoreClient } from "../../../../gateway/core-client.ts";
import { TaskSchema, TaskStatus, type Task } from "../../../../gen/router/v1/tasks_pb.js";

const WAIT: TaskWait = { firstPollMs: 1, maxPollMs: 4, keepAliveMs: 1000, maxWaitMs: 60_000 };
const task = (status: TaskStatus) => create(TaskSchema, { id: "rtr_task", status });

/** A core whose GetTask answers `statuses` in turn (the last one from then on), calling `onRead` with each read's number. */
function scriptedCore(statuses: TaskStatus[], onRead: (reads: number) => void = () => {}) {
  const reads: { id: string; signal: AbortSignal | undefined }[] = [];
  const core = {
    tasks: {
      getTask: async (request: { id: string }, options?: { signal?: AbortSignal }) => {
        reads.push({ id: request.id, signal: options?.signal });
        onRead(reads.length);
        return { task: task(statuses[Math.min(reads.length, statuses.length) - 1]) };
      },
    },
  } as unknown as CoreClient;
  return { core, reads };
}

describe("awaitTask", () => {
  it("reads the task until it has ended and answers it ended", async () => {
    const { core, reads } = scriptedCore([TaskStatus.QUEUED, TaskStatus.RUNNING, TaskStatus.RUNNING, TaskStatus.SUCCEEDED]);
    const ended = await awaitTask(core, "sk", task(TaskStatus.QUEUED), new AbortController().signal, WAIT);
    expect(ended.status).toBe(TaskStatus.SUCCEEDED);
    expect(reads.map((read) => read.id)).toEqual(["rtr_task", "rtr_task", "rtr_task", "rtr_task"]);
  });

  it("reads nothing for a task that has ended already (failed)", async () => {
    const { core, reads } = scriptedCore([TaskStatus.RUNNING]);
    expect((await awaitTask(core, "sk", task(TaskStatus.FAILED), new AbortController().signal, WAIT)).status).toBe(TaskStatus.FAILED);
    expect(reads).toEqual([]);
  });

  it("stops reading when its client leaves, answering the task as last read", async () => {
    const left = new AbortController();
    // The client leaves right after the second read.
    const { core, reads } = scriptedCore([TaskStatus.QUEUED, TaskStatus.RUNNING], (count) => count === 2 && left.abort());
    const last = await awaitTask(core, "sk", task(TaskStatus.QUEUED), left.signal, WAIT);
    expect([last.status, reads.length]).toEqual([TaskStatus.RUNNING, 2]);
    // Each read carries the signal, so a read under way stops too.
    expect(reads.every((read) => read.signal === left.signal)).toBe(true);
  });

  it("gives up at its longest wait, answering the task still running", async () => {
    const { core, reads } = scriptedCore([TaskStatus.RUNNING]);
    const last = await awaitTask(core, "sk", task(TaskStatus.QUEUED), new AbortController().signal, { ...WAIT, maxWaitMs: 20 });
    expect(last.status).toBe(TaskStatus.RUNNING);
    expect(reads.length).toBeGreaterThan(0);
  });

  it("throws a failed read (the core out of reach) to its caller", async () => {
    const core = { tasks: { getTask: async () => Promise.reject(new Error("core gone")) } } as unknown as CoreClient;
    await expect(awaitTask(core, "sk", task(TaskStatus.QUEUED), new AbortController().signal, WAIT)).rejects.toThrow("core gone");
  });
});
