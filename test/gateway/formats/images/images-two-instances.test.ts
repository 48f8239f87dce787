// Image tasks on two gateway instances sharing one Redis (and one assets
// directory): each BFL job is polled by exactly one instance (the polls are
// counted at the fake), either instance answers for every task and serves its
// asset, and a task whose instance dies mid-job (its job held running until
// then, so the outcome does not hang on the poll loop's pace) is taken over by
// the other once its lease passes, finished and charged once.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TaskStatus } from "../../../../gen/router/v1/tasks_pb.js";
import { startFakeBfl } from "../../../support/fake-media-bfl.ts";
import { STALL_PROMPT, TINY_PNG, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { FLUX_IMAGE_PRICE, FLUX_MODEL, IMAGE_TASK_ENV, imageTaskConfig } from "../../../support/image-task-config.ts";
import { nanosOf } from "../../../support/exact-money.ts";
import { taskClient } from "../../../support/video-task-harness.ts";
import { startRedisServer, type RedisServer } from "../../../support/redis-server.ts";

const DONE = { timeout: 15_000, interval: 20 };
const JOBS = 6;

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});

const images = (gateway: Gateway) => taskClient(gateway, { kind: "images", model: FLUX_MODEL });
const createImage = (gateway: Gateway, prompt: string) => images(gateway).created({ prompt });
const readTask = async (gateway: Gateway, id: string) => (await images(gateway).read(id)).json;
const balance = (gateway: Gateway) => images(gateway).balance();

describe("image tasks on two instances sharing one Redis", { timeout: 30_000 }, () => {
  let bfl: FakeMediaUpstream;
  const gateways: Gateway[] = [];
  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.close()));
    await bfl?.close();
  });

  it("polls each job from exactly one instance, and either instance answers for every task", async () => {
    bfl = await startFakeBfl({ runningAtPoll: 2, doneAtPoll: 4 });
    const config = imageTaskConfig(bfl.url);
    const env = { ...IMAGE_TASK_ENV, REDIS_URL: redis.url, REDIS_PREFIX: "two-instances:" };
    gateways.push(await startGateway(config, { env }), await startGateway(config, { env }));
    const before = await balance(gateways[0]);
    const ids = await Promise.all(Array.from({ length: JOBS }, (_, index) => createImage(gateways[index % 2], `image ${index}`)));
    for (const id of ids) {
      await vi.waitFor(async () => expect((await readTask(gateways[0], id)).status).toBe("completed"), DONE);
    }
    for (const [index, id] of ids.entries()) {
      const task = (await gateways[0].core.tasks.store.get("org_test", id))!;
      expect(bfl.polls(task.upstreamJobId), `polls of job ${index}`).toBe(4);
      // The other instance answers the same task and serves its asset.
      const seen = await readTask(gateways[1 - (index % 2)], id);
      expect(seen).toMatchObject({ chat_id: id, status: "completed" });
      const asset = await fetch(seen.data[0].url, { headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect(Buffer.from(await asset.arrayBuffer()).equals(TINY_PNG)).toBe(true);
    }
    expect(bfl.requests.filter((request) => request.method === "POST")).toHaveLength(JOBS);
    expect(await balance(gateways[0])).toBe(before - BigInt(JOBS) * nanosOf(FLUX_IMAGE_PRICE));
  });
});

describe("a task whose instance dies", { timeout: 30_000 }, () => {
  it("is taken over by another instance once its lease passes, finished and charged once", async () => {
    // The job stays running until the test lets it finish: the first instance cannot finish it before it dies, however
    // fast it polls, and the second finishes it only once it took it over.
    const bfl = await startFakeBfl({ runningAtPoll: 2, doneAtPoll: 3 });
    const config = imageTaskConfig(bfl.url, { lease_seconds: 0.3, poll_interval_ms: 20, poll_max_interval_ms: 20 });
    const env = { ...IMAGE_TASK_ENV, REDIS_URL: redis.url, REDIS_PREFIX: "takeover:" };
    const first = await startGateway(config, { env });
    let second: Gateway | undefined;
    try {
      const before = await balance(first);
      const id = await createImage(first, `taken over ${STALL_PROMPT}`);
      // Running as the first instance saved it (the fake counting its poll is not enough: the answer may still be on its way).
      const jobId = await vi.waitFor(async () => {
        const task = await first.core.tasks.store.get("org_test", id);
        expect(task?.status).toBe(TaskStatus.RUNNING);
        return task!.upstreamJobId;
      }, DONE);
      // The first instance dies: its run stops, its lease stays until it passes.
      await first.core.tasks.poller.halt();
      const pollsAtDeath = bfl.polls(jobId);
      expect((await readTask(first, id)).status).toBe("running");
      bfl.jobs.jobs.get(jobId)!.outcome = "succeeded";
      second = await startGateway(config, { env });
      await vi.waitFor(async () => expect((await readTask(second!, id)).status).toBe("completed"), DONE);
      // Finished by the second instance's polls, from the job the first submitted.
      expect(bfl.polls(jobId)).toBeGreaterThan(pollsAtDeath);
      expect(bfl.requests.filter((request) => request.method === "POST")).toHaveLength(1);
      expect(await balance(second)).toBe(before - nanosOf(FLUX_IMAGE_PRICE));
    } finally {
      await second?.close();
      await first.close();
      await bfl.close();
    }
  });
});
