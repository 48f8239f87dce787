// The bundled default's BFL models through the gateway, against the BFL fake
// making images of the size each job asks: FLUX.2 priced per megapixel (held
// for the size asked, or the model's 4 MP when size is left out; charged for
// the image's real dimensions, never more than held), Kontext's aspect_ratio,
// input images (fetched and measured at creation, sent to BFL as the URLs
// given, their megapixels charged on FLUX.2), and refusals naming the
// parameter with nothing held and nothing sent to BFL.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfigFile } from "../../../../core/config/load.ts";
import { organizationSchema } from "../../../../core/config/schema.ts";
import { solidPng } from "../../../../core/providers/simulator/media.ts";
import { BFL_KEY, startFakeBfl } from "../../../support/fake-media-bfl.ts";
import type { FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { nanosOf } from "../../../support/exact-money.ts";
import { startGateway, type Gateway } from "../../../support/harness.ts";

const DEV_KEY = "sk-flux2-dev";
const OTHER_KEY = "sk-flux2-other";
const DONE = { timeout: 10_000, interval: 10 };

let bfl: FakeMediaUpstream;
let gateway: Gateway;
let images: http.Server;
let imageOrigin = "";
/** How many times the image server was asked for each path. */
const imageFetches = new Map<string, number>();

beforeAll(async () => {
  bfl = await startFakeBfl({ sizedImages: true, runningAtPoll: 1, doneAtPoll: 2 });
  // PNGs of the shape the path asks for (/WxH.png); /not-an-image answers text.
  images = http.createServer((req, res) => {
    imageFetches.set(req.url ?? "", (imageFetches.get(req.url ?? "") ?? 0) + 1);
    const shape = /^\/(\d+)x(\d+)\.png$/.exec(req.url ?? "");
    if (!shape) return void res.writeHead(200, { "content-type": "image/png" }).end("not an image");
    res.writeHead(200, { "content-type": "image/png" }).end(solidPng(Number(shape[1]), Number(shape[2]), Buffer.from([0, 128, 255])));
  });
  await new Promise<void>((resolve) => images.listen(0, "127.0.0.1", resolve));
  imageOrigin = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
  const config = loadConfigFile();
  config.providers.find((provider) => provider.id === "bfl")!.base_url = bfl.url;
  config.tasks.poll_interval_ms = 5;
  config.tasks.poll_max_interval_ms = 20;
  // The input images are served on 127.0.0.1.
  config.tasks.fetch_private_urls = true;
  config.organizations.push(organizationSchema.parse({ id: "org_other", name: "Other", credits: "10", keys: [{ id: "key_other", env: "OTHER_API_KEY" }] }));
  gateway = await startGateway(config, { env: { ROUTER_DEV_KEY: DEV_KEY, OTHER_API_KEY: OTHER_KEY, BFL_API_KEY: BFL_KEY } });
});
afterAll(async () => {
  await gateway?.close();
  await bfl?.close();
  await new Promise<void>((resolve) => images?.close(() => resolve()));
});

async function createImage(body: Record<string, unknown>, idempotencyKey?: string) {
  const response = await fetch(`${gateway.apiUrl}/images/generations`, {
    method: "POST",
    headers: { authorization: `Bearer ${DEV_KEY}`, "content-type": "application/json", ...(idempotencyKey && { "idempotency-key": idempotencyKey }) },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

async function finished(id: string) {
  return vi.waitFor(async () => {
    const response = await fetch(`${gateway.apiUrl}/images/${id}`, { headers: { authorization: `Bearer ${DEV_KEY}` } });
    const json = (await response.json()) as Record<string, any>;
    expect(["completed", "failed"]).toContain(json.status);
    return json;
  }, DONE);
}

async function balance() {
  await gateway.core.accounts.idle();
  return gateway.core.accounts.stores.credits.balance("org_dev");
}

const storedTask = (id: string) => gateway.core.tasks.store.get("org_dev", id);
/** The body BFL got for the task (its prompt is unique per test). */
const submitted = (prompt: string) => bfl.requests.find((request) => request.method === "POST" && request.body.prompt === prompt);

/** Creates, waits for the end, and answers the task, its hold and what the balance moved by. */
async function run(body: Record<string, unknown>) {
  const before = await balance();
  const created = await createImage(body);
  expect(created.status, JSON.stringify(created.json)).toBe(200);
  const id = created.json.taskId as string;
  const holdNanos = (await storedTask(id))!.holdNanos;
  const done = await finished(id);
  return { done, holdNanos, charged: before - (await balance()) };
}

describe("FLUX.2 [pro], priced per megapixel (0.03 the first, 0.015 each further one)", () => {
  it("holds and charges 1 MP for a 1024x1024 image", async () => {
    const { done, holdNanos, charged } = await run({ model: "bfl/flux-2-pro", prompt: "one megapixel", size: "1024x1024" });
    expect(done).toMatchObject({ status: "completed", usage: { images: 1, cost: 0.03 } });
    expect(holdNanos).toBe(nanosOf("0.03"));
    expect(charged).toBe(nanosOf("0.03"));
    expect(submitted("one megapixel")!.body).toMatchObject({ width: 1024, height: 1024 });
  });

  it("holds and charges 4 MP for a 2048x2048 image: 0.03 + 3 x 0.015", async () => {
    const { done, holdNanos, charged } = await run({ model: "bfl/flux-2-pro", prompt: "four megapixels", size: "2048x2048" });
    expect(holdNanos).toBe(nanosOf("0.075"));
    expect(charged).toBe(nanosOf("0.075"));
    expect(done.usage).toEqual({ images: 1, cost: 0.075 });
    // The hosted image is the one BFL made, at the size asked.
    const asset = await fetch(done.data[0].url, { headers: { authorization: `Bearer ${DEV_KEY}` } });
    const png = Buffer.from(await asset.arrayBuffer());
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([2048, 2048]);
  });

  it("without a size holds the model's largest (4 MP) and charges the image BFL made (1024x768: 1 MP), returning the rest", async () => {
    const { done, holdNanos, charged } = await run({ model: "bfl/flux-2-pro", prompt: "size left to BFL" });
    expect(holdNanos).toBe(nanosOf("0.075"));
    expect(charged).toBe(nanosOf("0.03"));
    expect(done.usage.cost).toBe(0.03);
    expect(submitted("size left to BFL")!.body).not.toHaveProperty("width");
  });

  it("charges whole megapixels rounded up: 1920x1088 (1.99 MP) is 2 MP", async () => {
    const { charged, holdNanos } = await run({ model: "bfl/flux-2-pro", prompt: "full hd", size: "1920x1088" });
    expect(holdNanos).toBe(nanosOf("0.045"));
    expect(charged).toBe(nanosOf("0.045"));
  });

  it("takes input images: fetched and measured, sent to BFL as the URLs given, their megapixels charged at 0.015", async () => {
    const first = `${imageOrigin}/1024x1024.png`;
    const second = `${imageOrigin}/1024x2048.png`;
    const { done, holdNanos, charged } = await run({ model: "bfl/flux-2-pro", prompt: "two references", size: "1024x1024", image: [first, second] });
    // 1 MP out (0.03) and 3 MP in (3 x 0.015).
    expect(holdNanos).toBe(nanosOf("0.075"));
    expect(charged).toBe(nanosOf("0.075"));
    expect(done.status).toBe("completed");
    expect(submitted("two references")!.body).toEqual({ prompt: "two references", width: 1024, height: 1024, input_image: first, input_image_2: second });
  });

  it("answers an Idempotency-Key's replay with the same task, fetching its input images once", async () => {
    const url = `${imageOrigin}/640x480.png`;
    const body = { model: "bfl/flux-2-pro", prompt: "replayed edit", size: "1024x1024", image: url };
    const first = await createImage(body, "flux2-replay");
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    const again = await createImage(body, "flux2-replay");
    expect(again.json.taskId).toBe(first.json.taskId);
    expect(imageFetches.get("/640x480.png")).toBe(1);
    await finished(first.json.taskId);
  });

  it.each([
    { body: { size: "1000x1000" }, param: "size", message: /multiples of 16/ },
    { body: { size: "4096x2048" }, param: "size", message: /at most 4 megapixels/ },
    { body: { size: "32x32" }, param: "size", message: /at least 64/ },
    { body: { aspect_ratio: "16:9" }, param: "aspect_ratio", message: /does not take aspect_ratio/ },
    { body: { image: "data:image/png;base64,iVBORw0KGgo=" }, param: "image", message: /http or https URL/ },
    { body: { image: "IMAGE_ORIGIN/not-an-image" }, param: "image", message: /not a JPEG or PNG/ },
    { body: { image: "IMAGE_ORIGIN/100x500.png" }, param: "image", message: /between 1:4 and 4:1/ },
    { body: { image: Array.from({ length: 9 }, () => "IMAGE_ORIGIN/64x64.png") }, param: "image", message: /at most 8 input images/ },
    // Free text is bounded where the model lists no values: a size range is no list, an image URL is at most 2048 characters.
    { body: { size: `64x${"0".repeat(61)}64` }, param: "size", message: /at most 64 characters/ },
    { body: { image: ["IMAGE_ORIGIN/64x64.png", `https://example.com/${"a".repeat(2048)}.png`] }, param: "image", message: /at most 2048 characters/ },
  ])("refuses $param ($body) by name, holding nothing and sending nothing to BFL", async ({ body, param, message }) => {
    const before = await balance();
    const posts = bfl.requests.length;
    const withOrigin = JSON.parse(JSON.stringify(body).replaceAll("IMAGE_ORIGIN", imageOrigin)) as Record<string, unknown>;
    const { status, json } = await createImage({ model: "bfl/flux-2-pro", prompt: "refused", ...withOrigin });
    expect(status, JSON.stringify(json)).toBe(400);
    expect(json.error).toMatchObject({ param, message: expect.stringMatching(message) });
    expect(await balance()).toBe(before);
    expect(bfl.requests.length).toBe(posts);
  });
});

describe("FLUX.1 Kontext [pro]: aspect_ratio and one input image, at its flat price", () => {
  it("sends aspect_ratio as BFL's own field and charges 0.04 whatever the size made", async () => {
    const { done, charged } = await run({ model: "bfl/flux-kontext-pro", prompt: "wide", aspect_ratio: "21:9" });
    expect(done).toMatchObject({ status: "completed", usage: { images: 1, cost: 0.04 } });
    expect(charged).toBe(nanosOf("0.04"));
    expect(submitted("wide")!.body).toEqual({ prompt: "wide", aspect_ratio: "21:9" });
  });

  it("edits an input image: input_image is the URL given", async () => {
    const url = `${imageOrigin}/800x600.png`;
    const { done, charged } = await run({ model: "bfl/flux-kontext-pro", prompt: "edit it", image: url, aspect_ratio: "4:3" });
    expect(done.status).toBe("completed");
    expect(charged).toBe(nanosOf("0.04"));
    expect(submitted("edit it")!.body).toEqual({ prompt: "edit it", aspect_ratio: "4:3", input_image: url });
  });

  it.each([
    { body: { aspect_ratio: "5:1" }, param: "aspect_ratio", message: /must be one of/ },
    { body: { aspect_ratio: "wide" }, param: "aspect_ratio", message: /WIDTH:HEIGHT/ },
    { body: { size: "1024x1024" }, param: "size", message: /does not take size/ },
    { body: { image: ["IMAGE_ORIGIN/64x64.png", "IMAGE_ORIGIN/64x64.png"] }, param: "image", message: /one input image/ },
  ])("refuses $param ($body) by name", async ({ body, param, message }) => {
    const withOrigin = JSON.parse(JSON.stringify(body).replaceAll("IMAGE_ORIGIN", imageOrigin)) as Record<string, unknown>;
    const { status, json } = await createImage({ model: "bfl/flux-kontext-pro", prompt: "refused", ...withOrigin });
    expect(status, JSON.stringify(json)).toBe(400);
    expect(json.error).toMatchObject({ param, message: expect.stringMatching(message) });
  });
});

describe("webhook_url, checked before the input images are fetched", () => {
  it.each([
    { webhookUrl: "https://example.com/hook", message: /Webhooks are not configured/ },
    { webhookUrl: `https://example.com/${"a".repeat(2048)}`, message: /at most 2048 characters/ },
  ])("refuses $message by name, fetching nothing and holding nothing", async ({ webhookUrl, message }) => {
    const path = "/320x240.png";
    const before = await balance();
    const fetchesBefore = imageFetches.get(path) ?? 0;
    const { status, json } = await createImage({ model: "bfl/flux-2-pro", prompt: "hooked", image: `${imageOrigin}${path}`, webhook_url: webhookUrl });
    expect(status, JSON.stringify(json)).toBe(400);
    expect(json.error).toMatchObject({ param: "webhook_url", message: expect.stringMatching(message) });
    expect(imageFetches.get(path) ?? 0).toBe(fetchesBefore);
    expect(await balance()).toBe(before);
  });
});

describe("models that take no input image", () => {
  it("refuses image on FLUX1.1 [pro] (text only) before fetching it", async () => {
    const { status, json } = await createImage({ model: "bfl/flux-pro-1.1", prompt: "no inputs", image: `${imageOrigin}/64x64.png` });
    expect(status).toBe(400);
    expect(json.error).toMatchObject({ param: "image", message: expect.stringContaining("does not take input images") });
  });

  it("refuses size and aspect_ratio together", async () => {
    const { status, json } = await createImage({ model: "bfl/flux-pro-1.1-ultra", prompt: "both", size: "1024x1024", aspect_ratio: "1:1" });
    expect(status).toBe(400);
    expect(json.error).toMatchObject({ param: "aspect_ratio" });
  });
});
