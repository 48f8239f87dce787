// Video tasks on the Vertex AI Veo protocol, end to end against the Vertex fake
// (which checks every call's OAuth2 bearer token), through POST /api/v1/videos
// and GET /api/v1/videos/{id}: created, polled until the operation is done,
// answered in the spec's base64 style, the video (sent inline as base64 by Veo)
// stored and downloaded from the hosted URL byte for byte; a failing or filtered
// job ends failed with Google's words and returns its hold; another
// organisation sees nothing. A second gateway has no key in its environment,
// only application default credentials: the catalogue enables the route, and
// google-auth-library's own flow gets the token from a fake token endpoint.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { RouterConfig } from "../../../../core/config/schema.ts";
import { TaskStatus, VideoResultStyle } from "../../../../gen/router/v1/tasks_pb.js";
import { FAIL_PROMPT, MODERATE_PROMPT, TINY_MP4, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { startFakeVertex, VERTEX_FAILURE_MESSAGE, VERTEX_RAI_REASON, VERTEX_TOKEN } from "../../../support/fake-media-vertex.ts";
import { startFakeSts, type FakeSts } from "../../../support/fake-google-sts.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { INLINE_VIDEO_LIMIT_BYTES } from "../../../../gateway/limits.ts";
import { VIDEO_NOT_INLINE_MESSAGE } from "../../../../gateway/formats/videos/encode-response.ts";
import { mediaTaskConfig, TASK_ACCOUNTS_ENV } from "../../../support/media-task-config.ts";
import { taskClient, useVideoTaskGateway, type TaskClient } from "../../../support/video-task-harness.ts";
import { unsigned } from "../../../support/signed-link.ts";
import { signedLink } from "../../../support/signed-link.ts";

const MODEL = "google/veo-3.0-generate-001";
const PRICE_PER_SECOND = "0.40";

function vertexTaskConfig(vertexUrl: string): RouterConfig {
  return mediaTaskConfig(
    [{ id: "vertex", label: "Vertex AI", protocol: "vertex", base_url: vertexUrl, api_key_env: "VERTEX_ACCESS_TOKEN", timeout_ms: 5000 }],
    [
      {
        id: MODEL,
        name: "Veo 3",
        output: "video",
        details: { length: [4, 6, 8], resolution: ["720p", "1080p"], aspectRatio: ["16:9", "9:16"] },
        routes: [{ provider: "vertex", providerModelId: "veo-3.0-generate-001", pricing: { video_output_per_second: PRICE_PER_SECOND } }],
      },
    ],
  );
}

const caller = (key = TEST_KEY) => ({ apiKey: key }) as never;
const videosOf = (gateway: Gateway) => taskClient(gateway, { kind: "videos", model: MODEL });

describe("a video task on Vertex AI Veo, with the token in api_key_env", () => {
  const stack = useVideoTaskGateway({ model: MODEL, startUpstream: () => startFakeVertex(), config: vertexTaskConfig, env: { VERTEX_ACCESS_TOKEN: VERTEX_TOKEN } });
  let vertex: FakeMediaUpstream;
  let gateway: Gateway;
  let videos: TaskClient;
  beforeAll(() => void ({ upstream: vertex, gateway, client: videos } = stack));

  it("is created queued, polled until done, answered in the base64 style, charged the seconds asked, and its inline video served byte for byte", async () => {
    const before = await videos.balance();
    const created = await videos.create({ prompt: "a wave at dusk", length: 8, resolution: "1080p", aspectRatio: "9:16", seed: 7, generateAudio: true });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const id = created.json.taskId as string;
    expect(created.json).toMatchObject({ taskId: expect.stringMatching(/^rtr_/), chat_id: id, code: "ok", status: "queued", data: { status: "queued", generations: [] } });

    const done = await videos.finished(id);
    const task = await gateway.core.tasks.get(caller(), id);
    expect(task).toMatchObject({ status: TaskStatus.SUCCEEDED, provider: "vertex", resultStyle: VideoResultStyle.BASE64 });
    // Polled by this instance exactly as often as the fake needs: unfinished twice, then done.
    expect(vertex.polls(task.upstreamJobId)).toBe(3);
    const submitted = vertex.requests.find((request) => request.path.endsWith(":predictLongRunning"))!;
    expect(submitted.headers.authorization).toBe(`Bearer ${VERTEX_TOKEN}`);
    expect(submitted.body).toEqual({ instances: [{ prompt: "a wave at dusk" }], parameters: { sampleCount: 1, durationSeconds: 8, resolution: "1080p", aspectRatio: "9:16", seed: 7, generateAudio: true } });

    const assetUrl = `${gateway.url}/api/v1/assets/${id}/0`;
    expect(done).toMatchObject({
      chat_id: id,
      code: "ok",
      status: "completed",
      router_assets: { status: "ready", urls: [signedLink(assetUrl)] },
      data: { status: "completed", generations: [{ mimeType: "video/mp4", bytesBase64Encoded: TINY_MP4.toString("base64") }] },
    });
    // The hosted URL serves the bytes Veo sent inline (they were never at a URL of Google's).
    await videos.expectAsset(assetUrl, TINY_MP4, "video/mp4");
    // Veo measures nothing: the 8 seconds asked are charged, at 0.40 a second.
    expect(done.usage).toEqual({ videos: 1, video_seconds: 8, cost: 3.2 });
    expect(await videos.balance()).toBe(before - 3_200_000_000n);

    // The provider-prefixed id (vertex:<operation name>) names the same task in getAsyncResponse.
    const byUpstream = await videos.post("/getAsyncResponse", { taskId: `vertex:${task.upstreamJobId}` });
    expect(byUpstream.status, JSON.stringify(byUpstream.json)).toBe(200);
    expect(byUpstream.json).toMatchObject({ chat_id: id, status: "completed" });
  });

  it("finds a task by the operation's full name and by its short id (its last segment): with model unprefixed, alone prefixed", async () => {
    const id = await videos.created({ prompt: "found by its operation", length: 4 });
    const done = await videos.finished(id);
    const operation = (await videos.stored(id)).upstreamJobId;
    const short = operation.split("/").at(-1)!;
    expect(operation).toMatch(/\/operations\/[^/]+$/);
    for (const body of [{ taskId: operation, model: MODEL }, { taskId: short, model: MODEL }, { taskId: `vertex:${short}` }, { taskId: id }]) {
      const answer = await videos.post("/getAsyncResponse", body);
      expect([answer.status, answer.json.chat_id], JSON.stringify(body)).toEqual([200, id]);
      expect(unsigned(answer.json)).toEqual(unsigned(done));
    }
    expect(unsigned((await videos.read(`vertex:${short}`)).json)).toEqual(unsigned(done));
    // The provider's own id without a prefix needs the model; another organisation finds nothing by it.
    expect((await videos.post("/getAsyncResponse", { taskId: short })).json.error.param).toBe("model");
    await videos.expectHiddenFromOthers(id, done.router_assets.urls[0], [`vertex:${short}`]);
  });

  it("ends failed with Google's words and returns the hold: a failed operation, and Responsible AI filtering", async () => {
    const before = await videos.balance();
    const cases: [string, string, string][] = [
      [`x ${FAIL_PROMPT}`, "upstream_error", VERTEX_FAILURE_MESSAGE],
      [`x ${MODERATE_PROMPT}`, "content_moderated", VERTEX_RAI_REASON],
    ];
    for (const [prompt, code, message] of cases) {
      const done = await videos.finished(await videos.created({ prompt, length: 4 }));
      expect(done).toMatchObject({ code, message, status: "failed", data: { status: "failed", generations: [] } });
    }
    expect(await videos.balance()).toBe(before);
  });

  it("is 404 task_not_found to another organisation, for the task and its asset", async () => {
    const id = await videos.created({ prompt: "mine" });
    const done = await videos.finished(id);
    expect(done.status).toBe("completed");
    await videos.expectHiddenFromOthers(id, done.router_assets.urls[0]);
  });

  it("refuses a parameter Veo does not carry, or a value the catalogue does not list, with a 400 naming it, before anything is held", async () => {
    const before = await videos.balance();
    const requests = vertex.requests.length;
    for (const [field, value] of [["mode", "pro"], ["size", "1280x720"], ["length", 5], ["resolution", "4k"], ["aspectRatio", "1:1"]] as const) {
      const refused = await videos.create({ prompt: "x", [field]: value });
      expect([refused.status, refused.json.error?.param], JSON.stringify(refused.json)).toEqual([400, field]);
    }
    expect(vertex.requests.length).toBe(requests);
    expect(await videos.balance()).toBe(before);
  });
});

/** A video of exactly `size` bytes that still starts as an MP4 (TINY_MP4, then zeros). */
const videoOfSize = (size: number) => Buffer.concat([TINY_MP4, Buffer.alloc(size - TINY_MP4.length)]);
const AT_LIMIT = videoOfSize(INLINE_VIDEO_LIMIT_BYTES);
const OVER_LIMIT = videoOfSize(INLINE_VIDEO_LIMIT_BYTES + 1);

describe("a Veo video's bytes inline in the base64 style, up to the limit", () => {
  const stack = useVideoTaskGateway({
    model: MODEL,
    startUpstream: () => startFakeVertex({ videoOf: (prompt) => (prompt === "over" ? OVER_LIMIT : AT_LIMIT) }),
    config: vertexTaskConfig,
    env: { VERTEX_ACCESS_TOKEN: VERTEX_TOKEN },
  });

  it("carries a video of the limit's size inline, and leaves a larger one out, pointing to router_assets.urls, on both read endpoints", async () => {
    const { client: videos } = stack;
    const atLimit = await videos.finished(await videos.created({ prompt: "at", length: 4 }));
    expect(atLimit.message).toBe("The video is ready; download it from router_assets.urls.");
    expect(atLimit.data.generations).toHaveLength(1);
    expect(Buffer.from(atLimit.data.generations[0].bytesBase64Encoded, "base64").equals(AT_LIMIT)).toBe(true);

    const id = await videos.created({ prompt: "over", length: 4 });
    const over = await videos.finished(id);
    const byAsync = await videos.post("/getAsyncResponse", { taskId: id, model: MODEL });
    for (const answer of [over, byAsync.json]) {
      expect(answer).toMatchObject({ code: "ok", status: "completed", message: VIDEO_NOT_INLINE_MESSAGE, data: { status: "completed", generations: [{ mimeType: "video/mp4" }] } });
      expect(answer.data.generations[0]).not.toHaveProperty("bytesBase64Encoded");
    }
    // The URL the message points to serves it whole.
    await videos.expectAsset(over.router_assets.urls[0], OVER_LIMIT, "video/mp4");
  });
});

describe("a video task on Vertex AI Veo with application default credentials and no key", () => {
  let vertex: FakeMediaUpstream;
  let sts: FakeSts;
  beforeAll(async () => {
    vertex = await startFakeVertex();
    sts = await startFakeSts();
  });
  afterAll(async () => {
    await vertex?.close();
    await sts?.close();
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("without a key or credentials the route is disabled; with GOOGLE_APPLICATION_CREDENTIALS alone it runs, with the token the library got", async () => {
    const keyless = await startGateway(vertexTaskConfig(vertex.url), { env: TASK_ACCOUNTS_ENV });
    try {
      const refused = await videosOf(keyless).create({ prompt: "x" });
      expect([refused.status, refused.json.error?.code], JSON.stringify(refused.json)).toEqual([503, "no_provider_available"]);
    } finally {
      await keyless.close();
    }

    // The library reads the process's environment; the catalogue, the core's.
    vi.stubEnv("GOOGLE_APPLICATION_CREDENTIALS", sts.credentialsFile);
    const gateway = await startGateway(vertexTaskConfig(vertex.url), { env: { ...TASK_ACCOUNTS_ENV, GOOGLE_APPLICATION_CREDENTIALS: sts.credentialsFile } });
    try {
      const videos = videosOf(gateway);
      const id = await videos.created({ prompt: "a wave at dusk", length: 4 });
      const done = await videos.finished(id);
      expect(done.status).toBe("completed");
      await videos.expectAsset(done.router_assets.urls[0], TINY_MP4, "video/mp4");
      const task = await gateway.core.tasks.get(caller(), id);
      const calls = vertex.requests.filter((request) => request.path.endsWith(":predictLongRunning") || request.body.operationName === task.upstreamJobId);
      expect(calls.length).toBe(4);
      for (const request of calls) expect(request.headers.authorization).toBe(`Bearer ${VERTEX_TOKEN}`);
      expect(sts.exchanges()).toBe(1);
    } finally {
      await gateway.close();
    }
  });
});
