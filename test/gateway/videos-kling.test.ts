// Video tasks on the Kling protocol, end to end against the Kling fake (which
// checks every request's HS256 JWT): created, polled until done, shown in the
// spec's data style, the video read from the hosted copy byte for byte as the
// fake made it, also after the fake's URL expired; a failing job ends failed
// with Kling's words and returns its hold; another organisation sees nothing.
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../core/config/load.ts";
import { ConnectError, errorDetailOf } from "../../core/errors.ts";
import type { RouterConfig } from "../../core/config/schema.ts";
import { encodeVideoTask } from "../../core/tasks/video-result.ts";
import { CreateVideoRequestSchema, TaskStatus, type Task } from "../../gen/router/v1/tasks_pb.js";
import { FAIL_PROMPT, MODERATE_PROMPT, REFUSE_PROMPT, TINY_MP4, type FakeMediaUpstream } from "../support/fake-media-common.ts";
import { KLING_ACCESS_KEY, KLING_FAILURE_MESSAGE, KLING_MODERATION_MESSAGE, KLING_SECRET_KEY, startFakeKling } from "../support/fake-media-kling.ts";
import { startGateway, TEST_KEY, type Gateway } from "../support/harness.ts";
import { OTHER_KEY } from "../support/image-task-config.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const MODEL = "kling/kling-v2-5-turbo";
const PRICE_PER_SECOND = "0.042";
const ENV = { KLING_ACCESS_KEY, KLING_SECRET_KEY, TEST_API_KEY: TEST_KEY, OTHER_API_KEY: OTHER_KEY };
const DONE = { timeout: 10_000, interval: 10 };
const DAY = 24 * 60 * 60_000;

let fakeNow = Date.now();
let kling: FakeMediaUpstream;
let gateway: Gateway;

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
  kling = await startFakeKling({ now: () => fakeNow });
  gateway = await startGateway(klingTaskConfig(kling.url), { env: ENV });
});
afterAll(async () => {
  await gateway?.close();
  await kling?.close();
});

const caller = (key = TEST_KEY) => ({ apiKey: key }) as never;
const createVideo = (video: { prompt: string; length?: number; aspectRatio?: string; mode?: string; generateAudio?: boolean }, key = TEST_KEY) =>
  gateway.core.tasks.createVideo(create(CreateVideoRequestSchema, { caller: caller(key), model: MODEL, video }));
const getTask = (id: string, key = TEST_KEY) => gateway.core.tasks.get(caller(key), id);
const finished = (id: string) =>
  vi.waitFor(async () => {
    const task = await getTask(id);
    expect([TaskStatus.SUCCEEDED, TaskStatus.FAILED]).toContain(task.status);
    return task;
  }, DONE);
const dataStyle = (task: Task) => encodeVideoTask(task, { origin: gateway.url }) as Record<string, any>;

async function balance(organizationId = "org_test") {
  await gateway.core.accounts.idle();
  return gateway.core.accounts.stores.credits.balance(organizationId);
}

describe("a video task on Kling", () => {
  it("is created queued, polled until succeed, shown in the data style, charged the seconds delivered, and read back byte for byte also after Kling's URL expired", async () => {
    const before = await balance();
    const created = await createVideo({ prompt: "a wave at dusk", length: 5, aspectRatio: "16:9", mode: "std" });
    expect(created).toMatchObject({ status: TaskStatus.QUEUED, modelId: MODEL, provider: "kling" });
    expect(dataStyle(created)).toMatchObject({ taskId: created.id, chat_id: created.id, code: "ok", data: { status: "submitted", generations: [] } });

    const done = await finished(created.id);
    expect(done.status).toBe(TaskStatus.SUCCEEDED);
    expect(kling.polls(done.upstreamJobId)).toBe(3);
    const submitted = kling.requests.find((request) => request.method === "POST" && request.path === "/v1/videos/text2video")!;
    expect(submitted.body).toEqual({ model_name: "kling-v2-5-turbo", prompt: "a wave at dusk", duration: "5", aspect_ratio: "16:9", mode: "std" });
    expect(done.outputs).toEqual([expect.objectContaining({ mediaType: "video/mp4", upstreamId: `${done.upstreamJobId}-video-0`, durationSeconds: 5.042 })]);

    const shown = dataStyle(done);
    const assetUrl = `${gateway.url}/api/v1/assets/${done.id}/0`;
    expect(shown).toMatchObject({ chat_id: done.id, code: "ok", router_assets: { status: "ready", urls: [assetUrl] }, data: { status: "completed", generations: [{ url: assetUrl, duration: expect.anything() }] } });
    // 5.042 measured seconds are charged as the 5 held: never more than held.
    expect(done.usage).toMatchObject({ videos: 1, videoSeconds: 5, cost: "0.21" });
    expect(await balance()).toBe(before - 210_000_000n);

    const asset = await gateway.core.tasks.readAsset(caller(), done.id, 0, { offset: 0 });
    expect(Buffer.from(asset.bytes)).toEqual(TINY_MP4);
    expect(asset.mediaType).toBe("video/mp4");
    fakeNow += 31 * DAY;
    try {
      expect((await fetch(done.outputs[0].url)).status).toBe(404);
      expect(Buffer.from((await gateway.core.tasks.readAsset(caller(), done.id, 0, { offset: 0 })).bytes)).toEqual(TINY_MP4);
    } finally {
      fakeNow -= 31 * DAY;
    }
  });

  it("ends failed with Kling's words and returns the hold: a failed job, moderated output, a refused prompt (1301)", async () => {
    const before = await balance();
    const cases: [string, string, string][] = [
      [`x ${FAIL_PROMPT}`, "upstream_error", KLING_FAILURE_MESSAGE],
      [`x ${MODERATE_PROMPT}`, "content_moderated", KLING_MODERATION_MESSAGE],
      [`x ${REFUSE_PROMPT}`, "request_moderated", "Kling 400 (code 1301): Trigger the content security policy of the platform"],
    ];
    for (const [prompt, code, message] of cases) {
      const task = await finished((await createVideo({ prompt, length: 10 })).id);
      expect(task.status).toBe(TaskStatus.FAILED);
      expect(task.error).toMatchObject({ code, message });
      expect(dataStyle(task)).toMatchObject({ code, message, data: { status: "failed", status_msg: message, generations: [] } });
    }
    expect(await balance()).toBe(before);
  });

  it("is 404 task_not_found to another organisation, for the task and its asset", async () => {
    const done = await finished((await createVideo({ prompt: "mine" })).id);
    expect(done.status).toBe(TaskStatus.SUCCEEDED);
    const reasonOf = (error: unknown) => errorDetailOf(ConnectError.from(error))?.reason;
    expect(reasonOf(await getTask(done.id, OTHER_KEY).catch((error: unknown) => error))).toBe("task_not_found");
    expect(reasonOf(await gateway.core.tasks.readAsset(caller(OTHER_KEY), done.id, 0, { offset: 0 }).catch((error: unknown) => error))).toBe("task_not_found");
    expect((await gateway.core.tasks.readAsset(caller(), done.id, 0, { offset: 0 })).bytes.length).toBe(TINY_MP4.length);
  });
});
