// The official openai SDK's videos.create sends a multipart/form-data body:
// POST /api/v1/videos takes it (prompt, model, seconds, size and
// input_reference[image_url]), and videos.retrieve reads the task back. A file
// uploaded as input_reference is a 400 naming it (URLs only); other routes
// still answer a form with invalid_json.
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfigFile } from "../../../../core/config/load.ts";
import { solidPng } from "../../../../core/providers/simulator/media.ts";
import { startGateway, type Gateway } from "../../../support/harness.ts";
import { startInputImages, TASK_DONE } from "../../../support/video-task-harness.ts";

const DEV_KEY = "sk-dev-video-form";
let gateway: Gateway;
let images: Awaited<ReturnType<typeof startInputImages>>;
let client: OpenAI;

beforeAll(async () => {
  // The input images are served on 127.0.0.1.
  const config = loadConfigFile();
  config.tasks.fetch_private_urls = true;
  gateway = await startGateway(config, { env: { ROUTER_DEV_KEY: DEV_KEY } });
  images = await startInputImages();
  client = new OpenAI({ apiKey: DEV_KEY, baseURL: gateway.apiUrl, maxRetries: 0, timeout: 15_000 });
});
afterAll(async () => {
  await images?.close();
  await gateway?.close();
});

/** The SDK's error for a call that must fail. */
const refusal = (call: Promise<unknown>) => call.then(() => expect.fail("the call succeeded"), (error: unknown) => error as InstanceType<typeof OpenAI.APIError>);

describe("the openai SDK's videos.create and videos.retrieve", () => {
  it("creates a video from the SDK's form and reads it back until completed", async () => {
    const video = await client.videos.create({ model: "simulator/video" as never, prompt: "a harbour at dawn", seconds: "8", size: "720x1280" });
    expect(video).toMatchObject({ object: "video", status: "queued", seconds: "8", size: "720x1280", prompt: "a harbour at dawn" });
    const done = await vi.waitFor(async () => {
      const read = await client.videos.retrieve(video.id);
      expect(read.status).toBe("completed");
      return read;
    }, TASK_DONE);
    expect(done).toMatchObject({ id: video.id, progress: 100, seconds: "8" });
  });

  it("takes input_reference as an image URL", async () => {
    const video = await client.videos.create({ model: "simulator/video" as never, prompt: "from a picture", input_reference: { image_url: images.url("/720x1280.png") } });
    expect(video.status).toBe("queued");
    expect((await gateway.core.tasks.store.get("org_dev", video.id))?.video?.imageUrl).toBe(images.url("/720x1280.png"));
  });

  it("refuses an uploaded file as input_reference, naming it", async () => {
    const file = await toFile(solidPng(8, 8, Buffer.from([0, 0, 255])), "reference.png", { type: "image/png" });
    const error = await refusal(client.videos.create({ model: "simulator/video" as never, prompt: "from a file", input_reference: file }));
    expect([error.status, (error.error as { param?: string }).param]).toEqual([400, "input_reference"]);
  });

  it("checks a form's fields as a JSON body's: a size the model does not list, an unknown field", async () => {
    const size = await refusal(client.videos.create({ model: "simulator/video" as never, prompt: "x", size: "1792x1024" }));
    expect([size.status, (size.error as { param?: string }).param]).toEqual([400, "size"]);
    const form = new FormData();
    form.set("model", "simulator/video");
    form.set("prompt", "x");
    form.set("colour", "blue");
    const unknown = await fetch(`${gateway.apiUrl}/videos`, { method: "POST", headers: { authorization: `Bearer ${DEV_KEY}` }, body: form });
    expect([unknown.status, ((await unknown.json()) as { error: { param: string } }).error.param]).toEqual([400, "colour"]);
  });

  it("answers a broken form 400, and a form on another route is still invalid_json", async () => {
    const broken = await fetch(`${gateway.apiUrl}/videos`, {
      method: "POST",
      headers: { authorization: `Bearer ${DEV_KEY}`, "content-type": "multipart/form-data; boundary=zzz" },
      body: "not a form at all",
    });
    expect([broken.status, ((await broken.json()) as { error: { param: string } }).error.param]).toEqual([400, "body"]);
    const form = new FormData();
    form.set("model", "simulator/image");
    form.set("prompt", "x");
    const images = await fetch(`${gateway.apiUrl}/images/generations`, { method: "POST", headers: { authorization: `Bearer ${DEV_KEY}` }, body: form });
    expect([images.status, ((await images.json()) as { error: { code: string } }).error.code]).toEqual([400, "invalid_json"]);
  });
});
