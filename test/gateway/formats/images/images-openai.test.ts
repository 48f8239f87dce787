// Synchronous images on the openai-compatible protocol, end to end: the
// official `openai` SDK's images.generate against the gateway, which calls the
// OpenAI media fake's POST /v1/images/generations and answers OpenAI's images
// object once the images are stored: hosted URLs (which outlive the fake's) or
// the stored bytes as b64_json. response_type picks the kind of provider;
// failures and moderation answer the spec's error and return the hold.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfigFile } from "../../../../core/config/load.ts";
import { MODERATE_PROMPT, REFUSE_PROMPT, TINY_PNG, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { BFL_KEY, startFakeBfl } from "../../../support/fake-media-bfl.ts";
import { DALLE_MODERATION_MESSAGE, OPENAI_MEDIA_KEY, OPENAI_MODERATION_MESSAGE, startFakeOpenAiMedia, type FakeOpenAiMedia } from "../../../support/fake-media-openai.ts";
import { nanosOf } from "../../../support/exact-money.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { mediaTaskConfig, OTHER_KEY, TASK_ACCOUNTS_ENV, type MediaModel, type MediaRoute } from "../../../support/media-task-config.ts";
import { unsigned } from "../../../support/signed-link.ts";
import { taskClient, type TaskClient } from "../../../support/video-task-harness.ts";

const GPT_IMAGE = "openai/gpt-image-1.5";
const GPT_IMAGE_PRICE = "0.034";
const DALLE = "openai/dall-e-3";
const DALLE_PRICE = "0.04";
/** One model on both kinds of provider: a synchronous (OpenAI) and an asynchronous (BFL) route. */
const BOTH = "test/both-kinds";
const FLUX = "bfl/flux-2-pro";

let fakeNow = Date.now();
let openai: FakeOpenAiMedia;
let bfl: FakeMediaUpstream;
let gateway: Gateway;
let sdk: OpenAI;
/** The gateway's image endpoints; each request names its model. */
let images: TaskClient;

function config(openaiUrl: string, bflUrl: string) {
  const imageModel = (id: string, routes: MediaRoute[], details: Record<string, unknown> = {}): MediaModel => ({ id, output: "image", details, routes });
  const priced = (provider: string, providerModelId: string, price: string): MediaRoute => ({ provider, providerModelId, pricing: { image_output: price } });
  return mediaTaskConfig(
    [
      { id: "openai", label: "OpenAI", protocol: "openai-compatible", base_url: openaiUrl, api_key_env: "OPENAI_API_KEY", request_timeout_ms: 5000 },
      { id: "bfl", label: "Black Forest Labs", protocol: "bfl", base_url: bflUrl, api_key_env: "BFL_API_KEY", timeout_ms: 5000 },
    ],
    [
      // One quality and one size listed: the flat price is that image's, so they are sent when left out.
      imageModel(GPT_IMAGE, [priced("openai", "gpt-image-1.5", GPT_IMAGE_PRICE)], { size: ["1024x1024"], quality: ["medium"], output_format: ["png", "jpeg", "webp"] }),
      imageModel(DALLE, [priced("openai", "dall-e-3", DALLE_PRICE)]),
      imageModel(FLUX, [priced("bfl", "flux-2-pro", "0.03")]),
      // The asynchronous route first: unset response_type still prefers the synchronous one.
      imageModel(BOTH, [priced("bfl", "flux-2-pro", "0.03"), priced("openai", "dall-e-2", "0.02")]),
    ],
  );
}

const ENV = { OPENAI_API_KEY: OPENAI_MEDIA_KEY, BFL_API_KEY: BFL_KEY, ...TASK_ACCOUNTS_ENV };

beforeAll(async () => {
  openai = await startFakeOpenAiMedia({ now: () => fakeNow });
  bfl = await startFakeBfl({ now: () => fakeNow });
  gateway = await startGateway(config(openai.url, bfl.url), { env: ENV });
  sdk = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
  images = taskClient(gateway, { kind: "images", model: DALLE });
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
  await bfl?.close();
});

const post = (body: Record<string, unknown>, key = TEST_KEY) => images.create(body, { key });
const balance = () => images.balance();
const imageCalls = () => openai.requests.filter((request) => request.method === "POST" && request.path === "/v1/images/generations");
const download = (url: string, key = TEST_KEY) => images.download(url, key);

describe("images.generate on a synchronous (OpenAI) provider", () => {
  it("answers OpenAI's images object with the hosted URL, which still serves the bytes after the provider's URL expired", async () => {
    const before = await balance();
    const answer = await sdk.images.generate({ model: DALLE, prompt: "a red pixel", size: "1024x1024" });
    expect(answer.data).toHaveLength(1);
    const url = answer.data![0].url!;
    expect(url.startsWith(`${gateway.url}/api/v1/assets/`)).toBe(true);
    expect(answer).toMatchObject({ created: expect.any(Number), size: "1024x1024", chat_id: expect.stringMatching(/^rtr_/), usage: { images: 1, cost: Number(DALLE_PRICE) } });

    // The provider got OpenAI's body: its own model id, and no response_format (its default URL is fetched at once).
    const call = imageCalls().at(-1)!;
    expect(call.headers.authorization).toBe(`Bearer ${OPENAI_MEDIA_KEY}`);
    expect(call.body).toEqual({ prompt: "a red pixel", model: "dall-e-3", n: 1, size: "1024x1024" });

    let asset = await download(url);
    expect(asset.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await asset.arrayBuffer()).equals(TINY_PNG)).toBe(true);
    // OpenAI's URLs live an hour; the hosted copy does not depend on them.
    const chatId = (answer as unknown as { chat_id: string }).chat_id;
    const task = (await gateway.core.tasks.store.get("org_test", chatId))!;
    fakeNow += 61 * 60_000;
    expect((await fetch(task.outputs[0].url)).status).toBe(403);
    asset = await download(url);
    expect(Buffer.from(await asset.arrayBuffer()).equals(TINY_PNG)).toBe(true);

    expect(await balance()).toBe(before - nanosOf(DALLE_PRICE));
    // The task is readable as any image task, by its id and by the provider-prefixed one.
    const read = await fetch(`${gateway.apiUrl}/images/openai:${task.upstreamJobId}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    // Each read signs its links afresh: the same asset, whatever expiry the second read gave it.
    expect(unsigned(await read.json())).toMatchObject({ chat_id: chatId, status: "completed", data: [{ url: unsigned(url) }], router_assets: { status: "ready" } });
  });

  it("answers b64_json with the stored bytes, equal to the provider's (a GPT image model, whose one quality and size are sent)", async () => {
    const before = await balance();
    const answer = await sdk.images.generate({ model: GPT_IMAGE, prompt: "base64 please", response_format: "b64_json", output_format: "png" });
    expect(answer.data).toHaveLength(1);
    expect(answer.data![0].url).toBeUndefined();
    expect(Buffer.from(answer.data![0].b64_json!, "base64").equals(TINY_PNG)).toBe(true);
    expect(answer).toMatchObject({ size: "1024x1024", quality: "medium", output_format: "png" });
    // The provider's token counts are shown (the SDK's ImagesResponse.Usage), but a route priced per image is charged its price.
    const tokens = { input_tokens: 2, output_tokens: 272, total_tokens: 274, input_tokens_details: { text_tokens: 2, image_tokens: 0 }, output_tokens_details: { image_tokens: 272, text_tokens: 0 } };
    expect(answer.usage).toEqual({ images: 1, cost: Number(GPT_IMAGE_PRICE), ...tokens });
    // GPT image models refuse response_format: it is not sent.
    expect(imageCalls().at(-1)!.body).toEqual({ prompt: "base64 please", model: "gpt-image-1.5", n: 1, size: "1024x1024", quality: "medium", output_format: "png" });
    expect(await balance()).toBe(before - nanosOf(GPT_IMAGE_PRICE));
  });

  it("answers an Idempotency-Key replay with the same images, generated and charged once", async () => {
    const before = await balance();
    const calls = imageCalls().length;
    const headers = { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", "idempotency-key": "sync-once" };
    const send = async () => (await fetch(`${gateway.apiUrl}/images/generations`, { method: "POST", headers, body: JSON.stringify({ model: DALLE, prompt: "once" }) })).json();
    const first = (await send()) as Record<string, any>;
    const again = (await send()) as Record<string, any>;
    expect(unsigned(again)).toEqual(unsigned(first));
    expect(first.data).toHaveLength(1);
    expect(imageCalls().length).toBe(calls + 1);
    expect(await balance()).toBe(before - nanosOf(DALLE_PRICE));
  });

  it("makes 10 images in one call, charged 10 times; refuses 11 and 0 before anything is held", async () => {
    const before = await balance();
    const answer = await sdk.images.generate({ model: GPT_IMAGE, prompt: "ten", n: 10 });
    expect(answer.data).toHaveLength(10);
    for (const image of answer.data!) expect(Buffer.from(await (await download(image.url!)).arrayBuffer()).equals(TINY_PNG)).toBe(true);
    expect(new Set(answer.data!.map((image) => image.url)).size).toBe(10);
    expect(imageCalls().at(-1)!.body).toMatchObject({ n: 10 });
    expect(await balance()).toBe(before - 10n * nanosOf(GPT_IMAGE_PRICE));
    for (const n of [11, 0]) {
      const calls = imageCalls().length;
      const refused = await post({ model: GPT_IMAGE, prompt: "too many", n });
      expect(refused.status).toBe(400);
      expect(refused.json.error).toMatchObject({ param: "n" });
      expect(imageCalls().length).toBe(calls);
    }
    expect(await balance()).toBe(before - 10n * nanosOf(GPT_IMAGE_PRICE));
  });

  it.each([
    { prompt: `a cat ${MODERATE_PROMPT}`, model: GPT_IMAGE, status: 400, code: "content_moderated", message: `${OPENAI_MODERATION_MESSAGE} safety_violations=[sexual].` },
    { prompt: `a cat ${REFUSE_PROMPT}`, model: GPT_IMAGE, status: 400, code: "request_moderated", message: `${OPENAI_MODERATION_MESSAGE} safety_violations=[sexual].` },
    { prompt: `a cat ${MODERATE_PROMPT}`, model: DALLE, status: 400, code: "request_moderated", message: DALLE_MODERATION_MESSAGE },
  ])("answers a $code from $model as the spec's error ($status) with the provider's words, and returns the hold", async ({ prompt, model, status, code, message }) => {
    const before = await balance();
    const calls = imageCalls().length;
    const { status: answered, json } = await post({ model, prompt });
    expect(answered, JSON.stringify(json)).toBe(status);
    expect(json.error).toMatchObject({ code, message, metadata: { chat_id: expect.stringMatching(/^rtr_/) } });
    // The provider's answer is final: one call, no retry.
    expect(imageCalls().length).toBe(calls + 1);
    expect(await balance()).toBe(before);
    const task = (await gateway.core.tasks.store.get("org_test", json.error.metadata.chat_id))!;
    expect(task.error).toMatchObject({ code, message });
    expect(await gateway.core.accounts.usage.get("org_test", task.id)).toMatchObject({ outcome: code, cost: "0" });
  });

  it("tries a 5xx again (the provider made nothing): the second call's images are delivered and charged once", async () => {
    const before = await balance();
    const calls = imageCalls().length;
    openai.answerNextWith("POST", /^\/v1\/images\/generations$/, 503, { error: { message: "The server is overloaded or not ready yet.", type: "server_error", param: null, code: null } });
    const answer = await sdk.images.generate({ model: DALLE, prompt: "after an outage" });
    expect(answer.data).toHaveLength(1);
    expect(imageCalls().length).toBe(calls + 2);
    expect(await balance()).toBe(before - nanosOf(DALLE_PRICE));
  });

  it.each([
    { answer: { created: 1, data: [] }, what: "no images" },
    { answer: { created: 1 }, what: "no images" },
    { answer: { created: 1, data: [{ revised_prompt: "x" }] }, what: "neither url nor b64_json" },
  ])("ends failed, not sent again, when a 2xx answer has $what ($answer)", async ({ answer, what }) => {
    const before = await balance();
    const calls = imageCalls().length;
    openai.answerNextWith("POST", /^\/v1\/images\/generations$/, 200, answer);
    const { status, json } = await post({ model: GPT_IMAGE, prompt: "an odd answer" });
    expect(status, JSON.stringify(json)).toBe(502);
    expect(json.error).toMatchObject({ code: "upstream_error", message: expect.stringContaining(what) });
    // A paid generation is not asked for again.
    expect(imageCalls().length).toBe(calls + 1);
    expect(await balance()).toBe(before);
  });

  it("is 404 task_not_found to another organisation, for the task and for its asset", async () => {
    const answer = await sdk.images.generate({ model: DALLE, prompt: "mine" });
    const chatId = (answer as unknown as { chat_id: string }).chat_id;
    const task = await fetch(`${gateway.apiUrl}/images/${chatId}`, { headers: { authorization: `Bearer ${OTHER_KEY}` } });
    expect(task.status).toBe(404);
    expect(((await task.json()) as any).error).toMatchObject({ code: "task_not_found" });
    const asset = await download(answer.data![0].url!, OTHER_KEY);
    expect(asset.status).toBe(404);
    expect(((await asset.json()) as any).error).toMatchObject({ code: "task_not_found" });
    expect((await download(answer.data![0].url!)).status).toBe(200);
  });
});

describe("a synchronous answer that is lost", () => {
  it("ends failed with a clear message (the result URL was dead when fetched, so the poll that follows finds nothing), and returns the hold", async () => {
    const dead = await startFakeOpenAiMedia({ assetTtlMs: 0 });
    const lost = await startGateway(config(dead.url, bfl.url), { env: ENV });
    try {
      await lost.core.accounts.idle();
      const before = await lost.core.accounts.stores.credits.balance("org_test");
      const response = await fetch(`${lost.apiUrl}/images/generations`, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model: DALLE, prompt: "gone" }) });
      const json = (await response.json()) as Record<string, any>;
      expect(response.status).toBe(502);
      expect(json.error).toMatchObject({ code: "upstream_error", message: expect.stringContaining("synchronous answer to this image request was lost") });
      // One generation only: a lost answer is not asked for again.
      expect(dead.requests.filter((request) => request.path === "/v1/images/generations")).toHaveLength(1);
      await lost.core.accounts.idle();
      expect(await lost.core.accounts.stores.credits.balance("org_test")).toBe(before);
    } finally {
      await lost.close();
      await dead.close();
    }
  });
});

describe("response_type", () => {
  it("unset prefers the synchronous provider of a model that has both kinds", async () => {
    const answer = await post({ model: BOTH, prompt: "either" });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ data: [{ url: expect.any(String) }], chat_id: expect.any(String) });
    expect(answer.json.taskId).toBeUndefined();
    expect(imageCalls().at(-1)!.body).toMatchObject({ model: "dall-e-2" });
  });

  it("async picks the asynchronous provider (a queued task), sync the synchronous one", async () => {
    const queued = await post({ model: BOTH, prompt: "later", response_type: "async" });
    expect(queued.status).toBe(200);
    expect(queued.json).toMatchObject({ taskId: expect.any(String), status: "queued" });
    await vi.waitFor(() => expect(bfl.requests.some((request) => request.method === "POST" && request.body.prompt === "later")).toBe(true), { timeout: 5000, interval: 10 });
    const now = await post({ model: BOTH, prompt: "now", response_type: "sync", response_format: "b64_json" });
    expect(now.status).toBe(200);
    expect(Buffer.from(now.json.data[0].b64_json, "base64").equals(TINY_PNG)).toBe(true);
  });

  it("unset falls back to the asynchronous provider of a model that has no synchronous one", async () => {
    const { status, json } = await post({ model: FLUX, prompt: "flux" });
    expect(status).toBe(200);
    expect(json).toMatchObject({ taskId: expect.any(String), status: "queued" });
  });

  it.each([
    [{ model: GPT_IMAGE, response_type: "async" }, "response_type"],
    [{ model: FLUX, response_format: "b64_json" }, "response_format"],
    [{ model: BOTH, response_type: "async", response_format: "b64_json" }, "response_format"],
  ])("refuses %j with a 400 naming %s, holding nothing", async (fields, param) => {
    const before = await balance();
    const { status, json } = await post({ prompt: "checked", ...fields });
    expect(status, JSON.stringify(json)).toBe(400);
    expect(json.error.param).toBe(param);
    expect(await balance()).toBe(before);
  });
});

describe("the bundled default's openai/gpt-image-1.5", () => {
  it("answers synchronously at its flat price, sending the one quality and size it is priced for", async () => {
    const config = loadConfigFile();
    config.providers.find((entry) => entry.id === "openai")!.base_url = openai.url;
    const bundled = await startGateway(config, { env: { OPENAI_API_KEY: OPENAI_MEDIA_KEY, ROUTER_DEV_KEY: TEST_KEY } });
    try {
      const client = new OpenAI({ apiKey: TEST_KEY, baseURL: bundled.apiUrl, maxRetries: 0 });
      const answer = await client.images.generate({ model: "openai/gpt-image-1.5", prompt: "bundled", n: 2 });
      expect(answer.data).toHaveLength(2);
      expect(answer).toMatchObject({ size: "1024x1024", quality: "medium", usage: { images: 2, cost: 0.068 } });
      expect(imageCalls().at(-1)!.body).toEqual({ prompt: "bundled", model: "gpt-image-1.5", n: 2, size: "1024x1024", quality: "medium" });
      const refused = await fetch(`${bundled.apiUrl}/images/generations`, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model: "openai/gpt-image-1.5", prompt: "hd", quality: "high" }) });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as any).error).toMatchObject({ param: "quality" });
    } finally {
      await bundled.close();
    }
  });
});
