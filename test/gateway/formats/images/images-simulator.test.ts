// The bundled default configuration makes an image with no keys: the
// simulator's image model runs as a task (done at its first poll) and its PNG
// (one colour drawn from the prompt, the size asked for) is served from the
// gateway; a prompt asking to fail ends failed with the hold returned.
import { inflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfigFile } from "../../../../core/config/load.ts";
import { startGateway, type Gateway } from "../../../support/harness.ts";
import { taskClient, type TaskClient } from "../../../support/video-task-harness.ts";

const DEV_KEY = "sk-dev-images";
let gateway: Gateway;
let images: TaskClient;

beforeAll(async () => {
  gateway = await startGateway(loadConfigFile(), { env: { ROUTER_DEV_KEY: DEV_KEY } });
  images = taskClient(gateway, { kind: "images", model: "simulator/image", key: DEV_KEY, organizationId: "org_dev" });
});
afterAll(async () => {
  await gateway?.close();
});

/** The ended task of an image made with these fields. */
const makeImage = async (body: Record<string, unknown>) => images.finished(await images.created(body));
const downloadPng = async (task: Record<string, any>) => Buffer.from(await (await images.download(task.data[0].url)).arrayBuffer());

describe("simulator/image in the bundled default", () => {
  it("makes a PNG of the size asked for, served by the gateway", async () => {
    const task = await makeImage({ prompt: "a lighthouse", size: "512x512" });
    expect(task).toMatchObject({ status: "completed", size: "512x512", router_assets: { status: "ready" }, usage: { images: 1, cost: 0.001 } });
    const asset = await images.download(task.data[0].url);
    expect(asset.headers.get("content-type")).toBe("image/png");
    const png = Buffer.from(await asset.arrayBuffer());
    expect(png.subarray(1, 4).toString("ascii")).toBe("PNG");
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([512, 512]);
    // One IDAT chunk right after IHDR: 512 scanlines of a filter byte and 512 RGB pixels.
    const idatLength = png.readUInt32BE(33);
    expect(inflateSync(png.subarray(41, 41 + idatLength)).length).toBe(512 * (1 + 512 * 3));
  });

  /** The first pixel's colour (the simulator's images are of one colour). */
  const pixelOf = async (task: Record<string, any>) => {
    const png = await downloadPng(task);
    return inflateSync(png.subarray(41, 41 + png.readUInt32BE(33))).subarray(1, 4).toString("hex");
  };

  it("takes the seed: the same prompt and seed make the same image, another seed another", async () => {
    const [first, again, other] = await Promise.all([
      makeImage({ prompt: "a seeded lighthouse", size: "256x256", seed: 7 }),
      makeImage({ prompt: "a seeded lighthouse", size: "256x256", seed: 7 }),
      makeImage({ prompt: "a seeded lighthouse", size: "256x256", seed: 8 }),
    ]);
    expect(await pixelOf(again)).toBe(await pixelOf(first));
    expect(await pixelOf(other)).not.toBe(await pixelOf(first));
  });

  it("takes seed 0 as a seed, not as no seed", async () => {
    const [zero, unseeded] = await Promise.all([
      makeImage({ prompt: "a zero-seeded lighthouse", size: "256x256", seed: 0 }),
      makeImage({ prompt: "a zero-seeded lighthouse", size: "256x256" }),
    ]);
    expect(await pixelOf(zero)).not.toBe(await pixelOf(unseeded));
  });

  it("refuses a seed past 2^32-1 (400 naming seed)", async () => {
    const response = await images.create({ prompt: "x", seed: 2 ** 32 });
    expect(response.status).toBe(400);
    expect(response.json.error.param).toBe("seed");
  });

  it("refuses a size outside the model's list (400 naming size)", async () => {
    const response = await images.create({ prompt: "x", size: "300x300" });
    expect(response.status).toBe(400);
    expect(response.json.error.param).toBe("size");
  });

  it("ends failed when the prompt asks, and returns the hold", async () => {
    const before = await images.balance();
    const task = await makeImage({ prompt: "please [fail]" });
    expect(task).toMatchObject({ status: "failed", error: { code: "upstream_error" } });
    expect(await images.balance()).toBe(before);
  });
});
