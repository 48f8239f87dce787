// Video tasks end to end on the bundled default's simulator/video (no keys):
// created queued with taskId, polled until completed in the progress style,
// the MP4 downloaded from the gateway byte for byte as the simulator makes it
// (and with ranges), charged for the seconds delivered; another organisation
// sees nothing; Idempotency-Key makes one task; the parameters' edges (a
// base64 image, a 1:5 image from a local server, lengths, seconds 5) are 400s
// holding nothing; getAsyncResponse's id and model rules; a video's webhook.
import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfigFile } from "../../core/config/load.ts";
import { organizationSchema } from "../../core/config/schema.ts";
import { createSimulatorMediaAdapter, solidPng } from "../../core/providers/simulator/media.ts";
import { TaskStatus } from "../../gen/router/v1/tasks_pb.js";
import { create } from "@bufbuild/protobuf";
import { VideoParametersSchema } from "../../gen/router/v1/tasks_pb.js";
import { nanosOf } from "../support/exact-money.ts";
import { startGateway, type Gateway } from "../support/harness.ts";
import { startRecordingServer, type RecordedRequest } from "../support/recording-server.ts";
import type { FakeUpstream } from "../support/fake-openai-upstream.ts";

const DEV_KEY = "sk-dev-videos";
const OTHER_KEY = "sk-other-videos";
const MODEL = "simulator/video";
const PER_SECOND = "0.001";
const WEBHOOK_KEY = Buffer.from("a video webhook key of 32 bytes!");
const DONE = { timeout: 10_000, interval: 10 };

let gateway: Gateway;
let images: http.Server;
let imageOrigin = "";
let receiver: FakeUpstream;

beforeAll(async () => {
  // PNGs of the shape the path asks for (/WxH.png); under /once/, only the first time.
  const servedOnce = new Set<string>();
  images = http.createServer((req, res) => {
    const shape = /^(?:\/once)?\/(\d+)x(\d+)\.png$/.exec(req.url ?? "");
    if (!shape || servedOnce.has(req.url!)) return void res.writeHead(404).end();
    if (req.url!.startsWith("/once/")) servedOnce.add(req.url!);
    res.writeHead(200, { "content-type": "image/png" }).end(solidPng(Number(shape[1]), Number(shape[2]), Buffer.from([0, 128, 255])));
  });
  await new Promise<void>((resolve) => images.listen(0, "127.0.0.1", resolve));
  imageOrigin = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
  receiver = await startRecordingServer("/hooks", (_request, res) => void res.writeHead(200).end());
  const config = loadConfigFile();
  config.organizations.push(organizationSchema.parse({ id: "org_other", name: "Other", credits: "10", keys: [{ id: "key_other", env: "OTHER_API_KEY" }] }));
  gateway = await startGateway(config, { env: { ROUTER_DEV_KEY: DEV_KEY, OTHER_API_KEY: OTHER_KEY, ROUTER_WEBHOOK_SECRET: `whsec_${WEBHOOK_KEY.toString("base64")}` } });
});
afterAll(async () => {
  await gateway?.close();
  await receiver?.close();
  await new Promise<void>((resolve) => images?.close(() => resolve()));
});

const auth = (key = DEV_KEY) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });

async function post(path: string, body: unknown, options: { key?: string; idempotencyKey?: string } = {}) {
  const headers: Record<string, string> = auth(options.key);
  if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
  const response = await fetch(`${gateway.apiUrl}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

const createVideo = (body: Record<string, unknown>, options: { key?: string; idempotencyKey?: string } = {}) => post("/videos", { model: MODEL, ...body }, options);

async function getVideo(id: string, key = DEV_KEY) {
  const response = await fetch(`${gateway.apiUrl}/videos/${id}`, { headers: auth(key) });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

async function finished(id: string) {
  return vi.waitFor(async () => {
    const { json } = await getVideo(id);
    expect(["completed", "failed"]).toContain(json.status);
    return json;
  }, DONE);
}

async function balance(organizationId = "org_dev") {
  await gateway.core.accounts.idle();
  return gateway.core.accounts.stores.credits.balance(organizationId);
}

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
    const before = await balance();
    const created = await createVideo({ prompt: "a wave at dawn", seconds: "8", size: "1280x720", seed: 7 });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    expect(created.json).toMatchObject({ taskId: expect.stringMatching(/^rtr_/), chat_id: created.json.taskId, status: "queued", object: "video", code: "ok" });

    const done = await finished(created.json.taskId);
    expect(done).toMatchObject({ status: "completed", progress: 100, seconds: "8", size: "1280x720", code: "ok", router_assets: { status: "ready" }, error: null });
    expect(done.usage).toEqual({ videos: 1, video_seconds: 8, cost: 0.008 });
    expect(await balance()).toBe(before - nanosOf("0.008"));

    const asset = await fetch(done.router_assets.urls[0], { headers: auth() });
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toBe("video/mp4");
    const bytes = Buffer.from(await asset.arrayBuffer());
    expect(bytes.equals(await simulatorMp4({ prompt: "a wave at dawn", seconds: 8, size: "1280x720", seed: 7n }))).toBe(true);
    expect(bytes.subarray(4, 8).toString("ascii")).toBe("ftyp");

    // Ranges, as a video player seeks.
    const ranged = await fetch(done.router_assets.urls[0], { headers: { ...auth(), range: "bytes=4-11" } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("content-range")).toBe(`bytes 4-11/${bytes.length}`);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(bytes.subarray(4, 12))).toBe(true);
    const past = await fetch(done.router_assets.urls[0], { headers: { ...auth(), range: `bytes=${bytes.length}-` } });
    expect(past.status).toBe(416);
  });

  it("holds the model's longest seconds when none is asked, and charges the 4 seconds the simulator made", async () => {
    const before = await balance();
    const { json } = await createVideo({ prompt: "default length" });
    const task = await gateway.core.tasks.store.get("org_dev", json.taskId);
    expect(task!.holdNanos).toBe(nanosOf(PER_SECOND) * 12n);
    const done = await finished(json.taskId);
    expect(done.usage).toEqual({ videos: 1, video_seconds: 4, cost: 0.004 });
    expect(await balance()).toBe(before - nanosOf("0.004"));
  });

  it("makes the same video for the same prompt and seed, another for another seed", async () => {
    const download = async (seed: number) => {
      const done = await finished((await createVideo({ prompt: "seeded", seed })).json.taskId);
      return Buffer.from(await (await fetch(done.router_assets.urls[0], { headers: auth() })).arrayBuffer());
    };
    const [first, again, other] = await Promise.all([download(1), download(1), download(2)]);
    expect(again.equals(first)).toBe(true);
    expect(other.equals(first)).toBe(false);
  });

  it("takes an input image URL between 1:4 and 4:1", async () => {
    const { status, json } = await createVideo({ prompt: "from a picture", image: `${imageOrigin}/64x16.png` });
    expect(status, JSON.stringify(json)).toBe(200);
    expect((await finished(json.taskId)).status).toBe("completed");
  });

  it("ends failed when the prompt asks, with code and message, and returns the hold", async () => {
    const before = await balance();
    const { json } = await createVideo({ prompt: "please [fail]" });
    const done = await finished(json.taskId);
    expect(done).toMatchObject({ status: "failed", code: "upstream_error", message: "The simulator failed this video, as its prompt asked.", error: { code: "upstream_error" }, usage: { cost: 0 } });
    expect(await balance()).toBe(before);
  });

  it("is 404 task_not_found to another organisation, for the task and its asset", async () => {
    const { json } = await createVideo({ prompt: "mine only" });
    const done = await finished(json.taskId);
    const other = await getVideo(json.taskId, OTHER_KEY);
    expect(other.status).toBe(404);
    expect(other.json.error).toMatchObject({ code: "task_not_found" });
    const asset = await fetch(done.router_assets.urls[0], { headers: auth(OTHER_KEY) });
    expect(asset.status).toBe(404);
    expect(((await asset.json()) as any).error).toMatchObject({ code: "task_not_found" });
    expect((await post("/getAsyncResponse", { taskId: json.taskId, model: MODEL }, { key: OTHER_KEY })).status).toBe(404);
  });

  it("with one Idempotency-Key makes one task and one charge; the key with other parameters is refused", async () => {
    const before = await balance();
    const first = await createVideo({ prompt: "only once", seconds: 4 }, { idempotencyKey: "video-key-1" });
    const again = await createVideo({ prompt: "only once", seconds: "4" }, { idempotencyKey: "video-key-1" });
    expect(again.json.taskId).toBe(first.json.taskId);
    await finished(first.json.taskId);
    expect(await balance()).toBe(before - nanosOf("0.004"));
    const changed = await createVideo({ prompt: "only once", seconds: 8 }, { idempotencyKey: "video-key-1" });
    expect(changed.status).toBe(400);
    expect(changed.json.error).toMatchObject({ code: "idempotency_key_reused", param: "Idempotency-Key" });
  });

  it("answers an Idempotency-Key's replay without fetching its image again, whose URL has died since", async () => {
    const body = { prompt: "from a picture, once", image: `${imageOrigin}/once/64x16.png` };
    const first = await createVideo(body, { idempotencyKey: "video-key-image" });
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    const again = await createVideo(body, { idempotencyKey: "video-key-image" });
    expect([again.status, again.json.taskId], JSON.stringify(again.json)).toEqual([200, first.json.taskId]);
    // The URL is dead indeed: a new key fetches it and is refused.
    const fresh = await createVideo(body, { idempotencyKey: "video-key-image-2" });
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
    [{ prompt: undefined }, "prompt"],
    [{ model: "simulator/image" }, "model"],
    [{ colour: "red" }, "colour"],
    [{ webhook_url: "ftp://example.com/hook" }, "webhook_url"],
  ])("refuses %j with a 400 naming %s, holding nothing", async (fields, param) => {
    const before = await balance();
    const given = Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, typeof value === "string" ? value.replace("__ORIGIN__", imageOrigin) : value]));
    const { status, json } = await createVideo({ prompt: "checked", ...given });
    expect(status, JSON.stringify(json)).toBe(400);
    expect(json.error.param).toBe(param);
    expect(await balance()).toBe(before);
  });

  it("takes null as absent", async () => {
    const { status, json } = await createVideo({ prompt: "nulls", image: null, length: null, seconds: null, seed: null, webhook_url: null });
    expect(status, JSON.stringify(json)).toBe(200);
    await finished(json.taskId);
  });
});

describe("POST /api/v1/getAsyncResponse", () => {
  it("answers a provider-prefixed id alone, and an unprefixed one with the model it was created with", async () => {
    const { json } = await createVideo({ prompt: "async response" });
    const done = await finished(json.taskId);
    const upstream = (await gateway.core.tasks.store.get("org_dev", json.taskId))!.upstreamJobId;

    const prefixed = await post("/getAsyncResponse", { taskId: `simulator:${upstream}` });
    expect(prefixed.status, JSON.stringify(prefixed.json)).toBe(200);
    expect(prefixed.json).toEqual(done);
    expect((await post("/getAsyncResponse", { taskId: json.taskId, model: MODEL })).json).toEqual(done);
    // An unprefixed upstream id with the model: looked up among the model's providers.
    expect((await post("/getAsyncResponse", { taskId: upstream, model: MODEL })).json).toEqual(done);

    const noModel = await post("/getAsyncResponse", { taskId: json.taskId });
    expect(noModel.status).toBe(400);
    expect(noModel.json.error.param).toBe("model");
    const wrongModel = await post("/getAsyncResponse", { taskId: json.taskId, model: "simulator/image" });
    expect(wrongModel.status).toBe(400);
    expect(wrongModel.json.error.param).toBe("model");
    expect((await post("/getAsyncResponse", { taskId: `simulator:${upstream}`, model: "simulator/image" })).json.error.param).toBe("model");
    expect((await post("/getAsyncResponse", { taskId: "rtr_nope", model: MODEL })).status).toBe(404);
    expect((await post("/getAsyncResponse", {})).json.error.param).toBe("taskId");
  });

  it("answers an image task with the image result", async () => {
    const created = await post("/images/generations", { model: "simulator/image", prompt: "an image, asked for async" });
    const image = await vi.waitFor(async () => {
      const answer = await post("/getAsyncResponse", { taskId: created.json.taskId, model: "simulator/image" });
      expect(answer.json.status).toBe("completed");
      return answer.json;
    }, DONE);
    expect(image).toMatchObject({ object: "image.task", chat_id: created.json.taskId, router_assets: { status: "ready" } });
    expect(image.data[0].url).toBe(image.router_assets.urls[0]);
  });
});

describe("POST /api/v1/chat/completions with the video request body", () => {
  it("creates the same video task and answers the same queued object", async () => {
    const before = await balance();
    const { status, json } = await post("/chat/completions", { model: MODEL, prompt: "a wave by chat", seconds: 4 });
    expect(status, JSON.stringify(json)).toBe(200);
    expect(json).toMatchObject({ taskId: expect.stringMatching(/^rtr_/), object: "video", status: "queued", code: "ok" });
    const done = await finished(json.taskId);
    expect(done.usage).toEqual({ videos: 1, video_seconds: 4, cost: 0.004 });
    expect(await balance()).toBe(before - nanosOf("0.004"));
    // The video body's own checks apply there too; a chat model without messages is still a chat request.
    expect((await post("/chat/completions", { model: MODEL, prompt: "x", seconds: 5 })).json.error.param).toBe("seconds");
    expect((await post("/chat/completions", { model: "simulator/echo", prompt: "x" })).json.error.param).toBe("messages");
  });
});

describe("a video's webhook", () => {
  it("POSTs video.completed with the video result, signed, and video.failed for a failure", async () => {
    const deliveries = (taskId: string) => receiver.requests.filter((request: RecordedRequest) => request.headers["webhook-id"] === `msg_${taskId}`);
    const ok = await createVideo({ prompt: "hooked", webhook_url: `${receiver.url}/video` });
    const failed = await createVideo({ prompt: "hooked [fail]", webhook_url: `${receiver.url}/video` });
    const done = await finished(ok.json.taskId);
    await finished(failed.json.taskId);
    const [delivery] = await vi.waitFor(() => {
      const found = deliveries(ok.json.taskId);
      expect(found).toHaveLength(1);
      return found;
    }, DONE);
    const id = String(delivery.headers["webhook-id"]);
    const timestamp = String(delivery.headers["webhook-timestamp"]);
    const signature = `v1,${createHmac("sha256", WEBHOOK_KEY).update(`${id}.${timestamp}.${delivery.raw.toString("utf8")}`).digest("base64")}`;
    expect(delivery.headers["webhook-signature"]).toBe(signature);
    const payload = JSON.parse(delivery.raw.toString("utf8"));
    expect(payload.type).toBe("video.completed");
    // The same object GET /api/v1/videos answers (asset URLs made absolute with the creator's origin).
    expect(payload.data).toEqual(done);
    const failure = await vi.waitFor(() => {
      const found = deliveries(failed.json.taskId);
      expect(found).toHaveLength(1);
      return JSON.parse(found[0].raw.toString("utf8"));
    }, DONE);
    expect(failure).toMatchObject({ type: "video.failed", data: { status: "failed", code: "upstream_error" } });
    expect((await gateway.core.tasks.store.get("org_dev", failed.json.taskId))!.status).toBe(TaskStatus.FAILED);
  });
});
