// Fallback and waiting (docs/tasks.md, "Fallback" and "Waiting for an
// asynchronous provider"): with response_type left out, a synchronous
// provider failing for now (a 503, or no first byte within the attempt's
// bound) hands the task to the model's next provider at once, shown in
// x-router-trace; with response_type sync only synchronous providers are
// tried; sync on a model with only an asynchronous provider waits for the
// task and answers OpenAI's images object, through the official SDK, or,
// past tasks.sync_wait_ms, the task as it stands.
import http from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BFL_KEY, startFakeBfl } from "../../../support/fake-media-bfl.ts";
import { STALL_PROMPT, TINY_PNG, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { OPENAI_MEDIA_KEY, startFakeOpenAiMedia, type FakeOpenAiMedia } from "../../../support/fake-media-openai.ts";
import { nanosOf } from "../../../support/exact-money.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { mediaTaskConfig, TASK_ACCOUNTS_ENV, type MediaRoute } from "../../../support/media-task-config.ts";
import { taskClient, type TaskClient } from "../../../support/video-task-harness.ts";

/** A synchronous (OpenAI) route, then an asynchronous (BFL) one. */
const BOTH = "test/both-kinds";
/** Two synchronous routes (two providers on the OpenAI fake) and an asynchronous one. */
const TWO_SYNC = "test/two-sync";
/** A synchronous route that never answers, then an asynchronous one. */
const SILENT_FIRST = "test/silent-first";
const FLUX = "bfl/flux-2-pro";
const FLUX_PRICE = "0.03";
/** The injected bound on a synchronous attempt's first byte: small, so the silent provider is left at once. */
const FIRST_BYTE_MS = 200;

let openai: FakeOpenAiMedia;
let bfl: FakeMediaUpstream;
let silent: http.Server;
let gateway: Gateway;
let images: TaskClient;

const priced = (provider: string, providerModelId: string, price: string): MediaRoute => ({ provider, providerModelId, pricing: { image_output: price } });

function config(tasks: Record<string, unknown> = {}) {
  const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
  const openaiProvider = (id: string, baseUrl: string) => ({ id, protocol: "openai-compatible", base_url: baseUrl, api_key_env: "OPENAI_API_KEY", request_timeout_ms: 60_000 });
  return mediaTaskConfig(
    [
      openaiProvider("openai", openai.url),
      openaiProvider("openai-b", openai.url),
      openaiProvider("silent", silentUrl),
      { id: "bfl", protocol: "bfl", base_url: bfl.url, api_key_env: "BFL_API_KEY", timeout_ms: 5000 },
    ],
    [
      { id: BOTH, output: "image", routes: [priced("openai", "dall-e-2", "0.02"), priced("bfl", "flux-2-pro", FLUX_PRICE)] },
      { id: TWO_SYNC, output: "image", routes: [priced("openai", "dall-e-2", "0.02"), priced("openai-b", "dall-e-2", "0.02"), priced("bfl", "flux-2-pro", FLUX_PRICE)] },
      { id: SILENT_FIRST, output: "image", routes: [priced("silent", "dall-e-2", "0.02"), priced("bfl", "flux-2-pro", FLUX_PRICE)] },
      { id: FLUX, output: "image", routes: [priced("bfl", "flux-2-pro", FLUX_PRICE)] },
    ],
    { attempt_first_byte_timeout_ms: FIRST_BYTE_MS, ...tasks },
  );
}

const ENV = { OPENAI_API_KEY: OPENAI_MEDIA_KEY, BFL_API_KEY: BFL_KEY, ...TASK_ACCOUNTS_ENV };

beforeAll(async () => {
  openai = await startFakeOpenAiMedia();
  bfl = await startFakeBfl();
  // Takes the request and never answers: no first byte.
  silent = http.createServer(() => undefined).listen(0, "127.0.0.1");
  await new Promise((resolve) => silent.once("listening", resolve));
  gateway = await startGateway(config(), { env: ENV });
  images = taskClient(gateway, { kind: "images", model: BOTH });
});
afterAll(async () => {
  await gateway?.close();
  silent?.closeAllConnections();
  silent?.close();
  await openai?.close();
  await bfl?.close();
});

const OVERLOADED = { error: { message: "The server is overloaded or not ready yet.", type: "server_error", param: null, code: null } };
const imageCalls = () => openai.requests.filter((request) => request.method === "POST" && request.path === "/v1/images/generations");
const bflSubmissions = (prompt: string) => bfl.requests.filter((request) => request.method === "POST" && request.body.prompt === prompt);

/** A create through plain fetch, with the answer's routing trace. */
async function create(body: Record<string, unknown>) {
  const response = await fetch(`${gateway.apiUrl}/images/generations`, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as Record<string, any>, trace: response.headers.get("x-router-trace") };
}

describe("response_type left out", () => {
  it("falls through from a synchronous provider's 503 to the asynchronous one at once: the task, traced, made and charged there", async () => {
    const before = await images.balance();
    const calls = imageCalls().length;
    openai.answerNextWith("POST", /^\/v1\/images\/generations$/, 503, OVERLOADED);
    const { status, json, trace } = await create({ model: BOTH, prompt: "after a 503" });
    expect(status, JSON.stringify(json)).toBe(200);
    expect(json).toMatchObject({ taskId: expect.any(String), object: "image.task" });
    expect(trace).toBe(`${BOTH}@openai;error;http_503, ${BOTH}@bfl;ok`);
    // One synchronous attempt only, then BFL.
    expect(imageCalls().length).toBe(calls + 1);
    const done = await images.finished(json.taskId);
    expect(done).toMatchObject({ status: "completed", usage: { images: 1 } });
    expect(bflSubmissions("after a 503")).toHaveLength(1);
    expect(await images.balance()).toBe(before - nanosOf(FLUX_PRICE));
    expect((await images.stored(json.taskId)).attempts).toMatchObject([{ provider: "openai", outcome: "error", reason: "http_503" }]);
  });

  it("leaves a synchronous provider that sends no first byte within the attempt's bound for the asynchronous one", async () => {
    const { status, json, trace } = await create({ model: SILENT_FIRST, prompt: "nobody answers" });
    expect(status, JSON.stringify(json)).toBe(200);
    expect(trace).toBe(`${SILENT_FIRST}@silent;error;first_byte_timeout, ${SILENT_FIRST}@bfl;ok`);
    expect(await images.finished(json.taskId)).toMatchObject({ status: "completed" });
  });
});

describe("response_type sync", () => {
  it("tries only synchronous providers: the second serves after the first's 503, both in the trace", async () => {
    const calls = imageCalls().length;
    openai.answerNextWith("POST", /^\/v1\/images\/generations$/, 503, OVERLOADED);
    const { status, json, trace } = await create({ model: TWO_SYNC, prompt: "sync only", response_type: "sync" });
    expect(status, JSON.stringify(json)).toBe(200);
    expect(json.data).toHaveLength(1);
    expect(trace).toBe(`${TWO_SYNC}@openai;error;http_503, ${TWO_SYNC}@openai-b;ok`);
    expect(imageCalls().length).toBe(calls + 2);
    expect(bflSubmissions("sync only")).toHaveLength(0);
  });

  it("says each provider's failure when the last synchronous one refuses too", async () => {
    openai.answerNextWith("POST", /^\/v1\/images\/generations$/, 503, OVERLOADED);
    openai.answerNextWith("POST", /^\/v1\/images\/generations$/, 400, { error: { message: "Invalid size.", type: "invalid_request_error", param: "size", code: null } });
    const { status, json, trace } = await create({ model: TWO_SYNC, prompt: "both fail", response_type: "sync" });
    expect(status, JSON.stringify(json)).toBe(502);
    expect(json.error).toMatchObject({ code: "upstream_error", message: expect.stringContaining("Invalid size.") });
    expect(trace).toBe(`${TWO_SYNC}@openai;error;http_503, ${TWO_SYNC}@openai-b;error;upstream_error`);
    expect(bflSubmissions("both fail")).toHaveLength(0);
  });

  it("waits for a model with only an asynchronous provider and answers as a synchronous one: the SDK's data[0].url", async () => {
    const sdk = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
    const answer = await sdk.images.generate({ model: FLUX, prompt: "waited for", response_type: "sync" } as OpenAI.ImageGenerateParamsNonStreaming);
    const url = answer.data![0].url!;
    const download = await images.download(url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(TINY_PNG)).toBe(true);
    expect(answer.usage).toMatchObject({ images: 1, cost: Number(FLUX_PRICE) });
    expect(bflSubmissions("waited for")).toHaveLength(1);
  });

  it("answers the task as it stands past tasks.sync_wait_ms, which goes on and can be read", async () => {
    const brief = await startGateway(config({ sync_wait_ms: 1 }), { env: ENV });
    try {
      const response = await fetch(`${brief.apiUrl}/images/generations`, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model: FLUX, prompt: STALL_PROMPT, response_type: "sync" }) });
      const json = (await response.json()) as Record<string, any>;
      expect(response.status, JSON.stringify(json)).toBe(200);
      expect(json).toMatchObject({ taskId: expect.any(String), object: "image.task", data: [] });
      expect(["queued", "running"]).toContain(json.status);
      const read = await fetch(`${brief.apiUrl}/images/${json.taskId}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect(read.status).toBe(200);
    } finally {
      await brief.close();
    }
  });
});
