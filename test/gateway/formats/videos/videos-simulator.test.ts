// Video tasks end to end on the bundled default's simulator/video (no keys):
// created queued with taskId, polled until completed in the progress style,
// the MP4 downloaded from the gateway byte for byte as the simulator makes it
// (and with ranges), charged for the seconds delivered; another organisation
// sees nothing; Idempotency-Key makes one task; the parameters' edges (a
// base64 image, a 1:5 image from a local server, lengths, seconds 5) are 400s
// holding nothing; getAsyncResponse's id and model rules; a video's webhook.
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfigFile } from "../../../../core/config/load.ts";
import { organizationSchema } from "../../../../core/config/schema.ts";
import { createSimulatorMediaAdapter, solidPng } from "../../../../core/providers/simulator/media.ts";
import { TaskStatus } from "../../../../gen/router/v1/tasks_pb.js";
import { create } from "@bufbuild/protobuf";
import { VideoParametersSchema } from "../../../../gen/router/v1/tasks_pb.js";
import { nanosOf } from "../../../support/exact-money.ts";
import { startGateway, type Gateway } from "../../../support/harness.ts";
import { OTHER_KEY } from "../../../support/media-task-config.ts";
import { startRecordingServer, type RecordedRequest } from "../../../support/recording-server.ts";
import { startInputImages, TASK_DONE, taskClient, type TaskClient } from "../../../support/video-task-harness.ts";
import { unsigned } from "../../../support/signed-link.ts";
import type { FakeUpstream } from "../../../support/fake-openai-upstream.ts";

const DEV_KEY = "sk-dev-videos";
const MODEL = "simulator/video";
const PER_SECOND = "0.001";
const WEBHOOK_KEY = Buffer.from("a video webhook key of 32 bytes!");

let gateway: Gateway;
let client: TaskClient;
let images: Awaited<ReturnType<typeof startInputImages>>;
let imageOrigin = "";
let receiver: FakeUpstream;

beforeAll(async () => {
  images = await startInputImages();
  imageOrigin = images.origin;
  receiver = await startRecordingServer("/hooks", (_request, res) => void res.writeHead(200).end());
  const config = loadConfigFile();
  // The image server and the webhook receiver listen on 127.0.0.1.
  config.tasks.fetch_private_urls = true;
  config.organizations.push(organizationSchema.parse({ id: "org_other", name: "Other", credits: "10", keys: [{ id: "key_other", env: "OTHER_API_KEY" }] }));
  gateway = await startGateway(config, { env: { ROUTER_DEV_KEY: DEV_KEY, OTHER_API_KEY: OTHER_KEY, ROUTER_WEBHOOK_SECRET: `whsec_${WEBHOOK_KEY.toString("base64")}` } });
  client = taskClient(gateway, { kind: "videos", model: MODEL, key: DEV_KEY, organizationId: "org_dev" });
});
afterAll(async () => {
  await gateway?.close();
  await receiver?.close();
  await images?.close();
});


/** The MP4 the simulator makes for these parameters, made directly by its adapter. */
async function simulatorMp4(fields: Record<string, unknown>): Promise<Buffer> {
  const adapter = createSimulatorMediaAdapter();
  const call = {} as Parameters<typeof adapter.poll>[0];
  const job = await adapter.submitVideo!(call, create(VideoParametersSchema, fields));
  const state = await adapter.poll(call, job);
  if (state.state !== "succeeded" || !("bytes" in state.outputs[0])) throw new Error("the simulator made no video");
  return Buffer.from(state.outputs[0].bytes);
}

describe("simulator/video in the bundled default", () => {
  it("is created queued, completes in the progress style, and is served byte for byte, charged per second delivered", async () => {
    const before = await client.balance();
    const created = await client.create({ prompt: "a wave at dawn", seconds: "8", size: "1280x720", seed: 7 });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    expect(created.json).toMatchObject({ taskId: expect.stringMatching(/^rtr_/), chat_id: created.json.taskId, status: "queued", object: "video", code: "ok" });

    const done = await client.finished(created.json.taskId);
    expect(done).toMatchObject({ status: "completed", progress: 100, seconds: "8", size: "1280x720", code: "ok", router_assets: { status: "ready" }, error: null });
    expect(done.usage).toEqual({ videos: 1, video_seconds: 8, cost: 0.008 });
    expect(await client.balance()).toBe(before - nanosOf("0.008"));

    const asset = await client.download(done.router_assets.urls[0]);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toBe("video/mp4");
    const bytes = Buffer.from(await asset.arrayBuffer());
    expect(bytes.equals(await simulatorMp4({ prompt: "a wave at dawn", seconds: 8, size: "1280x720", seed: 7n }))).toBe(true);
    expect(bytes.subarray(4, 8).toString("ascii")).toBe("ftyp");

    // Ranges, as a video player seeks.
    const ranged = await client.download(done.router_assets.urls[0], DEV_KEY, "bytes=4-11");
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("content-range")).toBe(`bytes 4-11/${bytes.length}`);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(bytes.subarray(4, 12))).toBe(true);
    const past = await client.download(done.router_assets.urls[0], DEV_KEY, `bytes=${bytes.length}-`);
    expect(past.status).toBe(416);
  });

  it("holds the model's longest seconds when none is asked, and charges the 4 seconds the simulator made", async () => {
    const before = await client.balance();
    const { json } = await client.create({ prompt: "default length" });
    const task = await client.stored(json.taskId);
    expect(task.holdNanos).toBe(nanosOf(PER_SECOND) * 12n);
    const done = await client.finished(json.taskId);
    expect(done.usage).toEqual({ videos: 1, video_seconds: 4, cost: 0.004 });
    expect(await client.balance()).toBe(before - nanosOf("0.004"));
  });

  it("makes the same video for the same prompt and seed, another for another seed", async () => {
    const download = async (seed: number) => {
      const done = await client.finished((await client.create({ prompt: "seeded", seed })).json.taskId);
      return Buffer.from(await (await client.download(done.router_assets.urls[0])).arrayBuffer());
    };
    const [first, again, other] = await Promise.all([download(1), download(1), download(2)]);
    expect(again.equals(first)).toBe(true);
    expect(other.equals(first)).toBe(false);
  });

  it("takes an input image URL between 1:4 and 4:1", async () => {
    const { status, json } = await client.create({ prompt: "from a picture", image: `${imageOrigin}/64x16.png` });
    expect(status, JSON.stringify(json)).toBe(200);
    expect((await client.finished(json.taskId)).status).toBe("completed");
  });

  it("ends failed when the prompt asks, with code and message, and returns the hold", async () => {
    const before = await client.balance();
    const { json } = await client.create({ prompt: "please [fail]" });
    const done = await client.finished(json.taskId);
    expect(done).toMatchObject({ status: "failed", code: "upstream_error", message: "The simulator failed this video, as its prompt asked.", error: { code: "upstream_error" }, usage: { cost: 0 } });
    expect(await client.balance()).toBe(before);
  });

  it("is 404 task_not_found to another organisation, for the task and its asset", async () => {
    const { json } = await client.create({ prompt: "mine only" });
    const done = await client.finished(json.taskId);
    await client.expectHiddenFromOthers(json.taskId, done.router_assets.urls[0]);
    const asset = await client.download(done.router_assets.urls[0], OTHER_KEY);
    expect(((await asset.json()) as any).error).toMatchObject({ code: "task_not_found" });
    expect((await client.post("/getAsyncResponse", { taskId: json.taskId, model: MODEL }, { key: OTHER_KEY })).status).toBe(404);
  });

  it("with one Idempotency-Key makes one task and one charge; the key with other parameters is refused", async () => {
    const before = await client.balance();
    const first = await client.create({ prompt: "only once", seconds: 4 }, { idempotencyKey: "video-key-1" });
    const again = await client.create({ prompt: "only once", seconds: "4" }, { idempotencyKey: "video-key-1" });
    expect(again.json.taskId).toBe(first.json.taskId);
    await client.finished(first.json.taskId);
    expect(await client.balance()).toBe(before - nanosOf("0.004"));
    const changed = await client.create({ prompt: "only once", seconds: 8 }, { idempotencyKey: "video-key-1" });
    expect(changed.status).toBe(400);
    expect(changed.json.error).toMatchObject({ code: "idempotency_key_reused", param: "Idempotency-Key" });
  });

  it("answers an Idempotency-Key's replay without fetching its image again, whose URL has died since", async () => {
    const body = { prompt: "from a picture, once", image: `${imageOrigin}/once/64x16.png` };
    const first = await client.create(body, { idempotencyKey: "video-key-image" });
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    const again = await client.create(body, { idempotencyKey: "video-key-image" });
    expect([again.status, again.json.taskId], JSON.stringify(again.json)).toEqual([200, first.json.taskId]);
    // The URL is dead indeed: a new key fetches it and is refused.
    const fresh = await client.create(body, { idempotencyKey: "video-key-image-2" });
    expect([fresh.status, fresh.json.error?.param]).toEqual([400, "image"]);
  });

  it.each([
    [{ image: `data:image/png;base64,${solidPng(4, 4, Buffer.from([1, 2, 3])).toString("base64")}` }, "image"],
    [{ image: solidPng(4, 4, Buffer.from([1, 2, 3])).toString("base64") }, "image"],
    [{ image: "__ORIGIN__/16x80.png" }, "image"],
    [{ image: "__ORIGIN__/missing.png" }, "image"],
    [{ length: 7 }, "length"],
    [{ length: 5 }, "length"],
    [{ length: 0 }, "length"],
    [{ seconds: 5 }, "seconds"],
    [{ seconds: "5" }, "seconds"],
    [{ seconds: "eight" }, "seconds"],
    [{ size: "640x480" }, "size"],
    [{ resolution: "720p" }, "resolution"],
    [{ generateAudio: "yes" }, "generateAudio"],
    // Past Veo's uint32 (and, the second, past what a JS number holds exactly).
    [{ seed: 4294967296 }, "seed"],
    [{ seed: 2 ** 53 + 2 }, "seed"],
    [{ image: `https://example.com/${"a".repeat(2048)}` }, "image"],
    [{ prompt: undefined }, "prompt"],
    [{ model: "simulator/image" }, "model"],
    [{ colour: "red" }, "colour"],
    [{ webhook_url: "ftp://example.com/hook" }, "webhook_url"],
    [{ webhook_url: `https://example.com/${"a".repeat(2048)}` }, "webhook_url"],
  ])("refuses %j with a 400 naming %s, holding nothing", async (fields, param) => {
    const before = await client.balance();
    const given = Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, typeof value === "string" ? value.replace("__ORIGIN__", imageOrigin) : value]));
    const { status, json } = await client.create({ prompt: "checked", ...given });
    expect(status, JSON.stringify(json)).toBe(400);
    expect(json.error.param).toBe(param);
    expect(await client.balance()).toBe(before);
  });

  it("takes null as absent", async () => {
    const { status, json } = await client.create({ prompt: "nulls", image: null, length: null, seconds: null, seed: null, webhook_url: null });
    expect(status, JSON.stringify(json)).toBe(200);
    await client.finished(json.taskId);
  });
});

describe("POST /api/v1/getAsyncResponse", () => {
  it("answers a provider-prefixed id alone, and an unprefixed one with the model it was created with", async () => {
    const { json } = await client.create({ prompt: "async response" });
    const done = await client.finished(json.taskId);
    const upstream = (await client.stored(json.taskId)).upstreamJobId;

    const prefixed = await client.post("/getAsyncResponse", { taskId: `simulator:${upstream}` });
    expect(prefixed.status, JSON.stringify(prefixed.json)).toBe(200);
    expect(unsigned(prefixed.json)).toEqual(unsigned(done));
    expect(unsigned((await client.post("/getAsyncResponse", { taskId: json.taskId, model: MODEL })).json)).toEqual(unsigned(done));
    // An unprefixed upstream id with the model: looked up among the model's providers.
    expect(unsigned((await client.post("/getAsyncResponse", { taskId: upstream, model: MODEL })).json)).toEqual(unsigned(done));

    // The service id creation answered works alone, on every poll route; so does the prefixed one.
    const alone = await client.post("/getAsyncResponse", { taskId: json.taskId });
    expect(alone.status, JSON.stringify(alone.json)).toBe(200);
    expect(unsigned(alone.json)).toEqual(unsigned(done));
    expect(unsigned((await client.read(json.taskId)).json)).toEqual(unsigned(done));
    expect(unsigned((await client.read(`simulator:${upstream}`)).json)).toEqual(unsigned(done));
    // A provider's own unprefixed id needs the model; an unknown one too (it may be a provider's).
    for (const taskId of [upstream, "job-unknown"]) {
      const noModel = await client.post("/getAsyncResponse", { taskId });
      expect([noModel.status, noModel.json.error?.param], JSON.stringify(noModel.json)).toEqual([400, "model"]);
    }
    const wrongModel = await client.post("/getAsyncResponse", { taskId: json.taskId, model: "simulator/image" });
    expect(wrongModel.status).toBe(400);
    expect(wrongModel.json.error.param).toBe("model");
    expect((await client.post("/getAsyncResponse", { taskId: `simulator:${upstream}`, model: "simulator/image" })).json.error.param).toBe("model");
    expect((await client.post("/getAsyncResponse", { taskId: "rtr_nope", model: MODEL })).status).toBe(404);
    expect((await client.post("/getAsyncResponse", {})).json.error.param).toBe("taskId");
  });

  it("answers an image task with the image result", async () => {
    const created = await client.post("/images/generations", { model: "simulator/image", prompt: "an image, asked for async" });
    const image = await vi.waitFor(async () => {
      const answer = await client.post("/getAsyncResponse", { taskId: created.json.taskId, model: "simulator/image" });
      expect(answer.json.status).toBe("completed");
      return answer.json;
    }, TASK_DONE);
    expect(image).toMatchObject({ object: "image.task", chat_id: created.json.taskId, router_assets: { status: "ready" } });
    expect(image.data[0].url).toBe(image.router_assets.urls[0]);
    // Alone too, on getAsyncResponse and on GET /images/{id}.
    expect(unsigned((await client.post("/getAsyncResponse", { taskId: created.json.taskId })).json)).toEqual(unsigned(image));
    const read = await fetch(`${gateway.apiUrl}/images/${created.json.taskId}`, { headers: { authorization: `Bearer ${DEV_KEY}` } });
    expect(unsigned(await read.json())).toEqual(unsigned(image));
  });
});

describe("POST /api/v1/chat/completions with the video request body", () => {
  it("creates the same video task and answers the same queued object", async () => {
    const before = await client.balance();
    const { status, json } = await client.post("/chat/completions", { model: MODEL, prompt: "a wave by chat", seconds: 4 });
    expect(status, JSON.stringify(json)).toBe(200);
    expect(json).toMatchObject({ taskId: expect.stringMatching(/^rtr_/), object: "video", status: "queued", code: "ok" });
    const done = await client.finished(json.taskId);
    expect(done.usage).toEqual({ videos: 1, video_seconds: 4, cost: 0.004 });
    expect(await client.balance()).toBe(before - nanosOf("0.004"));
    // The video body's own checks apply there too; a chat model without messages is still a chat request.
    expect((await client.post("/chat/completions", { model: MODEL, prompt: "x", seconds: 5 })).json.error.param).toBe("seconds");
    expect((await client.post("/chat/completions", { model: "simulator/echo", prompt: "x" })).json.error.param).toBe("messages");
  });
});

describe("a video's webhook", () => {
  it("POSTs video.completed with the video result, signed, and video.failed for a failure", async () => {
    const deliveries = (taskId: string) => receiver.requests.filter((request: RecordedRequest) => request.headers["webhook-id"] === `msg_${taskId}`);
    const ok = await client.create({ prompt: "hooked", webhook_url: `${receiver.url}/video` });
    const failed = await client.create({ prompt: "hooked [fail]", webhook_url: `${receiver.url}/video` });
    const done = await client.finished(ok.json.taskId);
    await client.finished(failed.json.taskId);
    const [delivery] = await vi.waitFor(() => {
      const found = deliveries(ok.json.taskId);
      expect(found).toHaveLength(1);
      return found;
    }, TASK_DONE);
    const id = String(delivery.headers["webhook-id"]);
    const timestamp = String(delivery.headers["webhook-timestamp"]);
    const signature = `v1,${createHmac("sha256", WEBHOOK_KEY).update(`${id}.${timestamp}.${delivery.raw.toString("utf8")}`).digest("base64")}`;
    expect(delivery.headers["webhook-signature"]).toBe(signature);
    const payload = JSON.parse(delivery.raw.toString("utf8"));
    expect(payload.type).toBe("video.completed");
    // The same object GET /api/v1/videos answers (asset URLs made absolute with the creator's origin).
    expect(unsigned(payload.data)).toEqual(unsigned(done));
    const failure = await vi.waitFor(() => {
      const found = deliveries(failed.json.taskId);
      expect(found).toHaveLength(1);
      return JSON.parse(found[0].raw.toString("utf8"));
    }, TASK_DONE);
    expect(failure).toMatchObject({ type: "video.failed", data: { status: "failed", code: "upstream_error" } });
    expect((await client.stored(failed.json.taskId)).status).toBe(TaskStatus.FAILED);
  });
});
