// The media cache's exact key (core/tasks/task-cache.ts): the same request
// gives the same digest whatever order its fields were built in; every field
// that changes the result changes it, and the ones that do not (how the answer
// is delivered, where uploads are stored, measured pixels) leave it alone.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { canonicalJson, hitCharge, imageCacheDigest, videoCacheDigest, type ImageCacheRequest, type VideoCacheRequest } from "../../../core/tasks/task-cache.ts";
import { ImageParametersSchema, ImageUploadSchema, TaskSchema, VideoParametersSchema } from "../../../gen/router/v1/tasks_pb.js";
import { TINY_PNG } from "../../support/fake-media-common.ts";

const imageRequest = (fields: Partial<ImageCacheRequest> = {}, image: Record<string, unknown> = {}): ImageCacheRequest => ({
  organizationId: "org_a",
  cacheKey: "k",
  model: "bfl/flux-2-pro",
  image: create(ImageParametersSchema, { prompt: "a red fox", n: 1, size: "1024x768", ...image }),
  editUploads: [],
  ...fields,
});

const videoRequest = (fields: Partial<VideoCacheRequest> = {}, video: Record<string, unknown> = {}): VideoCacheRequest => ({
  organizationId: "org_a",
  cacheKey: "k",
  model: "simulator/video",
  video: create(VideoParametersSchema, { prompt: "waves", seconds: 4, ...video }),
  storedEcho: "",
  ...fields,
});

describe("canonicalJson", () => {
  it("sorts keys at every depth and keeps array order", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, 1], c: null } })).toBe('{"a":{"c":null,"d":[3,1]},"b":1}');
    expect(canonicalJson({ a: { c: null, d: [3, 1] }, b: 1 })).toBe(canonicalJson({ b: 1, a: { d: [3, 1], c: null } }));
    expect(canonicalJson(["x", { z: "\u00e9", y: true }])).toBe('["x",{"y":true,"z":"\u00e9"}]');
  });
});

describe("the exact key of an image create", () => {
  const base = imageCacheDigest(imageRequest());

  it("is the same for the same request, whatever order its parameters were given in, and is hex SHA-256", () => {
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    const reordered = create(ImageParametersSchema, { size: "1024x768", n: 1, prompt: "a red fox" });
    expect(imageCacheDigest(imageRequest({ image: reordered }))).toBe(base);
    // n left out (0) is one image.
    expect(imageCacheDigest(imageRequest({}, { n: 0 }))).toBe(base);
  });

  it.each([
    ["organisation", imageRequest({ organizationId: "org_b" })],
    ["cache_key", imageRequest({ cacheKey: "other" })],
    ["model", imageRequest({ model: "bfl/flux-2-max" })],
    ["prompt", imageRequest({}, { prompt: "a red fox." })],
    ["one number of the prompt", imageRequest({}, { prompt: "2 red foxes" })],
    ["n", imageRequest({}, { n: 2 })],
    ["size", imageRequest({}, { size: "768x1024" })],
    ["quality", imageRequest({}, { quality: "high" })],
    ["style", imageRequest({}, { style: "vivid" })],
    ["output_format", imageRequest({}, { outputFormat: "png" })],
    ["background", imageRequest({}, { background: "transparent" })],
    ["seed", imageRequest({}, { seed: 7n })],
    ["seed 0 against none", imageRequest({}, { seed: 0n })],
    ["aspect_ratio", imageRequest({}, { aspectRatio: "16:9" })],
    ["input images", imageRequest({}, { imageUrls: ["https://example.com/a.png"] })],
    ["an edit's upload", imageRequest({ editUploads: [create(ImageUploadSchema, { data: TINY_PNG, filename: "a.png" })] })],
  ])("changes with the %s", (_field, changed) => {
    expect(imageCacheDigest(changed)).not.toBe(base);
  });

  it("follows the input images' order, and an edit's bytes and mask, not its file names", () => {
    const two = imageCacheDigest(imageRequest({}, { imageUrls: ["https://example.com/a.png", "https://example.com/b.png"] }));
    expect(imageCacheDigest(imageRequest({}, { imageUrls: ["https://example.com/b.png", "https://example.com/a.png"] }))).not.toBe(two);
    const upload = (fields: Record<string, unknown>) => imageRequest({ editUploads: [create(ImageUploadSchema, { data: TINY_PNG, filename: "a.png", ...fields })] });
    expect(imageCacheDigest(upload({ filename: "renamed.png" }))).toBe(imageCacheDigest(upload({})));
    expect(imageCacheDigest(upload({ mask: true }))).not.toBe(imageCacheDigest(upload({})));
    expect(imageCacheDigest(upload({ data: Buffer.concat([TINY_PNG, Buffer.from([0])]) }))).not.toBe(imageCacheDigest(upload({})));
  });

  it("leaves out what the core measures or stores: input pixels and where edit inputs are kept", () => {
    expect(imageCacheDigest(imageRequest({}, { inputPixels: 4096n, editInputs: [{ assetName: "o/t/edit-0", sha256: "x" }] }))).toBe(base);
  });
});

describe("the exact key of a video create", () => {
  const base = videoCacheDigest(videoRequest());

  it("is the same for the same request", () => {
    expect(videoCacheDigest(videoRequest({ video: create(VideoParametersSchema, { seconds: 4, prompt: "waves" }) }))).toBe(base);
  });

  it.each([
    ["organisation", videoRequest({ organizationId: "org_b" })],
    ["cache_key", videoRequest({ cacheKey: "other" })],
    ["model", videoRequest({ model: "pollo/pollo-v1-6" })],
    ["prompt", videoRequest({}, { prompt: "no waves" })],
    ["seconds", videoRequest({}, { seconds: 8 })],
    ["length", videoRequest({}, { length: 5 })],
    ["resolution", videoRequest({}, { resolution: "1080p" })],
    ["aspect ratio", videoRequest({}, { aspectRatio: "9:16" })],
    ["size", videoRequest({}, { size: "1280x720" })],
    ["mode", videoRequest({}, { mode: "pro" })],
    ["seed", videoRequest({}, { seed: 1n })],
    ["audio", videoRequest({}, { generateAudio: false })],
    ["input image", videoRequest({}, { imageUrl: "https://example.com/a.png" })],
    ["creating format's echo", videoRequest({ storedEcho: '{"interaction":1}' })],
  ])("changes with the %s", (_field, changed) => {
    expect(videoCacheDigest(changed)).not.toBe(base);
  });

  it("never equals an image create's key with the same words", () => {
    expect(videoCacheDigest(videoRequest({ model: "bfl/flux-2-pro" }, { prompt: "a red fox", seconds: 0 }))).not.toBe(imageCacheDigest(imageRequest({}, { size: "" })));
  });
});

describe("a hit's charge", () => {
  it("is a tenth of the original's settled cost, exactly", () => {
    expect(hitCharge(create(TaskSchema, { usage: { cost: "0.03" } }))).toBe(3n * 10n ** 12n);
    expect(hitCharge(create(TaskSchema, { usage: { cost: "0.034" } }))).toBe(34n * 10n ** 11n);
    expect(hitCharge(create(TaskSchema, { usage: { cost: "0" } }))).toBe(0n);
  });
});
