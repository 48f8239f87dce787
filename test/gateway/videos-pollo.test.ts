// Video tasks on the Pollo protocol, end to end through the gateway's HTTP
// endpoints against the Pollo fake (which checks x-api-key and answers in the
// {code, message, data} envelope): created, polled until done, shown in the
// spec's per-generation style, the MP4 downloaded from the gateway's hosted URL
// byte for byte as the fake made it, also after the fake's URL expired; a
// failing job ends failed with Pollo's words and returns its hold; another
// organisation sees nothing.
import http from "node:http";
import { mkdtempSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../core/config/load.ts";
import type { RouterConfig } from "../../core/config/schema.ts";
import { solidPng } from "../../core/providers/simulator/media.ts";
import { nanosOf } from "../support/exact-money.ts";
import { FAIL_PROMPT, MODERATE_PROMPT, TINY_MP4, type FakeMediaUpstream } from "../support/fake-media-common.ts";
import { POLLO_FAILURE_MESSAGE, POLLO_KEY, POLLO_MODERATION_MESSAGE, startFakePollo } from "../support/fake-media-pollo.ts";
import { startGateway, TEST_KEY, type Gateway } from "../support/harness.ts";
import { OTHER_KEY } from "../support/image-task-config.ts";

const MODEL = "pollo/pollo-v1-6";
/** The test catalogue's price (not Pollo's: see docs/tasks.md, "Pollo"). */
const PRICE_PER_SECOND = "0.05";
const ENV = { POLLO_API_KEY: POLLO_KEY, TEST_API_KEY: TEST_KEY, OTHER_API_KEY: OTHER_KEY };
const DONE = { timeout: 10_000, interval: 10 };
const DAY = 24 * 60 * 60_000;

let fakeNow = Date.now();
let pollo: FakeMediaUpstream;
let gateway: Gateway;
let images: http.Server;
let imageUrl = "";

function polloTaskConfig(polloUrl: string): RouterConfig {
  return parseConfig(
    JSON.stringify({
      providers: [
        { id: "simulator", label: "Simulator", protocol: "simulator" },
        { id: "pollo", label: "Pollo", protocol: "pollo", base_url: polloUrl, api_key_env: "POLLO_API_KEY", timeout_ms: 5000 },
      ],
      models: [
        {
          id: MODEL,
          name: "Pollo 1.6",
          created: 1700000000,
          creator: "pollo",
          context_length: 1000,
          max_completion_tokens: 1,
          input_modalities: ["text", "image"],
          output_modalities: ["video"],
          supported_parameters: [],
          supported_params_details: { length: [5, 10], resolution: ["480p", "720p", "1080p"], aspectRatio: ["16:9", "9:16", "4:3", "3:4", "1:1"], mode: ["basic", "pro"] },
          providers: [{ provider: "pollo", provider_model_id: "pollo/pollo-v1-6", pricing: { prompt: "0", completion: "0", video_output_per_second: PRICE_PER_SECOND } }],
        },
      ],
      organizations: [
        { id: "org_test", name: "Test", credits: "10", keys: [{ id: "key_test", env: "TEST_API_KEY" }] },
        { id: "org_other", name: "Other", credits: "10", keys: [{ id: "key_other", env: "OTHER_API_KEY" }] },
      ],
      tasks: { poll_interval_ms: 5, poll_max_interval_ms: 20, lease_seconds: 1, timeout_seconds: 30, assets_dir: mkdtempSync(join(tmpdir(), "router-assets-pollo-")) },
    }),
  );
}

beforeAll(async () => {
  // The input image the gateway fetches and checks before anything is held: a 2:1 PNG.
  images = http.createServer((_req, res) => void res.writeHead(200, { "content-type": "image/png" }).end(solidPng(2, 1, Buffer.from([0, 128, 255]))));
  await new Promise<void>((resolve) => images.listen(0, "127.0.0.1", resolve));
  imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/first-frame.png`;
  pollo = await startFakePollo({ now: () => fakeNow });
  gateway = await startGateway(polloTaskConfig(pollo.url), { env: ENV });
});
afterAll(async () => {
  await gateway?.close();
  await pollo?.close();
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
    expect(["succeed", "failed"]).toContain(json.status);
    return json;
  }, DONE);
}

async function balance(organizationId = "org_test") {
  await gateway.core.accounts.idle();
  return gateway.core.accounts.stores.credits.balance(organizationId);
}

const download = (url: string, key = TEST_KEY) => fetch(url, { headers: { authorization: `Bearer ${key}` } });

describe("a video task on Pollo", () => {
  it("is created waiting, polled until succeed, shown per generation, charged the seconds asked, and downloaded byte for byte also after Pollo's URL expired", async () => {
    const before = await balance();
    const created = await createVideo({ prompt: "a wave at dusk", image: imageUrl, length: 10, resolution: "720p", aspectRatio: "16:9", mode: "pro", seed: 7, generateAudio: false });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const id = created.json.taskId as string;
    expect(created.json).toMatchObject({ taskId: expect.stringMatching(/^rtr_/), chat_id: id, code: "ok", status: "waiting", model: MODEL });

    const done = await finished(id);
    expect(done.status).toBe("succeed");
    const task = (await gateway.core.tasks.store.get("org_test", id))!;
    expect(pollo.polls(task.upstreamJobId)).toBe(3);

    // Pollo got the task as its API takes it: the brand/model path, x-api-key, the parameters inside input.
    const submitted = pollo.requests.find((request) => request.method === "POST" && request.body.input?.prompt === "a wave at dusk")!;
    expect([submitted.path, submitted.headers["x-api-key"]]).toEqual(["/api/platform/generation/pollo/pollo-v1-6", POLLO_KEY]);
    expect(submitted.body).toEqual({ input: { prompt: "a wave at dusk", image: imageUrl, length: 10, resolution: "720p", aspectRatio: "16:9", mode: "pro", seed: 7, generateAudio: false } });

    // The per-generation style: Pollo's generation id, succeed, the hosted copy's URL.
    const assetUrl = `${gateway.url}/api/v1/assets/${id}/0`;
    const generationId = pollo.jobs.jobs.get(task.upstreamJobId)!.details.generationId;
    expect(done).toMatchObject({ chat_id: id, code: "ok", router_assets: { status: "ready", urls: [assetUrl] } });
    expect(done.generations).toEqual([{ id: generationId, createdDate: expect.any(String), updatedDate: expect.any(String), status: "succeed", url: assetUrl, mediaType: "video", failMsg: null }]);
    expect(task.outputs[0]).toMatchObject({ upstreamId: generationId, mediaType: "video/mp4" });

    // Charged the 10 seconds asked at the catalogue's price, once.
    expect(done.usage).toEqual({ videos: 1, video_seconds: 10, cost: 0.5 });
    expect(await balance()).toBe(before - nanosOf("0.5"));

    let asset = await download(assetUrl);
    expect([asset.status, asset.headers.get("content-type")]).toEqual([200, "video/mp4"]);
    expect(Buffer.from(await asset.arrayBuffer())).toEqual(TINY_MP4);
    // Pollo keeps files up to 14 days; the hosted copy outlives its URL.
    fakeNow += 15 * DAY;
    try {
      expect((await fetch(task.outputs[0].url)).status).toBe(404);
      asset = await download(assetUrl);
      expect(Buffer.from(await asset.arrayBuffer())).toEqual(TINY_MP4);
    } finally {
      fakeNow -= 15 * DAY;
    }
  });

  it.each([
    { prompt: `a cat ${FAIL_PROMPT}`, code: "upstream_error", message: POLLO_FAILURE_MESSAGE },
    { prompt: `a cat ${MODERATE_PROMPT}`, code: "content_moderated", message: POLLO_MODERATION_MESSAGE },
  ])("ends failed with Pollo's failMsg ($code) and returns the hold: the balance is unchanged", async ({ prompt, code, message }) => {
    const before = await balance();
    const created = await createVideo({ prompt, length: 5 });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const done = await finished(created.json.taskId);
    expect(done).toMatchObject({ status: "failed", code, message, router_assets: null, usage: { videos: 0, cost: 0 } });
    expect(done.generations).toEqual([expect.objectContaining({ status: "failed", url: null, failMsg: message })]);
    expect(await balance()).toBe(before);
  });

  it("refuses, naming it, a parameter Pollo does not carry (seconds, size) or the model does not list, holding nothing", async () => {
    const before = await balance();
    const sent = pollo.requests.length;
    for (const [body, param] of [
      [{ seconds: 8 }, "seconds"],
      [{ size: "1280x720" }, "size"],
      [{ length: 6 }, "length"],
      [{ mode: "std" }, "mode"],
    ] as const) {
      const refused = await createVideo({ prompt: "p", ...body });
      expect([refused.status, refused.json.error?.param], JSON.stringify(refused.json)).toEqual([400, param]);
    }
    expect(pollo.requests.length).toBe(sent);
    expect(await balance()).toBe(before);
  });

  it("is 404 task_not_found to another organisation, for the task (by either id) and for its asset", async () => {
    const { json } = await createVideo({ prompt: "mine" });
    const done = await finished(json.taskId);
    const task = (await gateway.core.tasks.store.get("org_test", json.taskId))!;
    for (const id of [json.taskId, `pollo:${task.upstreamJobId}`]) {
      const other = await getVideo(id, OTHER_KEY);
      expect([other.status, other.json.error?.code]).toEqual([404, "task_not_found"]);
      expect((await getVideo(id)).json.chat_id).toBe(json.taskId);
    }
    const asset = await download(done.router_assets.urls[0], OTHER_KEY);
    expect(asset.status).toBe(404);
    expect((await download(done.router_assets.urls[0])).status).toBe(200);
  });
});
