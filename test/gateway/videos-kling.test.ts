// Video tasks on the Kling protocol, end to end through the gateway's HTTP
// endpoints against the Kling fake (which checks every request's HS256 JWT):
// created, polled until done, shown in the spec's data style, the MP4
// downloaded from the gateway's hosted URL byte for byte as the fake made it,
// also after the fake's URL expired; a failing, moderated or refused job ends
// failed with Kling's words and returns its hold; another organisation sees nothing.
import http from "node:http";
import { mkdtempSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfigFile, parseConfig } from "../../core/config/load.ts";
import type { RouterConfig } from "../../core/config/schema.ts";
import { solidPng } from "../../core/providers/simulator/media.ts";
import { nanosOf } from "../support/exact-money.ts";
import { FAIL_PROMPT, MODERATE_PROMPT, REFUSE_PROMPT, TINY_MP4, type FakeMediaUpstream } from "../support/fake-media-common.ts";
import { KLING_ACCESS_KEY, KLING_FAILURE_MESSAGE, KLING_MODERATION_MESSAGE, KLING_SECRET_KEY, startFakeKling } from "../support/fake-media-kling.ts";
import { startGateway, TEST_KEY, type Gateway } from "../support/harness.ts";
import { OTHER_KEY } from "../support/image-task-config.ts";

const MODEL = "kling/kling-v2-5-turbo";
/** The bundled default's price for this model (docs/tasks.md, "Kling"). */
const PRICE_PER_SECOND = "0.042";
const ENV = { KLING_ACCESS_KEY, KLING_SECRET_KEY, TEST_API_KEY: TEST_KEY, OTHER_API_KEY: OTHER_KEY };
const DONE = { timeout: 10_000, interval: 10 };
const DAY = 24 * 60 * 60_000;

let fakeNow = Date.now();
let kling: FakeMediaUpstream;
let gateway: Gateway;
let images: http.Server;
let imageUrl = "";

function klingTaskConfig(klingUrl: string): RouterConfig {
  return parseConfig(
    JSON.stringify({
      providers: [
        { id: "simulator", label: "Simulator", protocol: "simulator" },
        { id: "kling", label: "Kling AI", protocol: "kling", base_url: klingUrl, api_key_env: "KLING_ACCESS_KEY", secret_key_env: "KLING_SECRET_KEY", timeout_ms: 5000 },
      ],
      models: [
        {
          id: MODEL,
          name: "Kling 2.5 Turbo",
          created: 1700000000,
          creator: "kling",
          context_length: 2500,
          max_completion_tokens: 1,
          input_modalities: ["text", "image"],
          output_modalities: ["video"],
          supported_parameters: [],
          supported_params_details: { length: [5, 10], aspectRatio: ["16:9", "9:16", "1:1"], mode: ["std", "pro"] },
          providers: [{ provider: "kling", provider_model_id: "kling-v2-5-turbo", pricing: { prompt: "0", completion: "0", video_output_per_second: PRICE_PER_SECOND } }],
        },
      ],
      organizations: [
        { id: "org_test", name: "Test", credits: "10", keys: [{ id: "key_test", env: "TEST_API_KEY" }] },
        { id: "org_other", name: "Other", credits: "10", keys: [{ id: "key_other", env: "OTHER_API_KEY" }] },
      ],
      tasks: { poll_interval_ms: 5, poll_max_interval_ms: 20, lease_seconds: 1, timeout_seconds: 30, assets_dir: mkdtempSync(join(tmpdir(), "router-assets-kling-")) },
    }),
  );
}

beforeAll(async () => {
  // The input image the gateway fetches and checks before anything is held: a 2:1 PNG.
  images = http.createServer((_req, res) => void res.writeHead(200, { "content-type": "image/png" }).end(solidPng(2, 1, Buffer.from([0, 128, 255]))));
  await new Promise<void>((resolve) => images.listen(0, "127.0.0.1", resolve));
  imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/first-frame.png`;
  kling = await startFakeKling({ now: () => fakeNow });
  gateway = await startGateway(klingTaskConfig(kling.url), { env: ENV });
});
afterAll(async () => {
  await gateway?.close();
  await kling?.close();
  await new Promise<void>((resolve) => images?.close(() => resolve()));
});

const headers = (key = TEST_KEY) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });

async function createVideo(body: Record<string, unknown>, key = TEST_KEY) {
  const response = await fetch(`${gateway.apiUrl}/videos`, { method: "POST", headers: headers(key), body: JSON.stringify({ model: MODEL, ...body }) });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

async function getVideo(id: string, key = TEST_KEY) {
  const response = await fetch(`${gateway.apiUrl}/videos/${id}`, { headers: headers(key) });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

async function finished(id: string) {
  return vi.waitFor(async () => {
    const { json } = await getVideo(id);
    expect(["completed", "failed"]).toContain(json.data?.status);
    return json;
  }, DONE);
}

async function balance(organizationId = "org_test") {
  await gateway.core.accounts.idle();
  return gateway.core.accounts.stores.credits.balance(organizationId);
}

const download = (url: string, key = TEST_KEY) => fetch(url, { headers: { authorization: `Bearer ${key}` } });
const storedTask = (id: string) => gateway.core.tasks.store.get("org_test", id);

describe("a video task on Kling", () => {
  it("is created submitted, polled until succeed, shown in the data style, charged the seconds held, and downloaded byte for byte also after Kling's URL expired", async () => {
    const before = await balance();
    const created = await createVideo({ prompt: "a wave at dusk", length: 5, aspectRatio: "16:9", mode: "pro", generateAudio: false });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const id = created.json.taskId as string;
    expect(created.json).toMatchObject({ taskId: expect.stringMatching(/^rtr_/), chat_id: id, code: "ok", model: MODEL, data: { status: "submitted", generations: [] } });

    const done = await finished(id);
    expect(done.data.status).toBe("completed");
    const task = (await storedTask(id))!;
    expect(kling.polls(task.upstreamJobId)).toBe(3);

    // Kling got the task as its API takes it: text2video, a JWT the fake verified, duration as a string, sound off.
    const submitted = kling.requests.find((request) => request.method === "POST" && request.body.prompt === "a wave at dusk")!;
    expect(submitted.path).toBe("/v1/videos/text2video");
    expect(submitted.headers.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    expect(submitted.body).toEqual({ model_name: "kling-v2-5-turbo", prompt: "a wave at dusk", duration: "5", aspect_ratio: "16:9", mode: "pro", sound: "off" });

    // The data style: data.status completed (Kling's succeed), each generation's url (the hosted copy) and duration.
    const assetUrl = `${gateway.url}/api/v1/assets/${id}/0`;
    expect(done).toMatchObject({ chat_id: id, code: "ok", router_assets: { status: "ready", urls: [assetUrl] } });
    expect(done.data.generations).toEqual([expect.objectContaining({ url: assetUrl, duration: expect.anything() })]);
    expect(task.outputs[0]).toMatchObject({ upstreamId: `${task.upstreamJobId}-video-0`, durationSeconds: 5.042, mediaType: "video/mp4" });

    // Kling measured 5.042 s: charged the 5 held at the catalogue's price, once.
    expect(done.usage).toEqual({ videos: 1, video_seconds: 5, cost: 0.21 });
    expect(await balance()).toBe(before - nanosOf("0.21"));

    let asset = await download(assetUrl);
    expect([asset.status, asset.headers.get("content-type")]).toEqual([200, "video/mp4"]);
    expect(Buffer.from(await asset.arrayBuffer())).toEqual(TINY_MP4);
    // Kling deletes its files after 30 days; the hosted copy outlives its URL.
    fakeNow += 31 * DAY;
    try {
      expect((await fetch(task.outputs[0].url)).status).toBe(404);
      asset = await download(assetUrl);
      expect(Buffer.from(await asset.arrayBuffer())).toEqual(TINY_MP4);
    } finally {
      fakeNow -= 31 * DAY;
    }
  });

  it("sends an image as image2video, polls it under that kind, and answers getAsyncResponse by the kling: prefixed id", async () => {
    const created = await createVideo({ prompt: "the frame moves", image: imageUrl, length: 10 });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const done = await finished(created.json.taskId);
    expect(done.data.status).toBe("completed");
    const task = (await storedTask(created.json.taskId))!;
    const submitted = kling.requests.find((request) => request.method === "POST" && request.body.prompt === "the frame moves")!;
    expect([submitted.path, submitted.body]).toEqual(["/v1/videos/image2video", { model_name: "kling-v2-5-turbo", prompt: "the frame moves", image: imageUrl, duration: "10" }]);
    expect(kling.requests.filter((request) => request.path === `/v1/videos/image2video/${task.upstreamJobId}`)).toHaveLength(3);
    const response = await fetch(`${gateway.apiUrl}/getAsyncResponse`, { method: "POST", headers: headers(), body: JSON.stringify({ taskId: `kling:${task.upstreamJobId}` }) });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ chat_id: created.json.taskId, data: { status: "completed" } });
  });

  it.each([
    { prompt: `a cat ${FAIL_PROMPT}`, code: "upstream_error", message: KLING_FAILURE_MESSAGE },
    { prompt: `a cat ${MODERATE_PROMPT}`, code: "content_moderated", message: KLING_MODERATION_MESSAGE },
    { prompt: `a cat ${REFUSE_PROMPT}`, code: "request_moderated", message: "Kling 400 (code 1301): Trigger the content security policy of the platform" },
  ])("ends failed with Kling's words ($code) and returns the hold: the balance is unchanged", async ({ prompt, code, message }) => {
    const before = await balance();
    const created = await createVideo({ prompt, length: 10 });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const done = await finished(created.json.taskId);
    expect(done).toMatchObject({ code, message, router_assets: null, usage: { videos: 0, cost: 0 }, data: { status: "failed", generations: [] } });
    expect(await balance()).toBe(before);
  });

  it("refuses aspectRatio with an image (image2video takes the image's frame): a 400 naming aspectRatio, nothing held or sent", async () => {
    const before = await balance();
    const sent = kling.requests.length;
    const refused = await createVideo({ prompt: "framed", image: imageUrl, aspectRatio: "9:16" });
    expect([refused.status, refused.json.error?.param], JSON.stringify(refused.json)).toEqual([400, "aspectRatio"]);
    expect(refused.json.error.message).toContain("aspectRatio cannot be given with image");
    expect(kling.requests.length).toBe(sent);
    expect(await balance()).toBe(before);
  });

  it("refuses, naming it, a parameter Kling does not carry (seed, resolution, seconds, size) or the model does not list, holding nothing", async () => {
    const before = await balance();
    const sent = kling.requests.length;
    for (const [body, param] of [
      [{ seed: 7 }, "seed"],
      [{ resolution: "1080p" }, "resolution"],
      [{ seconds: 8 }, "seconds"],
      [{ size: "1280x720" }, "size"],
      [{ length: 6 }, "length"],
      [{ aspectRatio: "4:3" }, "aspectRatio"],
      [{ mode: "basic" }, "mode"],
    ] as const) {
      const refused = await createVideo({ prompt: "p", ...body });
      expect([refused.status, refused.json.error?.param], JSON.stringify(refused.json)).toEqual([400, param]);
    }
    expect(kling.requests.length).toBe(sent);
    expect(await balance()).toBe(before);
  });

  it("is 404 task_not_found to another organisation, for the task (by either id) and for its asset", async () => {
    const { json } = await createVideo({ prompt: "mine" });
    const done = await finished(json.taskId);
    const task = (await storedTask(json.taskId))!;
    for (const id of [json.taskId, `kling:${task.upstreamJobId}`]) {
      const other = await getVideo(id, OTHER_KEY);
      expect([other.status, other.json.error?.code]).toEqual([404, "task_not_found"]);
      expect((await getVideo(id)).json.chat_id).toBe(json.taskId);
    }
    const asset = await download(done.router_assets.urls[0], OTHER_KEY);
    expect(asset.status).toBe(404);
    expect((await download(done.router_assets.urls[0])).status).toBe(200);
  });
});

describe("the bundled default's Kling model", () => {
  it("runs on the kling protocol with both keys at 0.042 a second, std mode only", async () => {
    const config = loadConfigFile();
    config.providers.find((entry) => entry.id === "kling")!.base_url = kling.url;
    // The bundled model and provider are under test, not the default's one-second polling.
    config.tasks = { ...config.tasks, poll_interval_ms: 5, poll_max_interval_ms: 20 };
    const bundled = await startGateway(config, { env: { KLING_ACCESS_KEY, KLING_SECRET_KEY, ROUTER_DEV_KEY: TEST_KEY } });
    try {
      const post = (body: Record<string, unknown>) =>
        fetch(`${bundled.apiUrl}/videos`, { method: "POST", headers: headers(), body: JSON.stringify({ model: MODEL, ...body }) });
      const pro = await post({ prompt: "pro", mode: "pro" });
      expect([pro.status, ((await pro.json()) as any).error?.param]).toEqual([400, "mode"]);
      const { taskId } = (await (await post({ prompt: "bundled", length: 10 })).json()) as { taskId: string };
      const done = await vi.waitFor(async () => {
        const task = (await (await fetch(`${bundled.apiUrl}/videos/${taskId}`, { headers: headers() })).json()) as Record<string, any>;
        expect(task.data?.status).toBe("completed");
        return task;
      }, DONE);
      expect(done.usage).toEqual({ videos: 1, video_seconds: 10, cost: 0.42 });
      expect(kling.requests.find((request) => request.body.prompt === "bundled")?.body).toEqual({ model_name: "kling-v2-5-turbo", prompt: "bundled", duration: "10" });
    } finally {
      await bundled.close();
    }
  });
});
