// Video tasks on the Vertex AI Veo protocol, end to end against the Vertex fake
// (which checks every call's OAuth2 bearer token), through POST /api/v1/videos
// and GET /api/v1/videos/{id}: created, polled until the operation is done,
// answered in the spec's base64 style, the video (sent inline as base64 by Veo)
// stored and downloaded from the hosted URL byte for byte; a failing or filtered
// job ends failed with Google's words and returns its hold; another
// organisation sees nothing. A second gateway has no key in its environment,
// only application default credentials: the catalogue enables the route, and
// google-auth-library's own flow gets the token from a fake token endpoint.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../core/config/load.ts";
import type { RouterConfig } from "../../core/config/schema.ts";
import { TaskStatus, VideoResultStyle } from "../../gen/router/v1/tasks_pb.js";
import { FAIL_PROMPT, MODERATE_PROMPT, TINY_MP4, type FakeMediaUpstream } from "../support/fake-media-common.ts";
import { startFakeVertex, VERTEX_FAILURE_MESSAGE, VERTEX_RAI_REASON, VERTEX_TOKEN } from "../support/fake-media-vertex.ts";
import { startFakeSts, type FakeSts } from "../support/fake-google-sts.ts";
import { startGateway, TEST_KEY, type Gateway } from "../support/harness.ts";
import { OTHER_KEY } from "../support/image-task-config.ts";

const MODEL = "google/veo-3.0-generate-001";
const PRICE_PER_SECOND = "0.40";
const ACCOUNTS_ENV = { TEST_API_KEY: TEST_KEY, OTHER_API_KEY: OTHER_KEY };
const DONE = { timeout: 10_000, interval: 10 };

function vertexTaskConfig(vertexUrl: string): RouterConfig {
  return parseConfig(
    JSON.stringify({
      providers: [
        { id: "simulator", label: "Simulator", protocol: "simulator" },
        { id: "vertex", label: "Vertex AI", protocol: "vertex", base_url: vertexUrl, api_key_env: "VERTEX_ACCESS_TOKEN", timeout_ms: 5000 },
      ],
      models: [
        {
          id: MODEL,
          name: "Veo 3",
          created: 1700000000,
          creator: "google",
          context_length: 1024,
          max_completion_tokens: 1,
          input_modalities: ["text", "image"],
          output_modalities: ["video"],
          supported_parameters: [],
          supported_params_details: { length: [4, 6, 8], resolution: ["720p", "1080p"], aspectRatio: ["16:9", "9:16"] },
          providers: [{ provider: "vertex", provider_model_id: "veo-3.0-generate-001", pricing: { prompt: "0", completion: "0", video_output_per_second: PRICE_PER_SECOND } }],
        },
      ],
      organizations: [
        { id: "org_test", name: "Test", credits: "10", keys: [{ id: "key_test", env: "TEST_API_KEY" }] },
        { id: "org_other", name: "Other", credits: "10", keys: [{ id: "key_other", env: "OTHER_API_KEY" }] },
      ],
      tasks: { poll_interval_ms: 5, poll_max_interval_ms: 20, lease_seconds: 1, timeout_seconds: 30, assets_dir: mkdtempSync(join(tmpdir(), "router-assets-vertex-")) },
    }),
  );
}

const caller = (key = TEST_KEY) => ({ apiKey: key }) as never;
const auth = (key = TEST_KEY) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });

/** The public endpoints of one gateway: POST /api/v1/videos, GET /api/v1/videos/{id}, getAsyncResponse. */
function videosOf(gateway: Gateway) {
  const post = async (path: string, body: unknown, key = TEST_KEY) => {
    const response = await fetch(`${gateway.apiUrl}${path}`, { method: "POST", headers: auth(key), body: JSON.stringify(body) });
    return { status: response.status, json: (await response.json()) as Record<string, any> };
  };
  const createVideo = (body: Record<string, unknown>, key = TEST_KEY) => post("/videos", { model: MODEL, ...body }, key);
  const getVideo = async (id: string, key = TEST_KEY) => {
    const response = await fetch(`${gateway.apiUrl}/videos/${id}`, { headers: auth(key) });
    return { status: response.status, json: (await response.json()) as Record<string, any> };
  };
  const finished = (id: string) =>
    vi.waitFor(async () => {
      const { json } = await getVideo(id);
      expect(["completed", "failed"]).toContain(json.status);
      return json;
    }, DONE);
  const created = async (body: Record<string, unknown>) => {
    const answer = await createVideo(body);
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    return answer.json.taskId as string;
  };
  return { post, createVideo, getVideo, finished, created };
}

describe("a video task on Vertex AI Veo, with the token in api_key_env", () => {
  let vertex: FakeMediaUpstream;
  let gateway: Gateway;
  let videos: ReturnType<typeof videosOf>;
  beforeAll(async () => {
    vertex = await startFakeVertex();
    gateway = await startGateway(vertexTaskConfig(vertex.url), { env: { ...ACCOUNTS_ENV, VERTEX_ACCESS_TOKEN: VERTEX_TOKEN } });
    videos = videosOf(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    await vertex?.close();
  });

  async function balance(organizationId = "org_test") {
    await gateway.core.accounts.idle();
    return gateway.core.accounts.stores.credits.balance(organizationId);
  }

  it("is created queued, polled until done, answered in the base64 style, charged the seconds asked, and its inline video served byte for byte", async () => {
    const before = await balance();
    const created = await videos.createVideo({ prompt: "a wave at dusk", length: 8, resolution: "1080p", aspectRatio: "9:16", seed: 7, generateAudio: true });
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
      router_assets: { status: "ready", urls: [assetUrl] },
      data: { status: "completed", generations: [{ mimeType: "video/mp4", bytesBase64Encoded: TINY_MP4.toString("base64") }] },
    });
    // The hosted URL serves the bytes Veo sent inline (they were never at a URL of Google's).
    const served = await fetch(assetUrl, { headers: auth() });
    expect([served.status, served.headers.get("content-type")]).toEqual([200, "video/mp4"]);
    expect(Buffer.from(await served.arrayBuffer())).toEqual(TINY_MP4);
    // Veo measures nothing: the 8 seconds asked are charged, at 0.40 a second.
    expect(done.usage).toEqual({ videos: 1, video_seconds: 8, cost: 3.2 });
    expect(await balance()).toBe(before - 3_200_000_000n);

    // The provider-prefixed id (vertex:<operation name>) names the same task in getAsyncResponse.
    const byUpstream = await videos.post("/getAsyncResponse", { taskId: `vertex:${task.upstreamJobId}` });
    expect(byUpstream.status, JSON.stringify(byUpstream.json)).toBe(200);
    expect(byUpstream.json).toMatchObject({ chat_id: id, status: "completed" });
  });

  it("ends failed with Google's words and returns the hold: a failed operation, and Responsible AI filtering", async () => {
    const before = await balance();
    const cases: [string, string, string][] = [
      [`x ${FAIL_PROMPT}`, "upstream_error", VERTEX_FAILURE_MESSAGE],
      [`x ${MODERATE_PROMPT}`, "content_moderated", VERTEX_RAI_REASON],
    ];
    for (const [prompt, code, message] of cases) {
      const done = await videos.finished(await videos.created({ prompt, length: 4 }));
      expect(done).toMatchObject({ code, message, status: "failed", data: { status: "failed", generations: [] } });
    }
    expect(await balance()).toBe(before);
  });

  it("is 404 task_not_found to another organisation, for the task and its asset", async () => {
    const id = await videos.created({ prompt: "mine" });
    const done = await videos.finished(id);
    expect(done.status).toBe("completed");
    const other = await videos.getVideo(id, OTHER_KEY);
    expect([other.status, other.json.error?.code]).toEqual([404, "task_not_found"]);
    const asset = await fetch(done.router_assets.urls[0], { headers: auth(OTHER_KEY) });
    expect(asset.status).toBe(404);
    expect((await fetch(done.router_assets.urls[0], { headers: auth() })).status).toBe(200);
  });

  it("refuses a parameter Veo does not carry, or a value the catalogue does not list, with a 400 naming it, before anything is held", async () => {
    const before = await balance();
    const requests = vertex.requests.length;
    for (const [field, value] of [["mode", "pro"], ["size", "1280x720"], ["length", 5], ["resolution", "4k"], ["aspectRatio", "1:1"]] as const) {
      const refused = await videos.createVideo({ prompt: "x", [field]: value });
      expect([refused.status, refused.json.error?.param], JSON.stringify(refused.json)).toEqual([400, field]);
    }
    expect(vertex.requests.length).toBe(requests);
    expect(await balance()).toBe(before);
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
    const keyless = await startGateway(vertexTaskConfig(vertex.url), { env: ACCOUNTS_ENV });
    try {
      const refused = await videosOf(keyless).createVideo({ prompt: "x" });
      expect([refused.status, refused.json.error?.code], JSON.stringify(refused.json)).toEqual([503, "no_provider_available"]);
    } finally {
      await keyless.close();
    }

    // The library reads the process's environment; the catalogue, the core's.
    vi.stubEnv("GOOGLE_APPLICATION_CREDENTIALS", sts.credentialsFile);
    const gateway = await startGateway(vertexTaskConfig(vertex.url), { env: { ...ACCOUNTS_ENV, GOOGLE_APPLICATION_CREDENTIALS: sts.credentialsFile } });
    try {
      const videos = videosOf(gateway);
      const id = await videos.created({ prompt: "a wave at dusk", length: 4 });
      const done = await videos.finished(id);
      expect(done.status).toBe("completed");
      expect(Buffer.from(await (await fetch(done.router_assets.urls[0], { headers: auth() })).arrayBuffer())).toEqual(TINY_MP4);
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
