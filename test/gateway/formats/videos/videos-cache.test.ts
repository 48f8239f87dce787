// The media cache (issue 23) on the video endpoints, against the OpenAI videos
// fake: a create with a `cache_key` header repeating one whose video succeeded
// answers that task (same id, completed, its hosted MP4) with no second
// upstream job, charged a tenth of its cost; the chat route's video body with
// the header finds it too; other seconds, another organisation or a failed
// original make a new task.
import { beforeAll, describe, expect, it, vi } from "vitest";
import { FAIL_PROMPT, TINY_MP4 } from "../../../support/fake-media-common.ts";
import { OPENAI_MEDIA_KEY, startFakeOpenAiMedia, type FakeOpenAiMedia } from "../../../support/fake-media-openai.ts";
import { nanosOf } from "../../../support/exact-money.ts";
import { mediaTaskConfig, OTHER_KEY } from "../../../support/media-task-config.ts";
import { TEST_KEY } from "../../../support/harness.ts";
import { useVideoTaskGateway, type TaskClient, type VideoTaskStack } from "../../../support/video-task-harness.ts";

const MODEL = "vendor/sora-compatible";
const PER_SECOND = "0.1";

const stack: VideoTaskStack = useVideoTaskGateway({
  model: MODEL,
  startUpstream: () => startFakeOpenAiMedia(),
  config: (openaiUrl) =>
    mediaTaskConfig(
      [{ id: "vendor", label: "A vendor of OpenAI's videos API", protocol: "openai-compatible", base_url: openaiUrl, api_key_env: "VENDOR_API_KEY", timeout_ms: 5000 }],
      [
        {
          id: MODEL,
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
beforeAll(() => {
  openai = stack.upstream as FakeOpenAiMedia;
  client = stack.client;
});

const submissions = () => openai.requests.filter((request) => request.method === "POST" && request.path === "/v1/videos").length;

async function createEnded(body: Record<string, unknown>, cacheKey: string) {
  const created = await client.create(body, { cacheKey });
  expect(created.status, JSON.stringify(created.json)).toBe(200);
  expect(created.json).toMatchObject({ status: "queued", cached: false });
  return { id: created.json.taskId as string, done: await client.finished(created.json.taskId) };
}

describe("a video create with a cache_key", { timeout: 30_000 }, () => {
  it("answers the succeeded video again (same id, completed, its hosted MP4) with no second job, charged a tenth", async () => {
    const body = { prompt: "a cached wave", seconds: "4", size: "1280x720" };
    const { id, done } = await createEnded(body, "wave");
    expect(done.status).toBe("completed");
    const jobs = submissions();
    const before = await client.balance();
    const again = await client.create(body, { cacheKey: "wave" });
    expect(again.status, JSON.stringify(again.json)).toBe(200);
    expect(again.json).toMatchObject({ id, status: "completed", progress: 100, cached: true, usage_id: expect.any(String) });
    await client.expectAsset(again.json.router_assets.urls[0], TINY_MP4, "video/mp4");
    expect(submissions()).toBe(jobs);
    expect(await client.balance()).toBe(before - (4n * nanosOf(PER_SECOND)) / 10n);
    const record = await stack.gateway.core.accounts.usage.get("org_test", again.json.usage_id);
    expect(record).toMatchObject({ model: MODEL, provider: "vendor", cost: "0.04", cacheHit: true, cacheSimilarity: 1 });

    // The chat route's video body is the same create, so the same key finds the same task.
    const chat = await fetch(`${stack.gateway.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", cache_key: "wave" },
      body: JSON.stringify({ model: MODEL, ...body }),
    });
    expect(await chat.json()).toMatchObject({ id, status: "completed", cached: true });
    expect(submissions()).toBe(jobs);
  });

  it("misses with other seconds, and for another organisation", async () => {
    const body = { prompt: "a wave to change", seconds: "4", size: "1280x720" };
    const { id } = await createEnded(body, "change");
    const jobs = submissions();
    const longer = await client.create({ ...body, seconds: "8" }, { cacheKey: "change" });
    expect(longer.json).toMatchObject({ status: "queued", cached: false });
    expect(longer.json.taskId).not.toBe(id);
    const other = await client.create(body, { cacheKey: "change", key: OTHER_KEY });
    expect(other.json).toMatchObject({ status: "queued", cached: false });
    expect(other.json.taskId).not.toBe(id);
    await vi.waitFor(() => expect(submissions()).toBe(jobs + 2), { timeout: 5000, interval: 10 });
  });

  it("never reuses a failed video", async () => {
    const body = { prompt: `a wave ${FAIL_PROMPT}`, seconds: "4" };
    const { id, done } = await createEnded(body, "failing");
    expect(done.status).toBe("failed");
    const again = await client.create(body, { cacheKey: "failing" });
    expect(again.json).toMatchObject({ status: "queued", cached: false });
    expect(again.json.taskId).not.toBe(id);
  });
});
