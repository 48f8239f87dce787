// What the media endpoints answer about a task, on the bundled default's
// simulator: an image's `size` is the dimensions delivered, a video whose
// seconds were not asked has `seconds: null` until they are known, each kind's
// endpoint answers its own kind only (getAsyncResponse both); and the small
// edges: a too long Idempotency-Key, an asset index that is not digits or not
// there, If-Range.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfigFile } from "../../../core/config/load.ts";
import { startGateway, type Gateway } from "../../support/harness.ts";
import { keyedAssetUrl, taskClient, type TaskClient } from "../../support/video-task-harness.ts";

const DEV_KEY = "sk-dev-task-answers";
let gateway: Gateway;
let images: TaskClient;
let videos: TaskClient;

beforeAll(async () => {
  gateway = await startGateway(loadConfigFile(), { env: { ROUTER_DEV_KEY: DEV_KEY } });
  images = taskClient(gateway, { kind: "images", model: "simulator/image", key: DEV_KEY, organizationId: "org_dev" });
  videos = taskClient(gateway, { kind: "videos", model: "simulator/video", key: DEV_KEY, organizationId: "org_dev" });
});
afterAll(async () => {
  await gateway?.close();
});

const pngDimensions = (png: Buffer) => `${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`;

describe("result fields", () => {
  it("an image made without size reports the dimensions delivered, not auto", async () => {
    const created = await images.create({ prompt: "no size given" });
    expect(created.json.size).toBe("auto");
    const done = await images.finished(created.json.taskId);
    const png = Buffer.from(await (await images.download(done.data[0].url)).arrayBuffer());
    expect(done.size).toBe(pngDimensions(png));
    expect(done.size).not.toBe("auto");
  });

  it("a video without seconds has seconds null until made, then the seconds delivered; asked, the seconds asked", async () => {
    const created = await videos.create({ prompt: "no seconds given" });
    expect(created.json).toMatchObject({ status: "queued", seconds: null, size: null });
    const done = await videos.finished(created.json.taskId);
    expect(done.seconds).toBe(String(done.usage.video_seconds));
    const asked = await videos.create({ prompt: "eight seconds", seconds: "8" });
    expect(asked.json.seconds).toBe("8");
  });

  it("each kind's endpoint answers its own kind only; getAsyncResponse answers both", async () => {
    const imageId = await images.created({ prompt: "an image task" });
    const videoId = await videos.created({ prompt: "a video task" });
    const videoAsImage = await images.read(videoId);
    expect([videoAsImage.status, videoAsImage.json.error.code]).toEqual([404, "task_not_found"]);
    const imageAsVideo = await videos.read(imageId);
    expect([imageAsVideo.status, imageAsVideo.json.error.code]).toEqual([404, "task_not_found"]);
    expect((await images.read(imageId)).json.object).toBe("image.task");
    expect((await videos.read(videoId)).json.object).toBe("video");
    const both = await Promise.all([
      images.post("/getAsyncResponse", { taskId: imageId, model: "simulator/image" }),
      videos.post("/getAsyncResponse", { taskId: videoId, model: "simulator/video" }),
    ]);
    expect(both.map((answer) => [answer.status, answer.json.object])).toEqual([
      [200, "image.task"],
      [200, "video"],
    ]);
  });
});

describe("small edges", () => {
  it("refuses an Idempotency-Key over 255 characters by name, takes one of 255", async () => {
    const long = await images.create({ prompt: "x" }, { idempotencyKey: "k".repeat(256) });
    expect([long.status, long.json.error.code, long.json.error.param]).toEqual([400, "invalid_parameter", "Idempotency-Key"]);
    const video = await videos.create({ prompt: "x" }, { idempotencyKey: "k".repeat(256) });
    expect([video.status, video.json.error.param]).toEqual([400, "Idempotency-Key"]);
    expect((await images.create({ prompt: "x" }, { idempotencyKey: "k".repeat(255) })).status).toBe(200);
  });

  it("takes an asset index in digits only, and names index when the task has no such asset", async () => {
    const done = await images.finished(await images.created({ prompt: "assets", size: "256x256" }));
    // The authenticated route (the signed link's query left out).
    const base = keyedAssetUrl(done.data[0].url).replace(/\/0$/, "");
    for (const index of ["1e3", "0x0", "+0", "0.0", "1000000000", "99999999999999999999999"]) {
      const answer = await images.download(`${base}/${index}`);
      const { error } = (await answer.json()) as { error: { param: string; message: string } };
      // The bound is named: a number past it is out of range, not "not a whole number".
      expect([answer.status, error.param, error.message], index).toEqual([400, "index", "The asset index is a whole number from 0 to 999999999, in digits."]);
    }
    expect((await images.download(`${base}/999999999`)).status).toBe(404);
    const missing = await images.download(`${base}/5`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string; param: string } }).error).toMatchObject({ code: "asset_not_found", param: "index" });
  });

  it("answers a Range sent with If-Range with the whole asset (200): the router sends no validator to match", async () => {
    const done = await images.finished(await images.created({ prompt: "if-range", size: "256x256" }));
    const whole = Buffer.from(await (await images.download(done.data[0].url)).arrayBuffer());
    const answer = await fetch(done.data[0].url, { headers: { authorization: `Bearer ${DEV_KEY}`, range: "bytes=0-9", "if-range": '"some-etag"' } });
    expect([answer.status, answer.headers.get("content-range")]).toEqual([200, null]);
    expect(Buffer.from(await answer.arrayBuffer()).equals(whole)).toBe(true);
    const ranged = await images.download(done.data[0].url, DEV_KEY, "bytes=0-9");
    expect(ranged.status).toBe(206);
  });
});
