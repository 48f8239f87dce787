// The catalogue's media models on the bundled default (GET /api/v1/models,
// /modelProviderData, /providerModels): their per-image and per-second prices
// published as decimal strings (also in priceToShow), the public parameters
// their routes' media adapters carry and the catalogue allows (with n's
// maximum and each listed value), no reasoning effort map on a model that does
// not reason; and the other pricing fields the spec names (web search) on the
// model object too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfigFile } from "../../../../core/config/load.ts";
import { createBflMediaAdapter } from "../../../../core/providers/bfl/media.ts";
import { startGateway, type Gateway } from "../../../support/harness.ts";

type Json = Record<string, any>;

let gateway: Gateway;
let models: Map<string, Json>;
let entries: Json[];

beforeAll(async () => {
  gateway = await startGateway(loadConfigFile());
  const listed = (await (await fetch(`${gateway.apiUrl}/models`)).json()) as { data: Json[] };
  models = new Map(listed.data.map((model) => [model.id, model]));
  entries = (await (await fetch(`${gateway.apiUrl}/providerModels`)).json()) as Json[];
});
afterAll(async () => {
  await gateway?.close();
});

async function modelProviderData(id: string): Promise<Json> {
  const response = await fetch(`${gateway.apiUrl}/modelProviderData?id=${encodeURIComponent(id)}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

describe("media prices", () => {
  it.each([
    ["bfl/flux-kontext-max", "image_output", "0.08"],
    ["bfl/flux-pro-1.1", "image_output", "0.04"],
    ["openai/gpt-image-1.5", "image_output", "0.034"],
    ["simulator/image", "image_output", "0.001"],
    ["kling/kling-v2-5-turbo", "video_output_per_second", "0.042"],
    ["google/veo-3.1-generate-001", "video_output_per_second", "0.40"],
    ["google/veo-3.0-fast-generate-001", "video_output_per_second", "0.15"],
    ["simulator/video", "video_output_per_second", "0.001"],
  ])("%s: pricing.%s %s in /models, /modelProviderData (with priceToShow) and /providerModels", async (id, field, price) => {
    expect(models.get(id)!.pricing[field]).toBe(price);
    const detail = await modelProviderData(id);
    expect(detail.pricing[field]).toBe(price);
    const [entry] = detail.provider_data;
    expect(entry.pricing[field]).toBe(price);
    expect(entry.pricing.priceToShow[field]).toBe(price);
    expect(entries.find((e) => e.model_id === id)!.pricing).toEqual(entry.pricing);
  });

  it("a model priced per megapixel (FLUX.2) shows its megapixel prices everywhere", async () => {
    const id = "bfl/flux-2-flex";
    const route = loadConfigFile().models.find((m) => m.id === id)!.providers[0].pricing;
    const detail = await modelProviderData(id);
    const [entry] = detail.provider_data;
    for (const field of ["image_output_first_megapixel", "image_output_per_megapixel", "image_input_per_megapixel"] as const) {
      expect(route[field]).toMatch(/^\d+(\.\d+)?$/);
      expect(models.get(id)!.pricing[field]).toBe(route[field]);
      expect(detail.pricing[field]).toBe(route[field]);
      expect(entry.pricing[field]).toBe(route[field]);
      expect(entry.pricing.priceToShow[field]).toBe(route[field]);
    }
  });

  it("shows no media price where the route sets none", async () => {
    const gpt4o = models.get("openai/gpt-4o")!;
    expect(gpt4o.pricing).not.toHaveProperty("image_output");
    expect(gpt4o.pricing).not.toHaveProperty("video_output_per_second");
    const [entry] = (await modelProviderData("openai/gpt-4o")).provider_data;
    expect(Object.keys(entry.pricing.priceToShow)).toEqual(["prompt", "completion"]);
    // An image model has no per-second price, a video model no per-image one.
    expect(models.get("bfl/flux-pro-1.1")!.pricing).not.toHaveProperty("video_output_per_second");
    expect(models.get("kling/kling-v2-5-turbo")!.pricing).not.toHaveProperty("image_output");
  });

  it("publishes the route's web search prices on the model object as on its provider entry", async () => {
    const id = "anthropic/claude-3-7-sonnet-20250219";
    const route = loadConfigFile().models.find((m) => m.id === id)!.providers[0].pricing;
    expect(route.web_search_per_1000_requests_low).toBeDefined();
    const [entry] = (await modelProviderData(id)).provider_data;
    for (const size of ["low", "medium", "high"] as const) {
      const field = `web_search_per_1000_requests_${size}` as const;
      expect(models.get(id)!.pricing[field]).toBe(route[field]);
      expect(entry.pricing[field]).toBe(route[field]);
    }
  });

  it("keeps every price a decimal string", () => {
    for (const model of models.values()) for (const value of Object.values(model.pricing)) expect(value).toMatch(/^\d+(\.\d+)?$/);
    for (const entry of entries) {
      const { priceToShow, ...prices } = entry.pricing;
      for (const value of [...Object.values(prices), ...Object.values(priceToShow)]) expect(value).toMatch(/^\d+(\.\d+)?$/);
    }
  });
});

describe("media parameters", () => {
  it("an asynchronous image model (BFL): n up to 10 (one image a job, fanned out), the listed output formats, seed, url results; no size where the catalogue lists none", async () => {
    const detail = await modelProviderData("bfl/flux-kontext-pro");
    // Its details list no size (size: []): every other parameter BFL's adapter carries is listed.
    expect(loadConfigFile().models.find((m) => m.id === "bfl/flux-kontext-pro")!.supported_params_details.size).toEqual([]);
    const carried = createBflMediaAdapter().imageParameters.filter((name) => name !== "size");
    expect(detail.supported_parameters).toEqual(["n", ...carried, "response_format"]);
    expect(detail.supported_params_details.n).toEqual({ minimum: 1, maximum: 10 });
    const [entry] = detail.provider_data;
    expect(entry.supported_parameters).toEqual(detail.supported_parameters);
    expect(Object.keys(entry.supported_parameters_v2)).toEqual(detail.supported_parameters);
    expect(entry.supported_parameters_v2).toMatchObject({
      n: { type: "integer", minimum: 1, maximum: 10 },
      output_format: { type: "string", enum: ["jpeg", "png"] },
      seed: { type: "integer" },
      response_format: { type: "string", enum: ["url"] },
    });
    // FLUX1.1 [pro] takes a size (no empty list in its details).
    expect(models.get("bfl/flux-pro-1.1")!.supported_parameters).toContain("size");
  });

  it("a synchronous image model (OpenAI's): n up to 10, the one priced size and quality, b64_json results", async () => {
    const [entry] = (await modelProviderData("openai/gpt-image-1.5")).provider_data;
    expect(entry.supported_parameters_v2).toMatchObject({
      n: { type: "integer", minimum: 1, maximum: 10 },
      size: { type: "string", enum: ["1024x1024"] },
      quality: { type: "string", enum: ["medium"] },
      response_format: { type: "string", enum: ["url", "b64_json"] },
    });
    expect(entry.supported_parameters).not.toContain("seed");
  });

  it("video models: what each protocol carries, with the catalogue's values", async () => {
    expect(models.get("simulator/video")!.supported_parameters).toEqual(["image", "seconds", "size", "seed"]);
    expect(models.get("google/veo-3.1-generate-001")!.supported_parameters).toEqual(["image", "length", "resolution", "aspectRatio", "seed", "generateAudio"]);
    const [kling] = (await modelProviderData("kling/kling-v2-5-turbo")).provider_data;
    expect(kling.supported_parameters_v2).toEqual({
      image: { type: "string", format: "uri" },
      length: { type: "integer", enum: [5, 10] },
      aspectRatio: { type: "string", enum: ["16:9", "9:16", "1:1"] },
      mode: { type: "string", enum: ["std"] },
    });
    // Kling 2.5 Turbo takes no sound: its generateAudio: [] hides the parameter Kling's protocol carries.
    expect(models.get("kling/kling-v2-5-turbo")!.supported_parameters).not.toContain("generateAudio");
  });

  it("text models keep their own lists and an empty supported_parameters_v2", async () => {
    const [entry] = (await modelProviderData("openai/gpt-4o")).provider_data;
    expect(entry.supported_parameters_v2).toEqual({});
    expect(entry.supported_parameters).not.toContain("n");
    expect(models.get("openai/gpt-4o")!.supported_params_details).not.toHaveProperty("n");
  });

  it("shows a reasoning effort map only on routes that reason", async () => {
    for (const id of ["simulator/image", "simulator/video", "simulator/audio"]) {
      const [entry] = (await modelProviderData(id)).provider_data;
      expect(entry.extra_params).toMatchObject({ supportsReasoning: false, reasoningEffortMap: {} });
    }
    const [reasoning] = (await modelProviderData("simulator/reasoning")).provider_data;
    expect(reasoning.extra_params).toMatchObject({ supportsReasoning: true, reasoningEffortMap: { low: "low", medium: "medium", high: "high" } });
  });
});
