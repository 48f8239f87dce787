// Video tasks on the Kling protocol, end to end through the gateway's HTTP
// endpoints against the Kling fake (which checks every request's HS256 JWT):
// created, polled until done, shown in the spec's data style, the MP4
// downloaded from the gateway's hosted URL byte for byte as the fake made it,
// also after the fake's URL expired; a failing, moderated or refused job ends
// failed with Kling's words and returns its hold; another organisation sees nothing.
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfigFile } from "../../../../core/config/load.ts";
import { nanosOf } from "../../../support/exact-money.ts";
import { FAIL_PROMPT, MODERATE_PROMPT, REFUSE_PROMPT, TINY_MP4, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { KLING_ACCESS_KEY, KLING_FAILURE_MESSAGE, KLING_MODERATION_MESSAGE, KLING_SECRET_KEY, startFakeKling } from "../../../support/fake-media-kling.ts";
import { startGateway, TEST_KEY } from "../../../support/harness.ts";
import { mediaTaskConfig } from "../../../support/media-task-config.ts";
import { DAY_MS, taskClient, useVideoTaskGateway, type TaskClient } from "../../../support/video-task-harness.ts";
import { signedLink } from "../../../support/signed-link.ts";

const MODEL = "kling/kling-v2-5-turbo";
/** The bundled default's price for this model (docs/tasks.md, "Kling"). */
const PRICE_PER_SECOND = "0.042";

let fakeNow = Date.now();
const stack = useVideoTaskGateway({
  model: MODEL,
  startUpstream: () => startFakeKling({ now: () => fakeNow }),
  config: (klingUrl) =>
    mediaTaskConfig(
      [{ id: "kling", label: "Kling AI", protocol: "kling", base_url: klingUrl, api_key_env: "KLING_ACCESS_KEY", secret_key_env: "KLING_SECRET_KEY", timeout_ms: 5000 }],
      [
        {
          id: MODEL,
          name: "Kling 2.5 Turbo",
          output: "video",
          details: { length: [5, 10], aspectRatio: ["16:9", "9:16", "1:1"], mode: ["std", "pro"] },
          routes: [{ provider: "kling", providerModelId: "kling-v2-5-turbo", pricing: { video_output_per_second: PRICE_PER_SECOND } }],
        },
      ],
    ),
  env: { KLING_ACCESS_KEY, KLING_SECRET_KEY },
});
let kling: FakeMediaUpstream;
let client: TaskClient;
/** The input image the gateway fetches and checks before anything is held: a 2:1 PNG. */
let imageUrl: string;
beforeAll(() => void ({ upstream: kling, client, imageUrl } = stack));

describe("a video task on Kling", () => {
  it("is created submitted, polled until succeed, shown in the data style, charged the seconds held, and downloaded byte for byte also after Kling's URL expired", async () => {
    const before = await client.balance();
    const created = await client.create({ prompt: "a wave at dusk", length: 5, aspectRatio: "16:9", mode: "pro", generateAudio: false });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const id = created.json.taskId as string;
    expect(created.json).toMatchObject({ taskId: expect.stringMatching(/^rtr_/), chat_id: id, code: "ok", model: MODEL, data: { status: "submitted", generations: [] } });

    const done = await client.finished(id);
    expect(done.data.status).toBe("completed");
    const task = await client.stored(id);
    expect(kling.polls(task.upstreamJobId)).toBe(3);

    // Kling got the task as its API takes it: text2video, a JWT the fake verified, duration as a string, sound off.
    const submitted = kling.requests.find((request) => request.method === "POST" && request.body.prompt === "a wave at dusk")!;
    expect(submitted.path).toBe("/v1/videos/text2video");
    expect(submitted.headers.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    expect(submitted.body).toEqual({ model_name: "kling-v2-5-turbo", prompt: "a wave at dusk", duration: "5", aspect_ratio: "16:9", mode: "pro", sound: "off" });

    // The data style: data.status completed (Kling's succeed), each generation's url (the hosted copy) and duration.
    const assetUrl = `${stack.gateway.url}/api/v1/assets/${id}/0`;
    expect(done).toMatchObject({ chat_id: id, code: "ok", router_assets: { status: "ready", urls: [signedLink(assetUrl)] } });
    expect(done.data.generations).toEqual([expect.objectContaining({ url: signedLink(assetUrl), duration: expect.anything() })]);
    expect(task.outputs[0]).toMatchObject({ upstreamId: `${task.upstreamJobId}-video-0`, durationSeconds: 5.042, mediaType: "video/mp4" });

    // Kling measured 5.042 s: charged the 5 held at the catalogue's price, once.
    expect(done.usage).toEqual({ videos: 1, video_seconds: 5, cost: 0.21 });
    expect(await client.balance()).toBe(before - nanosOf("0.21"));

    await client.expectAsset(assetUrl, TINY_MP4, "video/mp4");
    // Kling deletes its files after 30 days; the hosted copy outlives its URL.
    fakeNow += 31 * DAY_MS;
    try {
      expect((await fetch(task.outputs[0].url)).status).toBe(404);
      await client.expectAsset(assetUrl, TINY_MP4, "video/mp4");
    } finally {
      fakeNow -= 31 * DAY_MS;
    }
  });

  it("sends an image as image2video, polls it under that kind, and answers getAsyncResponse by the kling: prefixed id", async () => {
    const created = await client.create({ prompt: "the frame moves", image: imageUrl, length: 10 });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const done = await client.finished(created.json.taskId);
    expect(done.data.status).toBe("completed");
    const task = await client.stored(created.json.taskId);
    const submitted = kling.requests.find((request) => request.method === "POST" && request.body.prompt === "the frame moves")!;
    expect([submitted.path, submitted.body]).toEqual(["/v1/videos/image2video", { model_name: "kling-v2-5-turbo", prompt: "the frame moves", image: imageUrl, duration: "10" }]);
    expect(kling.requests.filter((request) => request.path === `/v1/videos/image2video/${task.upstreamJobId}`)).toHaveLength(3);
    const response = await client.post("/getAsyncResponse", { taskId: `kling:${task.upstreamJobId}` });
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ chat_id: created.json.taskId, data: { status: "completed" } });
  });

  it.each([
    { prompt: `a cat ${FAIL_PROMPT}`, code: "upstream_error", message: KLING_FAILURE_MESSAGE },
    { prompt: `a cat ${MODERATE_PROMPT}`, code: "content_moderated", message: KLING_MODERATION_MESSAGE },
    { prompt: `a cat ${REFUSE_PROMPT}`, code: "request_moderated", message: "Kling 400 (code 1301): Trigger the content security policy of the platform" },
  ])("ends failed with Kling's words ($code) and returns the hold: the balance is unchanged", async ({ prompt, code, message }) => {
    const before = await client.balance();
    const created = await client.create({ prompt, length: 10 });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const done = await client.finished(created.json.taskId);
    expect(done).toMatchObject({ code, message, router_assets: null, usage: { videos: 0, cost: 0 }, data: { status: "failed", generations: [] } });
    expect(await client.balance()).toBe(before);
  });

  it("refuses aspectRatio with an image (image2video takes the image's frame): a 400 naming aspectRatio, nothing held or sent", async () => {
    const before = await client.balance();
    const sent = kling.requests.length;
    const refused = await client.create({ prompt: "framed", image: imageUrl, aspectRatio: "9:16" });
    expect([refused.status, refused.json.error?.param], JSON.stringify(refused.json)).toEqual([400, "aspectRatio"]);
    expect(refused.json.error.message).toContain("aspectRatio cannot be given with image");
    expect(kling.requests.length).toBe(sent);
    expect(await client.balance()).toBe(before);
  });

  it("refuses, naming it, a parameter Kling does not carry (seed, resolution, seconds, size) or the model does not list, holding nothing", async () => {
    const before = await client.balance();
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
      const refused = await client.create({ prompt: "p", ...body });
      expect([refused.status, refused.json.error?.param], JSON.stringify(refused.json)).toEqual([400, param]);
    }
    expect(kling.requests.length).toBe(sent);
    expect(await client.balance()).toBe(before);
  });

  it("is 404 task_not_found to another organisation, for the task (by either id) and for its asset", async () => {
    const { json } = await client.create({ prompt: "mine" });
    const done = await client.finished(json.taskId);
    const task = await client.stored(json.taskId);
    await client.expectHiddenFromOthers(json.taskId, done.router_assets.urls[0], [`kling:${task.upstreamJobId}`]);
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
      const videos = taskClient(bundled, { kind: "videos", model: MODEL, organizationId: "org_dev" });
      const pro = await videos.create({ prompt: "pro", mode: "pro" });
      expect([pro.status, pro.json.error?.param]).toEqual([400, "mode"]);
      const done = await videos.finished(await videos.created({ prompt: "bundled", length: 10 }));
      expect(done.data.status).toBe("completed");
      expect(done.usage).toEqual({ videos: 1, video_seconds: 10, cost: 0.42 });
      expect(kling.requests.find((request) => request.body.prompt === "bundled")?.body).toEqual({ model_name: "kling-v2-5-turbo", prompt: "bundled", duration: "10" });
    } finally {
      await bundled.close();
    }
  });
});
