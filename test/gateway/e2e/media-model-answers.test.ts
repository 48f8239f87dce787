// What the media endpoints answer about the model and the money, in chat's
// words: a `:free` id is read as chat reads it (400 free_slug_disabled, or
// refused by name on a model whose free tier is enabled, not a 404); a
// disabled model's 503 names the key variables to set; a 402 suggests what
// the request can lower (n, the size, seconds), not max_tokens.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Gateway } from "../../support/harness.ts";
import { mediaModelEntry, mediaTaskConfig, TASK_ACCOUNTS_ENV } from "../../support/media-task-config.ts";
import { taskClient } from "../../support/video-task-harness.ts";
import { parseConfig } from "../../../core/config/load.ts";

let gateway: Gateway;

beforeAll(async () => {
  const base = mediaTaskConfig(
    [
      // No key variable is set for either: their routes are disabled.
      { id: "bfl", protocol: "bfl", base_url: "http://127.0.0.1:9", api_key_env: "BFL_API_KEY" },
      { id: "kling", protocol: "kling", base_url: "http://127.0.0.1:9", api_key_env: "KLING_ACCESS_KEY", secret_key_env: "KLING_SECRET_KEY" },
    ],
    [
      { id: "bfl/flux-2-pro", output: "image", routes: [{ provider: "bfl", providerModelId: "flux-2-pro", pricing: { image_output: "0.03" } }] },
      { id: "kling/v2", output: "video", routes: [{ provider: "kling", providerModelId: "kling-v2", pricing: { video_output_per_second: "0.1" } }] },
      { id: "simulator/image", output: "image", routes: [{ provider: "simulator", providerModelId: "image", pricing: { image_output: "0.01" } }] },
      { id: "simulator/video", output: "video", routes: [{ provider: "simulator", providerModelId: "video", pricing: { video_output_per_second: "0.01" } }] },
      // Dearer than the organisation's 10 credits.
      { id: "simulator/dear-image", output: "image", routes: [{ provider: "simulator", providerModelId: "image", pricing: { image_output: "50" } }] },
      { id: "simulator/dear-video", output: "video", routes: [{ provider: "simulator", providerModelId: "video", pricing: { video_output_per_second: "5" } }] },
    ],
  );
  // One media model whose free tier is enabled.
  const freeImage = mediaModelEntry({ id: "simulator/free-image", output: "image", routes: [{ provider: "simulator", providerModelId: "image", pricing: { image_output: "0.01" } }] });
  (freeImage.providers as Record<string, unknown>[])[0].free = { enabled: true };
  const raw = JSON.parse(JSON.stringify(base)) as Record<string, unknown[]>;
  raw.models.push(freeImage);
  gateway = await startGateway(parseConfig(JSON.stringify(raw)), { env: TASK_ACCOUNTS_ENV });
});
afterAll(async () => {
  await gateway?.close();
});

const images = (model: string) => taskClient(gateway, { kind: "images", model });
const videos = (model: string) => taskClient(gateway, { kind: "videos", model });

describe(":free on the media endpoints", () => {
  it("is 400 free_slug_disabled on a model whose free tier is not enabled, as chat answers it", async () => {
    for (const answer of [await images("simulator/image:free").create({ prompt: "x" }), await videos("simulator/video:free").create({ prompt: "x" })]) {
      expect([answer.status, answer.json.error.code, answer.json.error.param]).toEqual([400, "free_slug_disabled", "model"]);
    }
    // The video body on chat completions is the same create.
    const chat = await videos("simulator/video:free").post("/chat/completions", { model: "simulator/video:free", prompt: "x" });
    expect([chat.status, chat.json.error.code]).toEqual([400, "free_slug_disabled"]);
  });

  it("is refused by name, not 404, on a model whose free tier is enabled; a base id not in the catalogue is still 404", async () => {
    const free = await images("simulator/free-image:free").create({ prompt: "x" });
    expect([free.status, free.json.error.code, free.json.error.param]).toEqual([400, "invalid_parameter", "model"]);
    expect(free.json.error.message).toContain("free tier");
    const unknown = await images("simulator/nothing:free").create({ prompt: "x" });
    expect([unknown.status, unknown.json.error.code]).toEqual([404, "model_not_found"]);
  });

  it("refuses :thinking on a media model by name", async () => {
    const answer = await videos("simulator/video:thinking").create({ prompt: "x" });
    expect([answer.status, answer.json.error.param]).toEqual([400, "model"]);
  });
});

describe("a disabled media model", () => {
  it("names the key variables to set, as chat does", async () => {
    const image = await images("bfl/flux-2-pro").create({ prompt: "x" });
    expect([image.status, image.json.error.code]).toEqual([503, "no_provider_available"]);
    expect(image.json.error.message).toBe("No provider that runs image tasks is available for bfl/flux-2-pro: bfl/flux-2-pro needs BFL_API_KEY to be set.");
    const video = await videos("kling/v2").create({ prompt: "x" });
    expect([video.status, video.json.error.code]).toEqual([503, "no_provider_available"]);
    expect(video.json.error.message).toBe("No provider that runs video tasks is available for kling/v2: kling/v2 needs KLING_ACCESS_KEY and KLING_SECRET_KEY to be set.");
  });
});

describe("insufficient credits on a media create", () => {
  it("suggests lowering the media request's own parameters, not max_tokens", async () => {
    const image = await images("simulator/dear-image").create({ prompt: "x" });
    expect([image.status, image.json.error.code]).toEqual([402, "insufficient_credits"]);
    expect(image.json.error.message).toMatch(/Top up, or lower n or the size\.$/);
    const video = await videos("simulator/dear-video").create({ prompt: "x" });
    expect([video.status, video.json.error.code]).toEqual([402, "insufficient_credits"]);
    expect(video.json.error.message).toMatch(/Top up, or ask for fewer seconds \(seconds or length\)\.$/);
    expect(video.json.error.message).not.toContain("max_tokens");
  });
});
