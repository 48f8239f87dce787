// Video tasks on the Pollo protocol, end to end through the gateway's HTTP
// endpoints against the Pollo fake (which checks x-api-key and answers in the
// {code, message, data} envelope): created, polled until done, shown in the
// spec's per-generation style, the MP4 downloaded from the gateway's hosted URL
// byte for byte as the fake made it, also after the fake's URL expired; a
// failing job ends failed with Pollo's words and returns its hold; another
// organisation sees nothing.
import { beforeAll, describe, expect, it } from "vitest";
import { nanosOf } from "../../../support/exact-money.ts";
import { FAIL_PROMPT, MODERATE_PROMPT, TINY_MP4, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { POLLO_FAILURE_MESSAGE, POLLO_KEY, POLLO_MODERATION_MESSAGE, startFakePollo } from "../../../support/fake-media-pollo.ts";
import type { Gateway } from "../../../support/harness.ts";
import { mediaTaskConfig } from "../../../support/media-task-config.ts";
import { DAY_MS, useVideoTaskGateway, type TaskClient } from "../../../support/video-task-harness.ts";
import { signedLink } from "../../../support/signed-link.ts";

const MODEL = "pollo/pollo-v1-6";
/** The test catalogue's price (not Pollo's: see docs/tasks.md, "Pollo"). */
const PRICE_PER_SECOND = "0.05";

let fakeNow = Date.now();
const stack = useVideoTaskGateway({
  model: MODEL,
  startUpstream: () => startFakePollo({ now: () => fakeNow }),
  config: (polloUrl) =>
    mediaTaskConfig(
      [{ id: "pollo", label: "Pollo", protocol: "pollo", base_url: polloUrl, api_key_env: "POLLO_API_KEY", timeout_ms: 5000 }],
      [
        {
          id: MODEL,
          name: "Pollo 1.6",
          output: "video",
          details: { length: [5, 10], resolution: ["480p", "720p", "1080p"], aspectRatio: ["16:9", "9:16", "4:3", "3:4", "1:1"], mode: ["basic", "pro"] },
          routes: [{ provider: "pollo", providerModelId: "pollo/pollo-v1-6", pricing: { video_output_per_second: PRICE_PER_SECOND } }],
        },
      ],
    ),
  env: { POLLO_API_KEY: POLLO_KEY },
});
let pollo: FakeMediaUpstream;
let gateway: Gateway;
let client: TaskClient;
/** The input image the gateway fetches and checks before anything is held: a 2:1 PNG. */
let imageUrl: string;
beforeAll(() => void ({ upstream: pollo, gateway, client, imageUrl } = stack));

describe("a video task on Pollo", () => {
  it("is created waiting, polled until succeed, shown per generation, charged the seconds asked, and downloaded byte for byte also after Pollo's URL expired", async () => {
    const before = await client.balance();
    const created = await client.create({ prompt: "a wave at dusk", image: imageUrl, length: 10, resolution: "720p", aspectRatio: "16:9", mode: "pro", seed: 7, generateAudio: false });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const id = created.json.taskId as string;
    expect(created.json).toMatchObject({ taskId: expect.stringMatching(/^rtr_/), chat_id: id, code: "ok", status: "waiting", model: MODEL });

    const done = await client.finished(id);
    expect(done.status).toBe("succeed");
    const task = await client.stored(id);
    expect(pollo.polls(task.upstreamJobId)).toBe(3);

    // Pollo got the task as its API takes it: the brand/model path, x-api-key, the parameters inside input.
    const submitted = pollo.requests.find((request) => request.method === "POST" && request.body.input?.prompt === "a wave at dusk")!;
    expect([submitted.path, submitted.headers["x-api-key"]]).toEqual(["/api/platform/generation/pollo/pollo-v1-6", POLLO_KEY]);
    expect(submitted.body).toEqual({ input: { prompt: "a wave at dusk", image: imageUrl, length: 10, resolution: "720p", aspectRatio: "16:9", mode: "pro", seed: 7, generateAudio: false } });

    // The per-generation style: Pollo's generation id, succeed, the hosted copy's URL.
    const assetUrl = `${gateway.url}/api/v1/assets/${id}/0`;
    const generationId = pollo.jobs.jobs.get(task.upstreamJobId)!.details.generationId;
    expect(done).toMatchObject({ chat_id: id, code: "ok", router_assets: { status: "ready", urls: [signedLink(assetUrl)] } });
    expect(done.generations).toEqual([{ id: generationId, createdDate: expect.any(String), updatedDate: expect.any(String), status: "succeed", url: signedLink(assetUrl), mediaType: "video", failMsg: null }]);
    expect(task.outputs[0]).toMatchObject({ upstreamId: generationId, mediaType: "video/mp4" });

    // Charged the 10 seconds asked at the catalogue's price, once.
    expect(done.usage).toEqual({ videos: 1, video_seconds: 10, cost: 0.5 });
    expect(await client.balance()).toBe(before - nanosOf("0.5"));

    await client.expectAsset(assetUrl, TINY_MP4, "video/mp4");
    // Pollo keeps files up to 14 days; the hosted copy outlives its URL.
    fakeNow += 15 * DAY_MS;
    try {
      expect((await fetch(task.outputs[0].url)).status).toBe(404);
      await client.expectAsset(assetUrl, TINY_MP4, "video/mp4");
    } finally {
      fakeNow -= 15 * DAY_MS;
    }
  });

  it.each([
    { prompt: `a cat ${FAIL_PROMPT}`, code: "upstream_error", message: POLLO_FAILURE_MESSAGE },
    { prompt: `a cat ${MODERATE_PROMPT}`, code: "content_moderated", message: POLLO_MODERATION_MESSAGE },
  ])("ends failed with Pollo's failMsg ($code) and returns the hold: the balance is unchanged", async ({ prompt, code, message }) => {
    const before = await client.balance();
    const created = await client.create({ prompt, length: 5 });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const done = await client.finished(created.json.taskId);
    expect(done).toMatchObject({ status: "failed", code, message, router_assets: null, usage: { videos: 0, cost: 0 } });
    expect(done.generations).toEqual([expect.objectContaining({ status: "failed", url: null, failMsg: message })]);
    expect(await client.balance()).toBe(before);
  });

  it("refuses, naming it, a parameter Pollo does not carry (seconds, size) or the model does not list, holding nothing", async () => {
    const before = await client.balance();
    const sent = pollo.requests.length;
    for (const [body, param] of [
      [{ seconds: 8 }, "seconds"],
      [{ size: "1280x720" }, "size"],
      [{ length: 6 }, "length"],
      [{ mode: "std" }, "mode"],
    ] as const) {
      const refused = await client.create({ prompt: "p", ...body });
      expect([refused.status, refused.json.error?.param], JSON.stringify(refused.json)).toEqual([400, param]);
    }
    expect(pollo.requests.length).toBe(sent);
    expect(await client.balance()).toBe(before);
  });

  it("is 404 task_not_found to another organisation, for the task (by either id) and for its asset", async () => {
    const { json } = await client.create({ prompt: "mine" });
    const done = await client.finished(json.taskId);
    const task = await client.stored(json.taskId);
    await client.expectHiddenFromOthers(json.taskId, done.router_assets.urls[0], [`pollo:${task.upstreamJobId}`]);
  });
});
