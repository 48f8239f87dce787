// Fan-out (docs/tasks.md, "Fan-out"): n images on a provider that makes one
// a job (BFL) are n jobs upstream, in order; the hold is n images, the charge
// the images delivered. One job failing leaves the others' images, charged
// alone, and says what was not made.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeBfl } from "../../../support/fake-media-bfl.ts";
import { type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { startGateway, type Gateway } from "../../../support/harness.ts";
import { FLUX_IMAGE_PRICE, FLUX_MODEL, IMAGE_TASK_ENV, imageTaskConfig } from "../../../support/image-task-config.ts";
import { nanosOf } from "../../../support/exact-money.ts";
import { taskClient, type TaskClient } from "../../../support/video-task-harness.ts";
import { TaskStatus } from "../../../../gen/router/v1/tasks_pb.js";

/** The seed whose job the fake fails: the second job of a task asking seed 7. */
const FAILING_SEED = 8;

let bfl: FakeMediaUpstream;
let gateway: Gateway;
let images: TaskClient;

beforeAll(async () => {
  bfl = await startFakeBfl({ outcomeOf: (body) => (body.seed === FAILING_SEED ? "failed" : undefined) });
  gateway = await startGateway(imageTaskConfig(bfl.url), { env: IMAGE_TASK_ENV });
  images = taskClient(gateway, { kind: "images", model: FLUX_MODEL });
});
afterAll(async () => {
  await gateway?.close();
  await bfl?.close();
});

const submissions = (prompt: string) => bfl.requests.filter((request) => request.method === "POST" && request.body.prompt === prompt);

describe("n above what one job makes", () => {
  it("is three BFL jobs for n 3, in order: three images served, three held, three charged", async () => {
    const before = await images.balance();
    const id = await images.created({ prompt: "three of them", n: 3 });
    const held = (await images.stored(id)).holdNanos;
    expect(held).toBe(3n * nanosOf(FLUX_IMAGE_PRICE));

    const done = await images.finished(id);
    expect(done, JSON.stringify(done)).toMatchObject({ status: "completed", error: null, usage: { images: 3 } });
    expect(done.data).toHaveLength(3);
    expect(submissions("three of them")).toHaveLength(3);
    for (const { url } of done.data) expect((await images.download(url)).status).toBe(200);
    expect(await images.balance()).toBe(before - 3n * nanosOf(FLUX_IMAGE_PRICE));

    // The jobs in the order they were submitted, each one's image at its own place.
    const task = await images.stored(id);
    const submitted = [...bfl.jobs.jobs.values()].filter((job) => job.prompt === "three of them").map((job) => job.id);
    const jobIds = task.jobs.map((job) => job.upstreamJobId);
    expect(submitted).toHaveLength(3);
    expect(jobIds).toEqual(submitted);
    task.outputs.forEach((output, index) => expect(output.url).toContain(`${task.jobs[index].upstreamJobId}/sample.png`));
    expect(task.upstreamJobId).toBe(jobIds[0]);
    // Each job's id, provider-prefixed, names the task.
    const byLast = await images.read(`bfl:${jobIds[2]}`);
    expect(byLast.json.chat_id).toBe(id);
  });

  it("delivers and charges the two images made when one of three jobs fails, saying which were not made", async () => {
    const before = await images.balance();
    const id = await images.created({ prompt: "one fails", n: 3, seed: 7 });
    const done = await images.finished(id);
    expect(done, JSON.stringify(done)).toMatchObject({ status: "completed", usage: { images: 2 }, error: { code: "upstream_error", message: expect.stringContaining("1 of 3 images could not be made") } });
    expect(done.data).toHaveLength(2);
    for (const { url } of done.data) expect((await images.download(url)).status).toBe(200);
    expect(await images.balance()).toBe(before - 2n * nanosOf(FLUX_IMAGE_PRICE));
    expect(await gateway.core.accounts.usage.get("org_test", id)).toMatchObject({ outcome: "ok" });

    // Each job its own seed (one seed would make one image three times), and the failed one in its place.
    expect(submissions("one fails").map((request) => request.body.seed)).toEqual([7, 8, 9]);
    const task = await images.stored(id);
    expect(task.jobs.map((job) => job.status)).toEqual([TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.SUCCEEDED]);
    expect(task.outputs.map((output) => output.url)).toEqual([task.jobs[0].outputs[0].url, task.jobs[2].outputs[0].url]);
  });

  it("fails, its whole hold returned, when every job fails", async () => {
    const before = await images.balance();
    const id = await images.created({ prompt: "[fail] all", n: 2 });
    const done = await images.finished(id);
    expect(done).toMatchObject({ status: "failed", data: [], error: { code: "upstream_error" } });
    expect(await images.balance()).toBe(before);
  });
});
