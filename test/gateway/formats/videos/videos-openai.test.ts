// OpenAI videos (the spec's progress style) end to end through the gateway:
// POST /api/v1/videos on an openai-compatible provider, polled at GET
// /api/v1/videos/{id} until `completed` with progress 100, the MP4 downloaded
// from the hosted URL byte for byte after the provider's content expired; a
// failed video with the provider's words and the balance unchanged; another
// organisation's 404s.
import { beforeAll, describe, expect, it } from "vitest";
import { FAIL_PROMPT, TINY_MP4 } from "../../../support/fake-media-common.ts";
import { OPENAI_MEDIA_KEY, OPENAI_VIDEO_FAILURE_MESSAGE, startFakeOpenAiMedia, type FakeOpenAiMedia } from "../../../support/fake-media-openai.ts";
import { nanosOf } from "../../../support/exact-money.ts";
import { mediaTaskConfig } from "../../../support/media-task-config.ts";
import { useVideoTaskGateway, type TaskClient } from "../../../support/video-task-harness.ts";

const MODEL = "vendor/sora-compatible";
const PER_SECOND = "0.1";

let fakeNow = Date.now();
const stack = useVideoTaskGateway({
  model: MODEL,
  startUpstream: () => startFakeOpenAiMedia({ now: () => fakeNow }),
  config: (openaiUrl) =>
    mediaTaskConfig(
      [{ id: "vendor", label: "A vendor of OpenAI's videos API", protocol: "openai-compatible", base_url: openaiUrl, api_key_env: "VENDOR_API_KEY", timeout_ms: 5000 }],
      [
        {
          id: MODEL,
          name: "Sora-compatible",
          output: "video",
          details: { seconds: ["4", "8", "12"], size: ["720x1280", "1280x720"] },
          routes: [{ provider: "vendor", providerModelId: "sora-2", pricing: { video_output_per_second: PER_SECOND } }],
        },
      ],
    ),
  env: { VENDOR_API_KEY: OPENAI_MEDIA_KEY },
});
let openai: FakeOpenAiMedia;
let client: TaskClient;
beforeAll(() => void ({ upstream: openai, client } = stack as unknown as { upstream: FakeOpenAiMedia; client: TaskClient }));

describe("a video on an OpenAI-compatible vendor", () => {
  it("is created queued, ends completed with progress 100, and downloads from the hosted URL byte for byte after the vendor's content expired", async () => {
    const before = await client.balance();
    const created = await client.create({ prompt: "a red square", seconds: "8", size: "1280x720" });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    expect(created.json).toMatchObject({ taskId: expect.any(String), status: "queued" });
    const done = await client.finished(created.json.taskId);
    expect(done).toMatchObject({ status: "completed", progress: 100, object: "video", seconds: "8", size: "1280x720", error: null, router_assets: { status: "ready" } });

    const upstreamId = (await client.stored(created.json.taskId)).upstreamJobId;
    expect(openai.polls(upstreamId)).toBe(3);
    fakeNow += 61 * 60_000;
    expect((await fetch(`${openai.url}/videos/${upstreamId}/content`, { headers: { authorization: `Bearer ${OPENAI_MEDIA_KEY}` } })).status).toBe(404);
    await client.expectAsset(done.router_assets.urls[0], TINY_MP4, "video/mp4");
    expect(await client.balance()).toBe(before - 8n * nanosOf(PER_SECOND));

    // The provider-prefixed id alone names it; another organisation sees nothing.
    const byPrefix = await client.post("/getAsyncResponse", { taskId: `vendor:${upstreamId}` });
    expect(byPrefix.json).toMatchObject({ chat_id: created.json.taskId, status: "completed" });
    await client.expectHiddenFromOthers(created.json.taskId, done.router_assets.urls[0]);
  });

  it("ends failed with the vendor's words and returns the hold", async () => {
    const before = await client.balance();
    const created = await client.create({ prompt: `a cat ${FAIL_PROMPT}` });
    const done = await client.finished(created.json.taskId);
    expect(done).toMatchObject({ status: "failed", error: { code: "upstream_error", message: OPENAI_VIDEO_FAILURE_MESSAGE } });
    expect(await client.balance()).toBe(before);
  });

  it("tries a 503 at submission and a 503 on a poll again: the video still ends completed and is charged once", async () => {
    const before = await client.balance();
    const unavailable = { error: { message: "The server is overloaded or not ready yet.", type: "server_error", param: null, code: null } };
    openai.answerNextWith("POST", /^\/v1\/videos$/, 503, unavailable);
    openai.answerNextWith("GET", /^\/v1\/videos\/[^/]+$/, 503, unavailable);
    const created = await client.create({ prompt: "through an outage", seconds: "4", size: "1280x720" });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const done = await client.finished(created.json.taskId);
    expect(done).toMatchObject({ status: "completed", error: null, router_assets: { status: "ready" } });
    const submissions = openai.requests.filter((request) => request.method === "POST" && request.path === "/v1/videos" && request.raw.toString().includes("through an outage"));
    expect(submissions).toHaveLength(2);
    // The first poll met the outage: one poll more than the fake counted.
    const upstreamId = (await client.stored(created.json.taskId)).upstreamJobId;
    expect(openai.requests.filter((request) => request.method === "GET" && request.path === `/v1/videos/${upstreamId}`)).toHaveLength(openai.polls(upstreamId) + 1);
    expect(await client.balance()).toBe(before - 4n * nanosOf(PER_SECOND));
  });
});
