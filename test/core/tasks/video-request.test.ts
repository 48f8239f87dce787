// planVideo: the checks a video task passes before anything is held (the
// spec's values, the protocol's parameters, the catalogue's allowed values,
// the protocol's check of their combination, the input image fetched and
// checked unless a replay's was), and the hold's seconds and price.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VideoParametersSchema, VideoResultStyle } from "../../../gen/router/v1/tasks_pb.js";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { parseConfig } from "../../../core/config/load.ts";
import { errorDetailOf } from "../../../core/errors.ts";
import type { MediaJobAdapter } from "../../../core/providers/media-job.ts";
import { createSimulatorMediaAdapter, solidPng } from "../../../core/providers/simulator/media.ts";
import { parseMoney } from "../../../core/billing/money.ts";
import { DEFAULT_VIDEO_SECONDS, planVideo, videoSecondsHeld } from "../../../core/tasks/video-request.ts";
import { IMAGE_FETCH_FAILED, INPUT_IMAGE_LIMITS } from "../../../core/tasks/input-image.ts";

/** The image server listens on 127.0.0.1: private addresses allowed (tasks.fetch_private_urls). */
const LOCAL_IMAGES = { ...INPUT_IMAGE_LIMITS, allowPrivateAddresses: true };

const RED = Buffer.from([255, 0, 0]);
let images: http.Server;
let origin = "";

beforeAll(async () => {
  // PNGs of the shape the path asks (/png/WxH), a JPEG header, a GIF, a 404 and an endless body.
  images = http.createServer((req, res) => {
    const png = /^\/png\/(\d+)x(\d+)$/.exec(req.url ?? "");
    if (png) return void res.writeHead(200, { "content-type": "image/png" }).end(solidPng(Number(png[1]), Number(png[2]), RED));
    if (req.url === "/gif") return void res.writeHead(200, { "content-type": "image/gif" }).end(Buffer.from("GIF89a\x10\x00\x10\x00\x00\x00\x00", "latin1"));
    if (req.url === "/big") return void res.writeHead(200, { "content-type": "image/png" }).end(Buffer.alloc(2048));
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => images.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => images.close(() => resolve())));

const catalogue = createCatalogue(
  parseConfig(
    JSON.stringify({
      providers: [{ id: "simulator", label: "Simulator", protocol: "simulator" }],
      models: [
        model("simulator/video", { seconds: ["4", "8"], size: ["720x1280", "1280x720"] }, "0.01"),
        model("simulator/free-length", {}, undefined),
        model("simulator/listed-length", { length: [5, 10] }, "0.5"),
        model("simulator/silent", { seed: [], generateAudio: [] }, "0.01"),
        { ...model("simulator/image-only", {}, "0.01"), output_modalities: ["image"] },
      ],
    }),
  ),
  {},
);

function model(id: string, details: object, perSecond: string | undefined) {
  return {
    id,
    name: id,
    created: 1700000000,
    creator: "simulator",
    context_length: 4096,
    max_completion_tokens: 1,
    input_modalities: ["text", "image"],
    output_modalities: ["video"],
    supported_parameters: [],
    supported_params_details: details,
    providers: [{ provider: "simulator", provider_model_id: "video", pricing: { prompt: "0", completion: "0", ...(perSecond ? { video_output_per_second: perSecond } : {}) } }],
  };
}

const simulator = createSimulatorMediaAdapter();
/** The simulator with `length` carried too, for the catalogue's length lists. */
const withLength: MediaJobAdapter = { ...simulator, videoParameters: [...simulator.videoParameters!, "length"] };
/** The simulator carrying every public video parameter, for the free-text ones. */
const carriesAll: MediaJobAdapter = { ...simulator, videoParameters: ["image", "length", "seconds", "resolution", "aspectRatio", "size", "mode", "seed", "generateAudio"] };
const video = (fields: MessageInitShape<typeof VideoParametersSchema> = {}) => create(VideoParametersSchema, { prompt: "a wave", ...fields });

async function refusal(promise: Promise<unknown>): Promise<{ param: string; message: string }> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ConnectError);
  return { param: errorDetailOf(error as ConnectError)?.param ?? "", message: (error as ConnectError).rawMessage };
}

describe("planVideo", () => {
  it("holds the seconds asked at the route's per-second price, in the adapter's result style", async () => {
    const plan = await planVideo(catalogue, { simulator }, "simulator/video", video({ seconds: 8, size: "1280x720", seed: 3n }));
    expect(plan).toMatchObject({ heldSeconds: 8, pricePerSecond: parseMoney("0.01"), resultStyle: VideoResultStyle.PROGRESS });
    expect(plan.route.provider.id).toBe("simulator");
  });

  it("holds the model's longest allowed length when none is asked, else the documented default", async () => {
    expect((await planVideo(catalogue, { simulator }, "simulator/video", video())).heldSeconds).toBe(8);
    expect((await planVideo(catalogue, { simulator }, "simulator/free-length", video())).heldSeconds).toBe(DEFAULT_VIDEO_SECONDS);
    expect((await planVideo(catalogue, { simulator: withLength }, "simulator/listed-length", video())).heldSeconds).toBe(10);
    expect(videoSecondsHeld({ length: [5, 10] }, { length: 5, seconds: 0 })).toBe(5);
  });

  it.each([
    [{ length: 7 }, "length", "simulator/free-length"],
    [{ length: 5 }, "length", "simulator/video"],
    [{ length: 6 }, "length", "simulator/listed-length"],
    [{ seconds: 5 }, "seconds", "simulator/video"],
    [{ seconds: 12 }, "seconds", "simulator/video"],
    [{ size: "640x480" }, "size", "simulator/video"],
    [{ resolution: "720p" }, "resolution", "simulator/video"],
    [{ mode: "pro" }, "mode", "simulator/video"],
    [{ aspectRatio: "16:9" }, "aspectRatio", "simulator/video"],
    [{ generateAudio: true }, "generateAudio", "simulator/video"],
    [{ prompt: "" }, "prompt", "simulator/video"],
    [{}, "model", "simulator/image-only"],
    [{}, "model", "simulator/unknown"],
  ])("refuses %j with a 400 naming %s (%s)", async (fields, param, modelId) => {
    const adapters = { simulator: modelId === "simulator/listed-length" ? withLength : simulator };
    expect((await refusal(planVideo(catalogue, adapters, modelId, video(fields)))).param).toBe(param);
  });

  it("checks every carried parameter against its details list: an empty list (seed: [], generateAudio: []) takes none, as the catalogue hides it", async () => {
    for (const fields of [{ seed: 3n }, { generateAudio: false }]) {
      const { param, message } = await refusal(planVideo(catalogue, { simulator: carriesAll }, "simulator/silent", video(fields)));
      expect(param).toBe(Object.keys(fields)[0]);
      expect(message).toMatch(/does not take/);
    }
    expect((await planVideo(catalogue, { simulator: carriesAll }, "simulator/free-length", video({ seed: 3n, generateAudio: true }))).heldSeconds).toBe(DEFAULT_VIDEO_SECONDS);
  });

  it("takes a seed from 0 to 2^32-1 and refuses a larger one naming seed", async () => {
    await planVideo(catalogue, { simulator }, "simulator/video", video({ seed: 4294967295n }));
    expect(await refusal(planVideo(catalogue, { simulator }, "simulator/video", video({ seed: 4294967296n })))).toMatchObject({ param: "seed", message: expect.stringMatching(/0 to 4294967295/) });
  });

  it.each([
    [{ resolution: "r".repeat(65) }, "resolution"],
    [{ mode: "m".repeat(65) }, "mode"],
    [{ aspectRatio: "1".repeat(65) }, "aspectRatio"],
    [{ size: "9".repeat(65) }, "size"],
    [{ imageUrl: `http://127.0.0.1:1/${"a".repeat(2048)}` }, "image"],
  ])("refuses a free-text value past its length (%#) naming %s, before any fetch", async (fields, param) => {
    const { param: named, message } = await refusal(planVideo(catalogue, { simulator: carriesAll }, "simulator/free-length", video(fields)));
    expect(named).toBe(param);
    expect(message).toMatch(/at most (64|2048) characters/);
  });

  it("is a 400 naming model when no route's protocol makes videos, a 503 when such routes exist but are disabled", async () => {
    const { submitVideo: _, ...imagesOnly } = simulator;
    const { param, message } = await refusal(planVideo(catalogue, { simulator: imagesOnly }, "simulator/video", video()));
    expect(param).toBe("model");
    expect(message).toMatch(/has no provider whose protocol runs video tasks/);
    const disabled = createCatalogue(parseConfig(JSON.stringify({ providers: [{ id: "keyed", label: "Keyed", protocol: "simulator", api_key_env: "UNSET_VIDEO_KEY" }], models: [{ ...model("keyed/video", {}, "0.01"), providers: [{ provider: "keyed", provider_model_id: "video", pricing: { prompt: "0", completion: "0" } }] }] })), {});
    const unavailable = await planVideo(disabled, { simulator }, "keyed/video", video()).then(() => undefined, (caught: ConnectError) => caught);
    expect(unavailable?.code).toBe(Code.Unavailable);
    expect(unavailable?.rawMessage).toMatch(/UNSET_VIDEO_KEY/);
  });

  it("takes a JPEG or PNG URL between 1:4 and 4:1, and refuses base64, other types, other shapes and dead URLs naming image", async () => {
    await planVideo(catalogue, { simulator }, "simulator/video", video({ imageUrl: `${origin}/png/400x100` }), { imageLimits: LOCAL_IMAGES });
    await planVideo(catalogue, { simulator }, "simulator/video", video({ imageUrl: `${origin}/png/100x400` }), { imageLimits: LOCAL_IMAGES });
    const refused = (imageUrl: string) => refusal(planVideo(catalogue, { simulator }, "simulator/video", video({ imageUrl }), { imageLimits: { ...LOCAL_IMAGES, maxBytes: 1024 } }));
    const cases: [string, RegExp][] = [
      [`data:image/png;base64,${solidPng(1, 1, RED).toString("base64")}`, /http or https URL/],
      [solidPng(1, 1, RED).toString("base64"), /http or https URL/],
      ["ftp://example.com/a.png", /http or https URL/],
      [`${origin}/png/10x50`, /10x50; its aspect ratio must be between 1:4 and 4:1/],
      [`${origin}/png/50x10`, /50x10; its aspect ratio/],
      [`${origin}/gif`, /^image is not a JPEG or PNG\.$/],
      // Every failed fetch is told in the same words: what failed would describe hosts the caller cannot reach.
      [`${origin}/missing`, new RegExp(`^${IMAGE_FETCH_FAILED}$`)],
      [`${origin}/big`, new RegExp(`^${IMAGE_FETCH_FAILED}$`)],
    ];
    for (const [given, why] of cases) {
      const { param, message } = await refused(given);
      expect(param, given.slice(0, 40)).toBe("image");
      expect(message).toMatch(why);
    }
  });

  it("refuses an image where the protocol takes none, before fetching it", async () => {
    const textOnly: MediaJobAdapter = { ...simulator, videoParameters: ["seconds"] };
    const { param, message } = await refusal(planVideo(catalogue, { simulator: textOnly }, "simulator/video", video({ imageUrl: `${origin}/missing` })));
    expect(param).toBe("image");
    expect(message).toMatch(/does not take image/);
  });

  it("refuses a combination the protocol's checkVideo refuses, naming its parameter, before fetching the image", async () => {
    const noSeedWithImage: MediaJobAdapter = {
      ...simulator,
      checkVideo: (given) => (given.imageUrl && given.seed !== undefined ? { param: "seed", message: "seed cannot be given with image." } : undefined),
    };
    const adapters = { simulator: noSeedWithImage };
    expect(await refusal(planVideo(catalogue, adapters, "simulator/video", video({ imageUrl: `${origin}/missing`, seed: 3n })))).toEqual({ param: "seed", message: "seed cannot be given with image." });
    expect((await planVideo(catalogue, adapters, "simulator/video", video({ seed: 3n }))).route.provider.id).toBe("simulator");
    expect((await planVideo(catalogue, adapters, "simulator/video", video({ imageUrl: `${origin}/png/20x10` }), { imageLimits: LOCAL_IMAGES })).route.provider.id).toBe("simulator");
  });

  it("does not fetch an image already checked (an Idempotency-Key's replay), whose URL may have died since", async () => {
    const dead = video({ imageUrl: `${origin}/missing` });
    expect((await refusal(planVideo(catalogue, { simulator }, "simulator/video", dead))).param).toBe("image");
    expect((await planVideo(catalogue, { simulator }, "simulator/video", dead, { imageChecked: true })).route.provider.id).toBe("simulator");
  });
});
