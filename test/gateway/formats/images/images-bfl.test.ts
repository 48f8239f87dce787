// Image tasks on the BFL protocol, end to end through the gateway against the
// BFL fake: created, polled until done (with BFL's own polling_url), the image
// downloaded from the gateway's hosted URL byte for byte as the fake made it,
// also after the fake's URL expired; failures and moderation end failed with
// BFL's words and return the hold; another organisation sees nothing;
// Idempotency-Key makes one task; parameters are checked before anything is held.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BFL_FAILURE_DETAILS, startFakeBfl } from "../../../support/fake-media-bfl.ts";
import { FAIL_PROMPT, MODERATE_PROMPT, REFUSE_PROMPT, STALL_PROMPT, TINY_PNG, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { FLUX_IMAGE_PRICE, FLUX_MODEL, IMAGE_TASK_ENV, imageTaskConfig, OTHER_KEY } from "../../../support/image-task-config.ts";
import { nanosOf } from "../../../support/exact-money.ts";
import { keyedAssetUrl, TASK_DONE, taskClient, type TaskClient } from "../../../support/video-task-harness.ts";
import { loadConfigFile } from "../../../../core/config/load.ts";
import { TaskStatus } from "../../../../gen/router/v1/tasks_pb.js";

let fakeNow = Date.now();
let bfl: FakeMediaUpstream;
let gateway: Gateway;

let images: TaskClient;

beforeAll(async () => {
  bfl = await startFakeBfl({ now: () => fakeNow, pollingHost: "localhost" });
  gateway = await startGateway(imageTaskConfig(bfl.url), { env: IMAGE_TASK_ENV });
  images = taskClient(gateway, { kind: "images", model: FLUX_MODEL });
});
afterAll(async () => {
  await gateway?.close();
  await bfl?.close();
});

describe("an image task on BFL", () => {
  it("is created queued, polled at BFL's polling_url until Ready, and served from the gateway byte for byte, also after BFL's URL expired", async () => {
    const before = await images.balance();
    const created = await images.create({ prompt: "a red pixel", size: "1024x768", output_format: "png" });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    expect(created.json).toMatchObject({ taskId: expect.stringMatching(/^rtr_/), status: "queued", model: FLUX_MODEL });
    const id = created.json.taskId as string;

    const done = await images.finished(id);
    expect(done).toMatchObject({ chat_id: id, status: "completed", progress: 100, size: "1024x768", router_assets: { status: "ready" }, error: null });
    expect(done.created).toBeTypeOf("number");
    expect(done.data).toHaveLength(1);
    expect(done.router_assets.urls).toEqual([done.data[0].url]);
    expect(Date.parse(done.router_assets.expires_at)).toBeGreaterThan(Date.parse(done.router_assets.cached_at));

    // BFL got the request as its API takes it, and the job was polled at the URL it gave (another host name).
    const submit = bfl.requests.find((request) => request.method === "POST")!;
    expect(submit.path).toBe("/v1/flux-2-pro");
    expect(submit.headers["x-key"]).toBe(IMAGE_TASK_ENV.BFL_API_KEY);
    expect(submit.body).toEqual({ prompt: "a red pixel", width: 1024, height: 768, output_format: "png" });
    const task = (await images.stored(id))!;
    expect(task.polling!.pollingUrl).toContain("//localhost:");
    expect(bfl.polls(task.upstreamJobId)).toBe(3);

    const download = () => images.download(done.data[0].url);
    let asset = await download();
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toBe("image/png");
    expect(asset.headers.get("accept-ranges")).toBe("bytes");
    expect(Buffer.from(await asset.arrayBuffer()).equals(TINY_PNG)).toBe(true);

    // BFL's own URL dies after 10 minutes; the hosted copy does not.
    fakeNow += 11 * 60_000;
    expect((await fetch(task.outputs[0].url)).status).toBe(403);
    asset = await download();
    expect(Buffer.from(await asset.arrayBuffer()).equals(TINY_PNG)).toBe(true);

    // Charged one image at the catalogue's price, once.
    expect(await images.balance()).toBe(before - nanosOf(FLUX_IMAGE_PRICE));
    expect(done.usage).toEqual({ images: 1, cost: Number(FLUX_IMAGE_PRICE) });
    // The task id is the id of its usage record too.
    const generation = await fetch(`${gateway.apiUrl}/generation?id=${id}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(((await generation.json()) as any).data).toMatchObject({ id, model: FLUX_MODEL, provider_name: "bfl", total_cost: Number(FLUX_IMAGE_PRICE), outcome: "ok", api_key_id: "key_test" });
  });

  it("serves byte ranges of the hosted asset (206 with Content-Range; 416 past the end)", async () => {
    const { json } = await images.create({ prompt: "ranges" });
    const done = await images.finished(json.taskId);
    const ranged = (range: string) => images.download(done.data[0].url, TEST_KEY, range);
    let answer = await ranged("bytes=0-7");
    expect(answer.status).toBe(206);
    expect(answer.headers.get("content-range")).toBe(`bytes 0-7/${TINY_PNG.length}`);
    expect(Buffer.from(await answer.arrayBuffer()).equals(TINY_PNG.subarray(0, 8))).toBe(true);
    answer = await ranged("bytes=-4");
    expect(answer.headers.get("content-range")).toBe(`bytes ${TINY_PNG.length - 4}-${TINY_PNG.length - 1}/${TINY_PNG.length}`);
    expect(Buffer.from(await answer.arrayBuffer()).equals(TINY_PNG.subarray(-4))).toBe(true);
    answer = await ranged(`bytes=${TINY_PNG.length - 2}-`);
    expect(Buffer.from(await answer.arrayBuffer()).equals(TINY_PNG.subarray(-2))).toBe(true);
    answer = await ranged(`bytes=${TINY_PNG.length}-`);
    expect(answer.status).toBe(416);
    expect(answer.headers.get("content-range")).toBe(`bytes */${TINY_PNG.length}`);
  });

  it.each([
    { prompt: `a cat ${FAIL_PROMPT}`, code: "upstream_error", message: BFL_FAILURE_DETAILS.error },
    { prompt: `a cat ${MODERATE_PROMPT}`, code: "content_moderated", message: "Moderated: Derivative Works Filter" },
    { prompt: `a cat ${REFUSE_PROMPT}`, code: "request_moderated", message: "Moderated: Derivative Works Filter" },
  ])("ends failed with BFL's words ($code) and returns the hold: the balance is unchanged", async ({ prompt, code, message }) => {
    const before = await images.balance();
    const { json } = await images.create({ prompt });
    const done = await images.finished(json.taskId);
    expect(done).toMatchObject({ status: "failed", error: { code, message }, data: [], usage: { images: 0, cost: 0 } });
    expect(await images.balance()).toBe(before);
    const record = await gateway.core.accounts.usage.get("org_test", json.taskId);
    expect(record).toMatchObject({ outcome: code, cost: "0" });
  });

  it("is 404 task_not_found to another organisation, for the task (by either id) and for its asset", async () => {
    const { json } = await images.create({ prompt: "mine" });
    const done = await images.finished(json.taskId);
    const task = await images.read(json.taskId, OTHER_KEY);
    expect(task.status).toBe(404);
    expect(task.json.error).toMatchObject({ code: "task_not_found" });
    const asset = await images.download(done.data[0].url, OTHER_KEY);
    expect(asset.status).toBe(404);
    expect(((await asset.json()) as any).error).toMatchObject({ code: "task_not_found" });
    // The provider-prefixed id (`bfl:<BFL's job id>`) names the same task, to its organisation only.
    const upstreamId = (await images.stored(json.taskId))!.upstreamJobId;
    expect((await images.read(`bfl:${upstreamId}`)).json).toMatchObject({ chat_id: json.taskId, status: "completed" });
    expect((await images.read(`bfl:${upstreamId}`, OTHER_KEY)).status).toBe(404);
    expect((await images.read("bfl:no-such-job")).status).toBe(404);
    const unknown = await images.read("rtr_unknown");
    expect(unknown.status).toBe(404);
    // And without a key, 401 first (on the authenticated route: the answer's URL is a signed link, which needs none).
    expect((await fetch(keyedAssetUrl(done.data[0].url))).status).toBe(401);
  });

  it("with one Idempotency-Key makes one task and one charge; another organisation's same key is its own task", async () => {
    const before = await images.balance();
    const submitsBefore = bfl.requests.filter((request) => request.method === "POST").length;
    const first = await images.create({ prompt: "only once" }, { idempotencyKey: "key-1" });
    const again = await images.create({ prompt: "only once" }, { idempotencyKey: "key-1" });
    expect(again.json.taskId).toBe(first.json.taskId);
    const other = await images.create({ prompt: "only once" }, { idempotencyKey: "key-1", key: OTHER_KEY });
    expect(other.json.taskId).not.toBe(first.json.taskId);
    await images.finished(first.json.taskId);
    await vi.waitFor(async () => expect((await gateway.core.tasks.store.get("org_other", other.json.taskId))?.status).toBe(TaskStatus.SUCCEEDED), TASK_DONE);
    expect(bfl.requests.filter((request) => request.method === "POST").length).toBe(submitsBefore + 2);
    expect(await images.balance()).toBe(before - nanosOf(FLUX_IMAGE_PRICE));
    // The key again with something else asked is refused, and holds nothing.
    const changed = await images.create({ prompt: "something else" }, { idempotencyKey: "key-1" });
    expect(changed.status).toBe(400);
    expect(changed.json.error).toMatchObject({ code: "idempotency_key_reused", param: "Idempotency-Key" });
    expect(await images.balance()).toBe(before - nanosOf(FLUX_IMAGE_PRICE));
  });

  it.each([
    [{ n: 0 }, "n"],
    [{ n: 11 }, "n"],
    [{ prompt: undefined }, "prompt"],
    [{ background: "transparent", output_format: "jpeg" }, "background"],
    [{ output_format: "webp" }, "output_format"],
    [{ quality: "high" }, "quality"],
    [{ size: "big" }, "size"],
    [{ response_format: "b64_json" }, "response_format"],
    [{ colour: "red" }, "colour"],
  ])("refuses %j with a 400 naming %s, holding nothing", async (fields, param) => {
    const before = await images.balance();
    const { status, json } = await images.create({ prompt: "checked", ...fields });
    expect(status, JSON.stringify(json)).toBe(400);
    expect(json.error.param).toBe(param);
    expect(await images.balance()).toBe(before);
  });

  it("takes n 1 and response_type async", async () => {
    const { status, json } = await images.create({ prompt: "one", n: 1, response_type: "async" });
    expect(status).toBe(200);
    expect(json.taskId).toBeTruthy();
    await images.finished(json.taskId);
  });

  it("lists the organisation's tasks, newest first", async () => {
    const tasks = await gateway.core.tasks.list({ apiKey: TEST_KEY } as never, 2);
    expect(tasks).toHaveLength(2);
    const created = tasks.map((task) => Number(task.createdAt!.seconds) * 1000 + task.createdAt!.nanos / 1e6);
    expect(created[0]).toBeGreaterThanOrEqual(created[1]);
    expect(tasks.every((task) => task.organizationId === "org_test")).toBe(true);
  });
});

describe("an image task past its retention", () => {
  it("is 404 task_not_found, and its assets are removed by the sweep (other tasks' stay)", async () => {
    let offset = 0;
    const later = await startGateway(imageTaskConfig(bfl.url, { retention_seconds: 60 }), { env: IMAGE_TASK_ENV, core: { now: () => new Date(Date.now() + offset) } });
    try {
      const tasks = taskClient(later, { kind: "images", model: FLUX_MODEL });
      const old = await tasks.created({ prompt: "old" });
      expect((await tasks.finished(old)).status).toBe("completed");
      offset = 61_000;
      const fresh = await tasks.created({ prompt: "fresh" });
      expect((await tasks.finished(fresh)).status).toBe("completed");
      expect((await tasks.read(old)).status).toBe(404);
      expect(await later.core.tasks.sweepAssets()).toBe(1);
      expect(await later.core.tasks.assets.folders()).toEqual([`org_test/${fresh}`]);
    } finally {
      await later.close();
    }
  });
});

describe("the bundled default's BFL models", () => {
  it("run on the bfl protocol at their flat price (FLUX1.1 [pro] at 0.04), and refuse a size where BFL takes none", async () => {
    const config = loadConfigFile();
    const provider = config.providers.find((entry) => entry.id === "bfl")!;
    provider.base_url = bfl.url;
    const bundled = await startGateway(config, { env: { BFL_API_KEY: IMAGE_TASK_ENV.BFL_API_KEY, ROUTER_DEV_KEY: TEST_KEY } });
    try {
      const tasks = taskClient(bundled, { kind: "images", model: "bfl/flux-pro-1.1", organizationId: "org_dev" });
      const ultra = await tasks.create({ model: "bfl/flux-pro-1.1-ultra", prompt: "wide", size: "1024x1024" });
      expect(ultra.status).toBe(400);
      expect(ultra.json.error).toMatchObject({ param: "size", message: "bfl/flux-pro-1.1-ultra does not take size." });
      const done = await tasks.finished(await tasks.created({ prompt: "bundled", size: "1024x768" }));
      expect(done.status).toBe("completed");
      expect(done.usage).toEqual({ images: 1, cost: 0.04 });
      expect(bfl.requests.some((request) => request.method === "POST" && request.path === "/v1/flux-pro-1.1")).toBe(true);
    } finally {
      await bundled.close();
    }
  });
});

describe("an image task BFL refuses at submission", () => {
  it("ends failed at once with BFL's words (a wrong key: 403) and returns the hold", async () => {
    const refused = await startGateway(imageTaskConfig(bfl.url), { env: { ...IMAGE_TASK_ENV, BFL_API_KEY: "wrong-key" } });
    try {
      const tasks = taskClient(refused, { kind: "images", model: FLUX_MODEL });
      const before = await tasks.balance();
      const taskId = await tasks.created({ prompt: "refused" });
      const done = await vi.waitFor(async () => {
        const task = await refused.core.tasks.store.get("org_test", taskId);
        expect(task?.status).toBe(TaskStatus.FAILED);
        return task!;
      }, TASK_DONE);
      expect(done.error).toMatchObject({ code: "upstream_error", message: "BFL 403: Invalid API key" });
      expect(done.upstreamJobId).toBe("");
      expect(await tasks.balance()).toBe(before);
    } finally {
      await refused.close();
    }
  });
});

describe("an image task that never finishes", () => {
  it("ends failed (timeout) at its deadline and returns the hold", async () => {
    const slow = await startGateway(imageTaskConfig(bfl.url, { timeout_seconds: 0.3 }), { env: IMAGE_TASK_ENV });
    try {
      const tasks = taskClient(slow, { kind: "images", model: FLUX_MODEL });
      const before = await tasks.balance();
      const taskId = await tasks.created({ prompt: `forever ${STALL_PROMPT}` });
      const done = await vi.waitFor(async () => {
        const task = await slow.core.tasks.store.get("org_test", taskId);
        expect(task?.status).toBe(TaskStatus.FAILED);
        return task!;
      }, TASK_DONE);
      expect(done.error).toMatchObject({ code: "timeout" });
      expect(await tasks.balance()).toBe(before);
    } finally {
      await slow.close();
    }
  });
});
