// Video tasks on the Vertex AI Veo protocol, end to end against the Vertex fake
// (which checks every call's OAuth2 bearer token): created, polled until the
// operation is done, shown in the spec's base64 style, the video (sent inline
// as base64 by Veo) stored and read back byte for byte; a failing or filtered
// job ends failed with Google's words and returns its hold; another
// organisation sees nothing. A second gateway has no key in its environment,
// only application default credentials: the catalogue enables the route, and
// google-auth-library's own flow gets the token from a fake token endpoint.
import { create } from "@bufbuild/protobuf";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../core/config/load.ts";
import type { RouterConfig } from "../../core/config/schema.ts";
import { ConnectError, errorDetailOf } from "../../core/errors.ts";
import { encodeVideoTask } from "../../core/tasks/video-result.ts";
import { CreateVideoRequestSchema, TaskStatus, VideoResultStyle, type Task } from "../../gen/router/v1/tasks_pb.js";
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
type VideoFields = { prompt: string; length?: number; resolution?: string; aspectRatio?: string; seed?: bigint; generateAudio?: boolean };

function tasksOf(gateway: Gateway) {
  const createVideo = (video: VideoFields, key = TEST_KEY) => gateway.core.tasks.createVideo(create(CreateVideoRequestSchema, { caller: caller(key), model: MODEL, video }));
  const getTask = (id: string, key = TEST_KEY) => gateway.core.tasks.get(caller(key), id);
  const finished = (id: string) =>
    vi.waitFor(async () => {
      const task = await getTask(id);
      expect([TaskStatus.SUCCEEDED, TaskStatus.FAILED]).toContain(task.status);
      return task;
    }, DONE);
  const readAsset = (id: string, key = TEST_KEY) => gateway.core.tasks.readAsset(caller(key), id, 0, { offset: 0 });
  return { createVideo, getTask, finished, readAsset };
}

describe("a video task on Vertex AI Veo, with the token in api_key_env", () => {
  let vertex: FakeMediaUpstream;
  let gateway: Gateway;
  let tasks: ReturnType<typeof tasksOf>;
  beforeAll(async () => {
    vertex = await startFakeVertex();
    gateway = await startGateway(vertexTaskConfig(vertex.url), { env: { ...ACCOUNTS_ENV, VERTEX_ACCESS_TOKEN: VERTEX_TOKEN } });
    tasks = tasksOf(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    await vertex?.close();
  });

  async function balance(organizationId = "org_test") {
    await gateway.core.accounts.idle();
    return gateway.core.accounts.stores.credits.balance(organizationId);
  }
  const base64Style = async (task: Task) => {
    const assetBytes = task.status === TaskStatus.SUCCEEDED ? [(await tasks.readAsset(task.id)).bytes] : undefined;
    return encodeVideoTask(task, { origin: gateway.url, assetBytes }) as Record<string, any>;
  };

  it("is created queued, polled until done, shown in the base64 style, charged the seconds asked, and its inline video stored byte for byte", async () => {
    const before = await balance();
    const created = await tasks.createVideo({ prompt: "a wave at dusk", length: 8, resolution: "1080p", aspectRatio: "9:16", seed: 7n, generateAudio: true });
    expect(created).toMatchObject({ status: TaskStatus.QUEUED, modelId: MODEL, provider: "vertex", resultStyle: VideoResultStyle.BASE64 });
    expect(await base64Style(created)).toMatchObject({ taskId: created.id, chat_id: created.id, code: "ok", status: "queued", data: { status: "queued", generations: [] } });

    const done = await tasks.finished(created.id);
    expect(done.status).toBe(TaskStatus.SUCCEEDED);
    // Polled by this instance exactly as often as the fake needs: unfinished twice, then done.
    expect(vertex.polls(done.upstreamJobId)).toBe(3);
    const submitted = vertex.requests.find((request) => request.path.endsWith(":predictLongRunning"))!;
    expect(submitted.headers.authorization).toBe(`Bearer ${VERTEX_TOKEN}`);
    expect(submitted.body).toEqual({ instances: [{ prompt: "a wave at dusk" }], parameters: { sampleCount: 1, durationSeconds: 8, resolution: "1080p", aspectRatio: "9:16", seed: 7, generateAudio: true } });
    expect(done.outputs).toEqual([expect.objectContaining({ mediaType: "video/mp4" })]);

    const asset = await tasks.readAsset(done.id);
    expect(Buffer.from(asset.bytes)).toEqual(TINY_MP4);
    expect(asset.mediaType).toBe("video/mp4");
    // The hosted URL serves the same bytes over HTTP (Veo's bytes were never at a URL of Google's).
    const assetUrl = `${gateway.url}/api/v1/assets/${done.id}/0`;
    const served = await fetch(assetUrl, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect([served.status, served.headers.get("content-type")]).toEqual([200, "video/mp4"]);
    expect(Buffer.from(await served.arrayBuffer())).toEqual(TINY_MP4);

    expect(await base64Style(done)).toMatchObject({
      code: "ok",
      status: "completed",
      router_assets: { status: "ready", urls: [assetUrl] },
      data: { status: "completed", generations: [{ mimeType: "video/mp4", bytesBase64Encoded: TINY_MP4.toString("base64") }] },
    });
    // Veo measures nothing: the 8 seconds asked are charged, at 0.40 a second.
    expect(done.usage).toMatchObject({ videos: 1, videoSeconds: 8, cost: "3.2" });
    expect(await balance()).toBe(before - 3_200_000_000n);
  });

  it("ends failed with Google's words and returns the hold: a failed operation, and Responsible AI filtering", async () => {
    const before = await balance();
    const cases: [string, string, string][] = [
      [`x ${FAIL_PROMPT}`, "upstream_error", VERTEX_FAILURE_MESSAGE],
      [`x ${MODERATE_PROMPT}`, "content_moderated", VERTEX_RAI_REASON],
    ];
    for (const [prompt, code, message] of cases) {
      const task = await tasks.finished((await tasks.createVideo({ prompt, length: 4 })).id);
      expect(task.status).toBe(TaskStatus.FAILED);
      expect(task.error).toMatchObject({ code, message });
      expect(await base64Style(task)).toMatchObject({ code, message, status: "failed", data: { status: "failed", generations: [] } });
    }
    expect(await balance()).toBe(before);
  });

  it("is 404 task_not_found to another organisation, for the task and its asset", async () => {
    const done = await tasks.finished((await tasks.createVideo({ prompt: "mine" })).id);
    expect(done.status).toBe(TaskStatus.SUCCEEDED);
    const reasonOf = (error: unknown) => errorDetailOf(ConnectError.from(error))?.reason;
    expect(reasonOf(await tasks.getTask(done.id, OTHER_KEY).catch((error: unknown) => error))).toBe("task_not_found");
    expect(reasonOf(await tasks.readAsset(done.id, OTHER_KEY).catch((error: unknown) => error))).toBe("task_not_found");
    const other = await fetch(`${gateway.url}/api/v1/assets/${done.id}/0`, { headers: { authorization: `Bearer ${OTHER_KEY}` } });
    expect(other.status).toBe(404);
    expect((await tasks.readAsset(done.id)).bytes.length).toBe(TINY_MP4.length);
  });

  it("refuses a parameter Veo does not carry, or a value the catalogue does not list, naming it, before anything is held", async () => {
    const before = await balance();
    const requests = vertex.requests.length;
    const paramOf = async (video: Record<string, unknown>) => {
      const error = await gateway.core.tasks.createVideo(create(CreateVideoRequestSchema, { caller: caller(), model: MODEL, video: { prompt: "x", ...video } })).catch((caught: unknown) => caught);
      return errorDetailOf(ConnectError.from(error))?.param;
    };
    expect(await paramOf({ mode: "pro" })).toBe("mode");
    expect(await paramOf({ size: "1280x720" })).toBe("size");
    expect(await paramOf({ length: 5 })).toBe("length");
    expect(await paramOf({ resolution: "4k" })).toBe("resolution");
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

  it("without a key or credentials the route is disabled; with GOOGLE_APPLICATION_CREDENTIALS it runs, with the token the library got", async () => {
    const keyless = await startGateway(vertexTaskConfig(vertex.url), { env: ACCOUNTS_ENV });
    try {
      const error = await tasksOf(keyless).createVideo({ prompt: "x" }).catch((caught: unknown) => caught);
      expect(errorDetailOf(ConnectError.from(error))?.reason).toBe("no_provider_available");
    } finally {
      await keyless.close();
    }

    // The library reads the process's environment; the catalogue, the core's.
    vi.stubEnv("GOOGLE_APPLICATION_CREDENTIALS", sts.credentialsFile);
    const gateway = await startGateway(vertexTaskConfig(vertex.url), { env: { ...ACCOUNTS_ENV, GOOGLE_APPLICATION_CREDENTIALS: sts.credentialsFile } });
    try {
      const tasks = tasksOf(gateway);
      const done = await tasks.finished((await tasks.createVideo({ prompt: "a wave at dusk", length: 4 })).id);
      expect(done.status).toBe(TaskStatus.SUCCEEDED);
      expect(Buffer.from((await tasks.readAsset(done.id)).bytes)).toEqual(TINY_MP4);
      const calls = vertex.requests.filter((request) => request.path.endsWith(":predictLongRunning") || request.body.operationName === done.upstreamJobId);
      expect(calls.length).toBe(4);
      for (const request of calls) expect(request.headers.authorization).toBe(`Bearer ${VERTEX_TOKEN}`);
      expect(sts.exchanges()).toBe(1);
    } finally {
      await gateway.close();
    }
  });
});
