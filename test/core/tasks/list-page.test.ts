// A ListTasks page (listPage): summaries without prompt and polling state,
// newest first, no more than 3 MiB encoded; a task whose summary alone passes
// the bound is left out and the tasks after it are still listed.
import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { TaskErrorSchema, TaskSchema, TaskStatus, type Task } from "../../../gen/router/v1/tasks_pb.js";
import { LIST_PAGE_MAX_BYTES, listPage } from "../../../core/tasks/tasks.ts";

/** A failed task whose provider message is `messageBytes` long (a summary keeps it). */
const failedTask = (id: string, messageBytes: number): Task =>
  create(TaskSchema, {
    id,
    organizationId: "org",
    status: TaskStatus.FAILED,
    image: { prompt: "p".repeat(1000) },
    polling: { pollingUrl: "u".repeat(1000) },
    error: create(TaskErrorSchema, { code: "upstream_error", message: "m".repeat(messageBytes) }),
  });

const summaryBytes = (task: Task) => toBinary(TaskSchema, listPage([task])[0]).length;

describe("listPage", () => {
  it("lists summaries without the prompt and the polling state", () => {
    const [summary] = listPage([failedTask("rtr_1", 10)]);
    expect(summary.image?.prompt).toBe("");
    expect(summary.polling).toBeUndefined();
    expect(summary.error?.message).toBe("m".repeat(10));
  });

  it("skips a task too large on its own and lists the ones after it", () => {
    const page = listPage([failedTask("rtr_small_1", 10), failedTask("rtr_huge", LIST_PAGE_MAX_BYTES + 1), failedTask("rtr_small_2", 10)]);
    expect(page.map((task) => task.id)).toEqual(["rtr_small_1", "rtr_small_2"]);
  });

  it("stops at 3 MiB: tasks that add up to exactly the bound are listed, one byte more and the last is not", () => {
    const third = Math.floor(LIST_PAGE_MAX_BYTES / 3);
    const overhead = summaryBytes(failedTask("rtr_a", third)) - third;
    // Three tasks whose summaries add up to exactly LIST_PAGE_MAX_BYTES.
    const sizes = [third - overhead, third - overhead, LIST_PAGE_MAX_BYTES - 2 * third - overhead];
    const exact = sizes.map((size, index) => failedTask(`rtr_${index}`, size));
    expect(exact.reduce((sum, task) => sum + summaryBytes(task), 0)).toBe(LIST_PAGE_MAX_BYTES);
    expect(listPage(exact)).toHaveLength(3);
    const over = [...exact.slice(0, 2), failedTask("rtr_2", sizes[2] + 1)];
    expect(listPage(over).map((task) => task.id)).toEqual(["rtr_0", "rtr_1"]);
  });
});
