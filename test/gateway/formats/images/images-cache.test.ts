// The media cache (issue 23) on the image endpoints, end to end against the
// BFL and OpenAI media fakes: a create with a `cache_key` header that repeats
// one whose task succeeded answers that task (same id, completed) without a
// second upstream job, charged a tenth of its cost under a usage record of its
// own marked as a hit; another organisation, another prompt, size or n, no
// header, or a failed original all make a new task; a synchronous image hit
// answers the images at once; the key -> task map ends with the task's
// retention (injected clock); two instances sharing Redis share it.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFakeBfl, BFL_KEY } from "../../../support/fake-media-bfl.ts";
import { FAIL_PROMPT, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { OPENAI_MEDIA_KEY, startFakeOpenAiMedia, type FakeOpenAiMedia } from "../../../support/fake-media-openai.ts";
import { nanosOf } from "../../../support/exact-money.ts";
import { startGateway, type Gateway } from "../../../support/harness.ts";
import { mediaTaskConfig, OTHER_KEY, TASK_ACCOUNTS_ENV } from "../../../support/media-task-config.ts";
import { startRedisServer, type RedisServer } from "../../../support/redis-server.ts";
import { keyedAssetUrl, taskClient, type TaskClient } from "../../../support/video-task-harness.ts";

const FLUX = "bfl/flux-2-pro";
const FLUX_PRICE = "0.03";
const DALLE = "openai/dall-e-3";
const DALLE_PRICE = "0.04";
const RETENTION_SECONDS = 3600;
const ENV = { BFL_API_KEY: BFL_KEY, OPENAI_API_KEY: OPENAI_MEDIA_KEY, ...TASK_ACCOUNTS_ENV };

function config(bflUrl: string, openaiUrl: string) {
  return mediaTaskConfig(
    [
      { id: "bfl", label: "Black Forest Labs", protocol: "bfl", base_url: bflUrl, api_key_env: "BFL_API_KEY", timeout_ms: 5000 },
      { id: "openai", label: "OpenAI", protocol: "openai-compatible", base_url: openaiUrl, api_key_env: "OPENAI_API_KEY", request_timeout_ms: 5000 },
    ],
    [
      { id: FLUX, output: "image", routes: [{ provider: "bfl", providerModelId: "flux-2-pro", pricing: { image_output: FLUX_PRICE } }] },
      { id: DALLE, output: "image", routes: [{ provider: "openai", providerModelId: "dall-e-3", pricing: { image_output: DALLE_PRICE } }] },
    ],
    { retention_seconds: RETENTION_SECONDS },
  );
}

/** A tenth of a price, in nanos: what a hit is charged. */
const tenthOf = (price: string) => nanosOf(price) / 10n;

let bfl: FakeMediaUpstream;
let openai: FakeOpenAiMedia;
let gateway: Gateway;
let flux: TaskClient;
let dalle: TaskClient;
/** The core's clock runs `skewMs` ahead of the wall clock: retention is crossed by moving it. */
let skewMs = 0;

beforeAll(async () => {
  bfl = await startFakeBfl();
  openai = await startFakeOpenAiMedia();
  gateway = await startGateway(config(bfl.url, openai.url), { env: ENV, core: { now: () => new Date(Date.now() + skewMs) } });
  flux = taskClient(gateway, { kind: "images", model: FLUX });
  dalle = taskClient(gateway, { kind: "images", model: DALLE });
});
afterAll(async () => {
  await gateway?.close();
  await bfl?.close();
  await openai?.close();
});

const bflJobs = (upstream: FakeMediaUpstream = bfl) => upstream.requests.filter((request) => request.method === "POST").length;
const openaiCalls = () => openai.requests.filter((request) => request.method === "POST" && request.path === "/v1/images/generations").length;

/** Creates a task with the cache key and waits until it has ended; answers the create's answer and the ended task. */
async function createEnded(client: TaskClient, body: Record<string, unknown>, cacheKey: string, key?: string) {
  const created = await client.create(body, { cacheKey, key });
  expect(created.status, JSON.stringify(created.json)).toBe(200);
  const ended = key ? undefined : await client.finished(created.json.taskId);
  return { created: created.json, ended };
}

describe("an image create with a cache_key", { timeout: 30_000 }, () => {
  it("answers the succeeded task again (same id, completed) with no second BFL job, charged a tenth, recorded as a hit", async () => {
    const body = { prompt: "a cached fox", size: "1024x768" };
    const { created, ended } = await createEnded(flux, body, "fox-1");
    expect(created).toMatchObject({ status: "queued", cached: false });
    expect(created.usage_id).toBeUndefined();
    expect(ended).toMatchObject({ status: "completed" });
    const jobs = bflJobs();
    const before = await flux.balance();

    const again = await flux.create(body, { cacheKey: "fox-1" });
    expect(again.status, JSON.stringify(again.json)).toBe(200);
    expect(again.json).toMatchObject({ taskId: created.taskId, chat_id: created.taskId, status: "completed", cached: true, usage_id: expect.stringMatching(/^rtr_/) });
    expect(keyedAssetUrl(again.json.data[0].url)).toBe(keyedAssetUrl(ended!.data[0].url));
    expect(bflJobs()).toBe(jobs);
    expect(await flux.balance()).toBe(before - tenthOf(FLUX_PRICE));

    // The hit's own usage record: a tenth of the original's cost, marked; the task's record is the original's.
    const record = await gateway.core.accounts.usage.get("org_test", again.json.usage_id);
    expect(record).toMatchObject({ id: again.json.usage_id, model: FLUX, provider: "bfl", outcome: "ok", cost: "0.003", cacheHit: true, cacheSimilarity: 1, keyId: "key_test" });
    expect(await gateway.core.accounts.usage.get("org_test", created.taskId)).toMatchObject({ cost: FLUX_PRICE });
    expect((await gateway.core.accounts.usage.get("org_test", created.taskId))?.cacheHit).toBeUndefined();
  });

  it("is scoped to the organisation: another organisation with the same key and body makes its own task", async () => {
    const body = { prompt: "a fox for two organisations" };
    const { created } = await createEnded(flux, body, "shared-key");
    const jobs = bflJobs();
    const other = await flux.create(body, { cacheKey: "shared-key", key: OTHER_KEY });
    expect(other.status).toBe(200);
    expect(other.json).toMatchObject({ status: "queued", cached: false });
    expect(other.json.taskId).not.toBe(created.taskId);
    await vi.waitFor(() => expect(bflJobs()).toBe(jobs + 1), { timeout: 5000, interval: 10 });
  });

  it.each([
    ["another prompt", { prompt: "a fox, then another" }],
    ["another size", { size: "768x1024" }],
    ["another n", { n: 2 }],
    ["another seed", { seed: 7 }],
  ])("misses with %s", async (_what, change) => {
    const body = { prompt: `a fox to change ${_what}`, size: "1024x768" };
    const { created } = await createEnded(flux, body, "change-key");
    const changed = await flux.create({ ...body, ...change }, { cacheKey: "change-key" });
    expect(changed.status, JSON.stringify(changed.json)).toBe(200);
    expect(changed.json).toMatchObject({ status: "queued", cached: false });
    expect(changed.json.taskId).not.toBe(created.taskId);
    // The same body again still hits the first task.
    expect((await flux.create(body, { cacheKey: "change-key" })).json).toMatchObject({ taskId: created.taskId, cached: true });
  });

  it("misses with another cache_key, and without the header makes a new task and says nothing of the cache", async () => {
    const body = { prompt: "a fox with and without a key" };
    const { created } = await createEnded(flux, body, "key-a");
    const other = await flux.create(body, { cacheKey: "key-b" });
    expect(other.json).toMatchObject({ cached: false });
    expect(other.json.taskId).not.toBe(created.taskId);
    const plain = await flux.create(body);
    expect(plain.status).toBe(200);
    expect(plain.json.taskId).not.toBe(created.taskId);
    expect("cached" in plain.json).toBe(false);
  });

  it("never reuses a failed task: the same request runs again", async () => {
    const body = { prompt: `a fox ${FAIL_PROMPT}` };
    const { created, ended } = await createEnded(flux, body, "failing");
    expect(ended).toMatchObject({ status: "failed" });
    const jobs = bflJobs();
    const again = await flux.create(body, { cacheKey: "failing" });
    expect(again.json).toMatchObject({ status: "queued", cached: false });
    expect(again.json.taskId).not.toBe(created.taskId);
    await vi.waitFor(() => expect(bflJobs()).toBe(jobs + 1), { timeout: 5000, interval: 10 });
  });

  it("is refused past 255 characters, naming cache_key, holding nothing", async () => {
    const before = await flux.balance();
    const answer = await flux.create({ prompt: "a fox" }, { cacheKey: "k".repeat(256) });
    expect(answer.status).toBe(400);
    expect(answer.json.error).toMatchObject({ param: "cache_key" });
    expect(await flux.balance()).toBe(before);
  });

  it("on a synchronous provider answers the original images at once, with no second provider call", async () => {
    const body = { prompt: "a synchronous cached fox" };
    const first = await dalle.create(body, { cacheKey: "sync-1" });
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    expect(first.json).toMatchObject({ chat_id: expect.any(String), cached: false, data: [{ url: expect.any(String) }] });
    const calls = openaiCalls();
    const before = await dalle.balance();
    const again = await dalle.create(body, { cacheKey: "sync-1" });
    expect(again.status, JSON.stringify(again.json)).toBe(200);
    expect(again.json).toMatchObject({ chat_id: first.json.chat_id, model: DALLE, cached: true, usage_id: expect.any(String) });
    expect(again.json.data.map((image: { url: string }) => keyedAssetUrl(image.url))).toEqual(first.json.data.map((image: { url: string }) => keyedAssetUrl(image.url)));
    expect(openaiCalls()).toBe(calls);
    expect(await dalle.balance()).toBe(before - tenthOf(DALLE_PRICE));
    // The same through `response_format: b64_json`: the stored bytes, inline.
    const inline = await dalle.create({ ...body, response_format: "b64_json" }, { cacheKey: "sync-1" });
    expect(inline.json).toMatchObject({ chat_id: first.json.chat_id, cached: true, data: [{ b64_json: expect.any(String) }] });
    expect(openaiCalls()).toBe(calls);
  });

  // Last: it moves the core's clock past every task's retention.
  it("forgets the task once its retention has passed (the injected clock): the same request runs again", async () => {
    const body = { prompt: "a fox that expires" };
    const { created } = await createEnded(flux, body, "expiring");
    skewMs += (RETENTION_SECONDS - 1) * 1000;
    expect((await flux.create(body, { cacheKey: "expiring" })).json).toMatchObject({ taskId: created.taskId, cached: true });
    skewMs += 1000;
    const jobs = bflJobs();
    const after = await flux.create(body, { cacheKey: "expiring" });
    expect(after.json).toMatchObject({ status: "queued", cached: false });
    expect(after.json.taskId).not.toBe(created.taskId);
    await vi.waitFor(() => expect(bflJobs()).toBe(jobs + 1), { timeout: 5000, interval: 10 });
  });
});

describe("the image cache on two instances sharing one Redis", { timeout: 30_000 }, () => {
  let redis: RedisServer;
  let shared: FakeMediaUpstream;
  const gateways: Gateway[] = [];
  beforeAll(async () => {
    redis = await startRedisServer();
    shared = await startFakeBfl();
    // One configuration: one assets directory, as instances sharing Redis must (docs/tasks.md, "Assets").
    const both = config(shared.url, openai.url);
    const env = { ...ENV, REDIS_URL: redis.url, REDIS_PREFIX: "media-cache:" };
    gateways.push(await startGateway(both, { env }), await startGateway(both, { env }));
  });
  afterAll(async () => {
    await Promise.all(gateways.map((each) => each.close()));
    await shared?.close();
    await redis?.stop();
  });

  it("answers on one instance the task the other made, charged a tenth on the shared balance", async () => {
    const [first, second] = gateways.map((each) => taskClient(each, { kind: "images", model: FLUX }));
    const body = { prompt: "a fox across instances" };
    const { created } = await createEnded(first, body, "across");
    const jobs = bflJobs(shared);
    const before = await second.balance();
    const hit = await second.create(body, { cacheKey: "across" });
    expect(hit.json).toMatchObject({ taskId: created.taskId, status: "completed", cached: true });
    expect(bflJobs(shared)).toBe(jobs);
    expect(await second.balance()).toBe(before - tenthOf(FLUX_PRICE));
    await gateways[1].core.accounts.usage.flush();
    expect(await gateways[0].core.accounts.usage.get("org_test", hit.json.usage_id)).toMatchObject({ cacheHit: true, cost: "0.003" });
  });
});
