// Image edits (POST /api/v1/images/edits) through the official `openai` SDK's
// images.edit: the uploaded images and mask reach the OpenAI fake's
// /v1/images/edits as the parts OpenAI takes, byte for byte and in order; the
// answer is the synchronous images object, charged from the reported tokens
// (the input image tokens at prompt_image). A model whose provider does not
// edit (BFL's, a text-in model) and a malformed form are clear 400s that hold
// nothing and call no provider.
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solidPng } from "../../../../core/providers/simulator/media.ts";
import { TINY_PNG } from "../../../support/fake-media-common.ts";
import { BFL_KEY, startFakeBfl } from "../../../support/fake-media-bfl.ts";
import { EDIT_IMAGE_TOKENS, OPENAI_MEDIA_KEY, startFakeOpenAiMedia, type FakeOpenAiMedia } from "../../../support/fake-media-openai.ts";
import type { FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { femtosOf, nanosRoundedUp } from "../../../support/exact-money.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { mediaTaskConfig, TASK_ACCOUNTS_ENV } from "../../../support/media-task-config.ts";
import { taskClient, type TaskClient } from "../../../support/video-task-harness.ts";

const EDITOR = "openai/gpt-image-edit";
const TEXT_IN = "openai/gpt-image-text-in";
const KONTEXT = "bfl/flux-kontext-pro";
const PRICES = { prompt: "0.000005", prompt_image: "0.000008", completion: "0.00001", completion_image: "0.000032" };
/** Two distinct PNGs and a JPEG, by their bytes. */
const CAT = solidPng(2, 2, Buffer.from([0, 0, 255]));
const HAT = solidPng(3, 1, Buffer.from([0, 255, 0]));
const MASK = solidPng(2, 2, Buffer.from([0, 0, 0]));
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 74, 70, 73, 70, 0, 1]);

let openai: FakeOpenAiMedia;
let bfl: FakeMediaUpstream;
let gateway: Gateway;
let sdk: OpenAI;
let images: TaskClient;

beforeAll(async () => {
  openai = await startFakeOpenAiMedia();
  bfl = await startFakeBfl();
  const config = mediaTaskConfig(
    [
      { id: "openai", label: "OpenAI", protocol: "openai-compatible", base_url: openai.url, api_key_env: "OPENAI_API_KEY", request_timeout_ms: 5000 },
      { id: "bfl", label: "Black Forest Labs", protocol: "bfl", base_url: bfl.url, api_key_env: "BFL_API_KEY", timeout_ms: 5000 },
    ],
    [
      { id: EDITOR, output: "image", inputModalities: ["text", "image"], contextLength: 32000, maxCompletionTokens: 6240, routes: [{ provider: "openai", providerModelId: "gpt-image-1.5", pricing: PRICES }] },
      { id: TEXT_IN, output: "image", routes: [{ provider: "openai", providerModelId: "gpt-image-1.5", pricing: { image_output: "0.034" } }] },
      { id: KONTEXT, output: "image", inputModalities: ["text", "image"], details: { image: { max: 1 } }, routes: [{ provider: "bfl", providerModelId: "flux-kontext-pro", pricing: { image_output: "0.04" } }] },
    ],
  );
  gateway = await startGateway(config, { env: { OPENAI_API_KEY: OPENAI_MEDIA_KEY, BFL_API_KEY: BFL_KEY, ...TASK_ACCOUNTS_ENV } });
  sdk = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
  images = taskClient(gateway, { kind: "images", model: EDITOR });
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
  await bfl?.close();
});

const png = (bytes: Buffer, name: string) => toFile(bytes, name, { type: "image/png" });
const costOf = (answer: OpenAI.ImagesResponse) => (answer.usage as unknown as { cost: number }).cost;

/** A multipart POST to the edits route, as a client other than the SDK may send it. */
async function postEdit(fields: Record<string, string>, files: { part: string; bytes: Buffer; name: string }[] = []) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const file of files) form.append(file.part, new Blob([file.bytes]), file.name);
  const response = await fetch(`${gateway.apiUrl}/images/edits`, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}` }, body: form });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

describe("images.edit on a provider that edits (OpenAI's gpt-image)", () => {
  it("sends the uploaded image as `image`, answers the hosted edit, and charges the reported tokens (input image tokens at prompt_image)", async () => {
    const before = await images.balance();
    const answer = await sdk.images.edit({ model: EDITOR, image: await png(CAT, "cat.png"), prompt: "add a hat" });
    expect(answer.data).toHaveLength(1);
    const asset = await images.download(answer.data![0].url!);
    expect(Buffer.from(await asset.arrayBuffer()).equals(TINY_PNG)).toBe(true);

    const edit = openai.edits.at(-1)!;
    expect(edit.fields).toEqual({ prompt: "add a hat", model: "gpt-image-1.5", n: "1" });
    expect(edit.files.map((file) => [file.part, file.filename, file.type])).toEqual([["image", "cat.png", "image/png"]]);
    expect(edit.files[0].bytes.equals(CAT)).toBe(true);

    const cost = 3n * femtosOf(PRICES.prompt) + BigInt(EDIT_IMAGE_TOKENS) * femtosOf(PRICES.prompt_image) + 272n * femtosOf(PRICES.completion_image);
    expect(femtosOf(costOf(answer))).toBe(cost);
    expect(answer.usage).toMatchObject({ input_tokens: 3 + EDIT_IMAGE_TOKENS, input_tokens_details: { text_tokens: 3, image_tokens: EDIT_IMAGE_TOKENS }, output_tokens: 272 });
    expect(await images.balance()).toBe(before - nanosRoundedUp(cost));
  });

  it("sends several images as repeated `image[]`, in order, and the mask as `mask`", async () => {
    const answer = await sdk.images.edit({ model: EDITOR, image: [await png(CAT, "cat.png"), await png(HAT, "hat.png")], mask: await png(MASK, "mask.png"), prompt: "put the hat on the cat", n: 2, size: "1024x1024", quality: "high" });
    expect(answer.data).toHaveLength(2);
    const edit = openai.edits.at(-1)!;
    expect(edit.fields).toEqual({ prompt: "put the hat on the cat", model: "gpt-image-1.5", n: "2", size: "1024x1024", quality: "high" });
    expect(edit.files.map((file) => [file.part, file.filename])).toEqual([["image[]", "cat.png"], ["image[]", "hat.png"], ["mask", "mask.png"]]);
    expect(edit.files.map((file) => file.bytes)).toEqual([CAT, HAT, MASK]);
    expect(answer.usage).toMatchObject({ input_tokens_details: { image_tokens: 2 * EDIT_IMAGE_TOKENS } });
  });

  it("refuses an Idempotency-Key replayed with other images (the uploads are part of what was asked)", async () => {
    const send = async (bytes: Buffer) => sdk.images.edit({ model: EDITOR, image: await png(bytes, "x.png"), prompt: "same" }, { headers: { "idempotency-key": "edit-once" } });
    await send(CAT);
    await expect(send(HAT)).rejects.toMatchObject({ status: 400, error: { code: "idempotency_key_reused" } });
  });
});

describe("edits refused", () => {
  it.each([
    { what: "a model whose provider does not edit (BFL's Kontext takes image URLs on /images/generations)", fields: { model: KONTEXT, prompt: "edit" }, param: "model" },
    { what: "a model that takes no images in", fields: { model: TEXT_IN, prompt: "edit" }, param: "model" },
    { what: "a file that is not an image", fields: { model: EDITOR, prompt: "edit" }, files: [{ part: "image", bytes: Buffer.from("<html>"), name: "page.png" }], param: "image" },
    { what: "a mask that is not a PNG", fields: { model: EDITOR, prompt: "edit" }, files: [{ part: "image", bytes: CAT, name: "cat.png" }, { part: "mask", bytes: JPEG, name: "mask.jpg" }], param: "mask" },
    { what: "no image file", fields: { model: EDITOR, prompt: "edit" }, files: [], param: "image" },
    { what: "an image given as text", fields: { model: EDITOR, prompt: "edit", image: "https://example.com/cat.png" }, files: [], param: "image" },
    { what: "a field edits do not take", fields: { model: EDITOR, prompt: "edit", style: "vivid" }, param: "style" },
    { what: "17 images", fields: { model: EDITOR, prompt: "edit" }, files: Array.from({ length: 17 }, (_, i) => ({ part: "image[]", bytes: CAT, name: `${i}.png` })), param: "image" },
  ])("refuses $what with a 400 naming $param, holding nothing and calling no provider", async ({ fields, files, param }) => {
    const before = await images.balance();
    const edits = openai.edits.length;
    const answer = await postEdit(fields as unknown as Record<string, string>, files ?? [{ part: "image", bytes: CAT, name: "cat.png" }]);
    expect(answer.status, JSON.stringify(answer.json)).toBe(400);
    expect(answer.json.error).toMatchObject({ param });
    expect(openai.edits.length).toBe(edits);
    expect(bfl.requests.filter((request) => request.method === "POST")).toHaveLength(0);
    expect(await images.balance()).toBe(before);
  });

  it("refuses a JSON body with a 400 naming image", async () => {
    const response = await fetch(`${gateway.apiUrl}/images/edits`, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model: EDITOR, prompt: "edit" }) });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error).toMatchObject({ param: "image" });
  });
});
