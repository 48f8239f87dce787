// The openai SDK's videos.downloadContent (GET /api/v1/videos/{id}/content,
// variant=video) on a video of every video protocol: an OpenAI-compatible
// vendor, Pollo, Kling, Vertex AI Veo (a 3 MiB video, so the bytes come in
// several of the core's 1 MiB chunks) and the simulator, each byte for byte
// what the gateway hosts; a range; the variants the router keeps no copy of;
// a video not made yet; an image task's id; another organisation's key.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAIL_PROMPT, STALL_PROMPT, TINY_MP4, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { KLING_ACCESS_KEY, KLING_SECRET_KEY, startFakeKling } from "../../../support/fake-media-kling.ts";
import { OPENAI_MEDIA_KEY, startFakeOpenAiMedia } from "../../../support/fake-media-openai.ts";
import { POLLO_KEY, startFakePollo } from "../../../support/fake-media-pollo.ts";
import { startFakeVertex, VERTEX_TOKEN } from "../../../support/fake-media-vertex.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { mediaTaskConfig, OTHER_KEY, TASK_ACCOUNTS_ENV } from "../../../support/media-task-config.ts";
import { taskClient } from "../../../support/video-task-harness.ts";

/** Veo's video: a real MP4 start, then enough bytes to need several chunks. */
const LARGE_MP4 = Buffer.concat([TINY_MP4, Buffer.alloc(3 * 1024 * 1024, 7)]);

/** Each video protocol's model, the video its fake makes (undefined: the simulator's own) and what it asks. */
const MODELS = [
  { model: "vendor/sora-compatible", provider: "vendor", providerModelId: "sora-2", video: TINY_MP4, body: { seconds: "4" } },
  { model: "pollo/pollo-v1-6", provider: "pollo", providerModelId: "pollo/pollo-v1-6", video: TINY_MP4, body: { length: 5 } },
  { model: "kling/kling-v2-5-turbo", provider: "kling", providerModelId: "kling-v2-5-turbo", video: TINY_MP4, body: { length: 5 } },
  { model: "google/veo-3.0-generate-001", provider: "vertex", providerModelId: "veo-3.0-generate-001", video: LARGE_MP4, body: { length: 4 } },
  { model: "simulator/video", provider: "simulator", providerModelId: "video", video: undefined, body: { seconds: 4 } },
];

let fakes: FakeMediaUpstream[] = [];
let gateway: Gateway;
let sdk: OpenAI;

beforeAll(async () => {
  const [vendor, pollo, kling, vertex] = (fakes = await Promise.all([startFakeOpenAiMedia(), startFakePollo(), startFakeKling(), startFakeVertex({ videoOf: () => LARGE_MP4 })]));
  const config = mediaTaskConfig(
    [
      { id: "vendor", protocol: "openai-compatible", base_url: vendor.url, api_key_env: "VENDOR_API_KEY", timeout_ms: 5000 },
      { id: "pollo", protocol: "pollo", base_url: pollo.url, api_key_env: "POLLO_API_KEY", timeout_ms: 5000 },
      { id: "kling", protocol: "kling", base_url: kling.url, api_key_env: "KLING_ACCESS_KEY", secret_key_env: "KLING_SECRET_KEY", timeout_ms: 5000 },
      { id: "vertex", protocol: "vertex", base_url: vertex.url, api_key_env: "VERTEX_ACCESS_TOKEN", timeout_ms: 5000 },
    ],
    [
      ...MODELS.map(({ model, provider, providerModelId }) => ({ id: model, output: "video" as const, routes: [{ provider, providerModelId, pricing: { video_output_per_second: "0.01" } }] })),
      { id: "simulator/image", output: "image" as const, routes: [{ provider: "simulator", providerModelId: "image", pricing: { image_output: "0.01" } }] },
    ],
  );
  const env = { VENDOR_API_KEY: OPENAI_MEDIA_KEY, POLLO_API_KEY: POLLO_KEY, KLING_ACCESS_KEY, KLING_SECRET_KEY, VERTEX_ACCESS_TOKEN: VERTEX_TOKEN, ...TASK_ACCOUNTS_ENV };
  gateway = await startGateway(config, { env });
  sdk = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0, timeout: 15_000 });
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all(fakes.map((fake) => fake.close()));
});

/** The SDK's error for a call that must fail, as [status, code, param]. */
const refusal = (call: Promise<unknown>) =>
  call.then(
    () => expect.fail("the call succeeded"),
    (error: InstanceType<typeof OpenAI.APIError>) => [error.status, (error.error as { code?: string }).code, (error.error as { param?: string }).param],
  );

describe("videos.downloadContent through the openai SDK", () => {
  it.each(MODELS)("streams $model's video byte for byte", async ({ model, video, body }) => {
    const videos = taskClient(gateway, { kind: "videos", model });
    const id = await videos.created({ prompt: "a lighthouse", ...body });
    const done = await videos.finished(id);
    expect(done.router_assets?.status, JSON.stringify(done)).toBe("ready");
    const hosted = Buffer.from(await (await videos.download(done.router_assets.urls[0])).arrayBuffer());
    if (video) expect(hosted.equals(video)).toBe(true);

    const content = await sdk.videos.downloadContent(id);
    expect([content.status, content.headers.get("content-type"), content.headers.get("content-length")]).toEqual([200, "video/mp4", String(hosted.length)]);
    expect(Buffer.from(await content.arrayBuffer()).equals(hosted)).toBe(true);
    // The variant OpenAI defaults to, asked by name: the same bytes.
    expect(Buffer.from(await (await sdk.videos.downloadContent(id, { variant: "video" })).arrayBuffer()).equals(hosted)).toBe(true);
  });

  it("serves a range, as the hosted asset does", async () => {
    const videos = taskClient(gateway, { kind: "videos", model: "google/veo-3.0-generate-001" });
    const id = await videos.created({ prompt: "ranged", length: 4 });
    await videos.finished(id);
    const part = await fetch(`${gateway.apiUrl}/videos/${id}/content`, { headers: { authorization: `Bearer ${TEST_KEY}`, range: "bytes=4-11" } });
    expect([part.status, part.headers.get("content-range")]).toEqual([206, `bytes 4-11/${LARGE_MP4.length}`]);
    expect(Buffer.from(await part.arrayBuffer()).equals(LARGE_MP4.subarray(4, 12))).toBe(true);
  });

  it("answers what it cannot serve by name: a variant it keeps no copy of, an unknown one, a video not made, a failed one", async () => {
    const videos = taskClient(gateway, { kind: "videos", model: "simulator/video" });
    const id = await videos.created({ prompt: "variants" });
    await videos.finished(id);
    expect(await refusal(sdk.videos.downloadContent(id, { variant: "thumbnail" }))).toEqual([404, "asset_not_found", "variant"]);
    expect(await refusal(sdk.videos.downloadContent(id, { variant: "poster" as never }))).toEqual([400, "invalid_parameter", "variant"]);

    const pollo = taskClient(gateway, { kind: "videos", model: "pollo/pollo-v1-6" });
    const running = await pollo.created({ prompt: `still ${STALL_PROMPT}` });
    expect(await refusal(sdk.videos.downloadContent(running))).toEqual([404, "asset_not_found", "video_id"]);
    const failed = await pollo.created({ prompt: `x ${FAIL_PROMPT}` });
    expect((await pollo.finished(failed)).status).toBe("failed");
    expect(await refusal(sdk.videos.downloadContent(failed))).toEqual([404, "asset_not_found", "video_id"]);
  });

  it("is 404 task_not_found for an image task's id, an unknown id, and another organisation's video", async () => {
    const images = taskClient(gateway, { kind: "images", model: "simulator/image" });
    const image = await images.created({ prompt: "not a video" });
    await images.finished(image);
    expect(await refusal(sdk.videos.downloadContent(image))).toEqual([404, "task_not_found", "task_id"]);
    expect(await refusal(sdk.videos.downloadContent("rtr_unknown"))).toEqual([404, "task_not_found", "task_id"]);

    const videos = taskClient(gateway, { kind: "videos", model: "simulator/video" });
    const id = await videos.created({ prompt: "mine" });
    await videos.finished(id);
    const other = new OpenAI({ apiKey: OTHER_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
    expect(await refusal(other.videos.downloadContent(id))).toEqual([404, "task_not_found", "task_id"]);
    expect((await sdk.videos.downloadContent(id)).status).toBe(200);
  });
});
