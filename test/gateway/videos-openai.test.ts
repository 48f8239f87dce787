// OpenAI videos (the spec's progress style) end to end through the gateway:
// POST /api/v1/videos on an openai-compatible provider, polled at GET
// /api/v1/videos/{id} until `completed` with progress 100, the MP4 downloaded
// from the hosted URL byte for byte after the provider's content expired; a
// failed video with the provider's words and the balance unchanged; another
// organisation's 404s.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../core/config/load.ts";
import { FAIL_PROMPT, TINY_MP4, type FakeMediaUpstream } from "../support/fake-media-common.ts";
import { OPENAI_MEDIA_KEY, OPENAI_VIDEO_FAILURE_MESSAGE, startFakeOpenAiMedia } from "../support/fake-media-openai.ts";
import { nanosOf } from "../support/exact-money.ts";
import { startGateway, TEST_KEY, type Gateway } from "../support/harness.ts";

const MODEL = "vendor/sora-compatible";
const PER_SECOND = "0.1";
const OTHER_KEY = "sk-other-org";
const DONE = { timeout: 10_000, interval: 10 };

let fakeNow = Date.now();
let openai: FakeMediaUpstream;
let gateway: Gateway;

beforeAll(async () => {
  openai = await startFakeOpenAiMedia({ now: () => fakeNow });
  const config = parseConfig(
    JSON.stringify({
      providers: [{ id: "vendor", label: "A vendor of OpenAI's videos API", protocol: "openai-compatible", base_url: openai.url, api_key_env: "VENDOR_API_KEY", timeout_ms: 5000 }],
      models: [
        {
          id: MODEL,
          name: "Sora-compatible",
          created: 1700000000,
          creator: "vendor",
          context_length: 4096,
          max_completion_tokens: 1,
          input_modalities: ["text", "image"],
          output_modalities: ["video"],
          supported_parameters: [],
          supported_params_details: { seconds: ["4", "8", "12"], size: ["720x1280", "1280x720"] },
          providers: [{ provider: "vendor", provider_model_id: "sora-2", pricing: { prompt: "0", completion: "0", video_output_per_second: PER_SECOND } }],
        },
      ],
      organizations: [
        { id: "org_test", name: "Test", credits: "10", keys: [{ id: "key_test", env: "TEST_API_KEY" }] },
        { id: "org_other", name: "Other", credits: "10", keys: [{ id: "key_other", env: "OTHER_API_KEY" }] },
      ],
      tasks: { poll_interval_ms: 5, poll_max_interval_ms: 20, lease_seconds: 1, timeout_seconds: 30, assets_dir: mkdtempSync(join(tmpdir(), "router-assets-videos-")) },
    }),
  );
  gateway = await startGateway(config, { env: { VENDOR_API_KEY: OPENAI_MEDIA_KEY, TEST_API_KEY: TEST_KEY, OTHER_API_KEY: OTHER_KEY } });
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
});

const auth = (key = TEST_KEY) => ({ authorization: `Bearer ${key}` });
async function createVideo(body: Record<string, unknown>) {
  const response = await fetch(`${gateway.apiUrl}/videos`, { method: "POST", headers: { ...auth(), "content-type": "application/json" }, body: JSON.stringify({ model: MODEL, ...body }) });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}
const read = async (id: string, key = TEST_KEY) => {
  const response = await fetch(`${gateway.apiUrl}/videos/${id}`, { headers: auth(key) });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
};
const ended = (id: string) =>
  vi.waitFor(async () => {
    const { json } = await read(id);
    expect(["completed", "failed"]).toContain(json.status);
    return json;
  }, DONE);
async function balance() {
  await gateway.core.accounts.idle();
  return gateway.core.accounts.stores.credits.balance("org_test");
}

describe("a video on an OpenAI-compatible vendor", () => {
  it("is created queued, ends completed with progress 100, and downloads from the hosted URL byte for byte after the vendor's content expired", async () => {
    const before = await balance();
    const created = await createVideo({ prompt: "a red square", seconds: "8", size: "1280x720" });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    expect(created.json).toMatchObject({ taskId: expect.any(String), status: "queued" });
    const done = await ended(created.json.taskId);
    expect(done).toMatchObject({ status: "completed", progress: 100, object: "video", seconds: "8", size: "1280x720", error: null, router_assets: { status: "ready" } });

    const upstreamId = (await gateway.core.tasks.store.get("org_test", created.json.taskId))!.upstreamJobId;
    expect(openai.polls(upstreamId)).toBe(3);
    fakeNow += 61 * 60_000;
    expect((await fetch(`${openai.url}/videos/${upstreamId}/content`, { headers: { authorization: `Bearer ${OPENAI_MEDIA_KEY}` } })).status).toBe(404);
    const asset = await fetch(done.router_assets.urls[0], { headers: auth() });
    expect(asset.headers.get("content-type")).toBe("video/mp4");
    expect(Buffer.from(await asset.arrayBuffer()).equals(TINY_MP4)).toBe(true);
    expect(await balance()).toBe(before - 8n * nanosOf(PER_SECOND));

    // The provider-prefixed id alone names it; another organisation sees nothing.
    const byPrefix = await fetch(`${gateway.apiUrl}/getAsyncResponse`, { method: "POST", headers: { ...auth(), "content-type": "application/json" }, body: JSON.stringify({ taskId: `vendor:${upstreamId}` }) });
    expect(await byPrefix.json()).toMatchObject({ chat_id: created.json.taskId, status: "completed" });
    expect((await read(created.json.taskId, OTHER_KEY)).status).toBe(404);
    expect((await fetch(done.router_assets.urls[0], { headers: auth(OTHER_KEY) })).status).toBe(404);
  });

  it("ends failed with the vendor's words and returns the hold", async () => {
    const before = await balance();
    const created = await createVideo({ prompt: `a cat ${FAIL_PROMPT}` });
    const done = await ended(created.json.taskId);
    expect(done).toMatchObject({ status: "failed", error: { code: "upstream_error", message: OPENAI_VIDEO_FAILURE_MESSAGE } });
    expect(await balance()).toBe(before);
  });
});
