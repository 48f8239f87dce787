// The core's CatalogueService (ListModels, GetModel, ListProviderEntries) on
// the bundled default: media prices in ModelPricing, ProviderPricing and
// PriceToShow (proto JSON names imageOutput, videoOutputPerSecond), a media
// model's parameters from its route's media adapter, no effort map where the
// route does not reason (even where one is configured).
import { create, toJson } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { GetModelRequestSchema, ListModelsRequestSchema, ListModelsResponseSchema, type GetModelResponse, type ListModelsResponse } from "../../../gen/router/v1/catalogue_pb.js";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { mediaParametersOf, mostImagesPerRequest } from "../../../core/catalogue/media-parameters.ts";
import { modelToProto, providerEntryToProto } from "../../../core/catalogue/to-proto.ts";
import { loadConfigFile, parseConfig } from "../../../core/config/load.ts";
import { createMediaAdapters } from "../../../core/providers/registry.ts";
import { createCatalogueService } from "../../../core/services/catalogue.ts";

const catalogue = createCatalogue(loadConfigFile(), {});
const service = createCatalogueService(catalogue, createMediaAdapters());
// The service answers from memory with whole messages; it reads no context.
const context = {} as HandlerContext;
const listModels = async () => (await service.listModels(create(ListModelsRequestSchema), context)) as ListModelsResponse;
const getModel = async (id: string) => (await service.getModel(create(GetModelRequestSchema, { id }), context)) as GetModelResponse;

describe("CatalogueService on media models", () => {
  it("ListModels carries the per-image and per-second prices, in the proto's JSON too", async () => {
    const answer = await listModels();
    const byId = new Map(answer.models.map((model) => [model.id, model]));
    expect(byId.get("bfl/flux-kontext-max")!.pricing).toMatchObject({ imageOutput: "0.08", videoOutputPerSecond: "" });
    expect(byId.get("kling/kling-v2-5-turbo")!.pricing).toMatchObject({ videoOutputPerSecond: "0.042", imageOutput: "" });
    const json = toJson(ListModelsResponseSchema, answer) as { models: { id: string; pricing: Record<string, string> }[] };
    expect(json.models.find((model) => model.id === "openai/gpt-image-1.5")!.pricing.imageOutput).toBe("0.034");
    expect(json.models.find((model) => model.id === "google/veo-3.1-fast-generate-001")!.pricing.videoOutputPerSecond).toBe("0.15");
  });

  it("GetModel: the provider entry's pricing and priceToShow, its parameters and their schemas", async () => {
    const { model, providerData } = await getModel("simulator/video");
    expect(model!.supportedParameters).toEqual(["image", "seconds", "size", "seed"]);
    const [entry] = providerData;
    expect(entry.pricing).toMatchObject({ videoOutputPerSecond: "0.001", priceToShow: { prompt: "0.0000001", completion: "0.0000002", videoOutputPerSecond: "0.001", imageOutput: "" } });
    expect(entry.supportedParameters).toEqual(model!.supportedParameters);
    expect(entry.supportedParametersV2).toEqual({
      image: { type: "string", format: "uri" },
      seconds: { type: "string", enum: ["4", "8", "12"] },
      size: { type: "string", enum: ["720x1280", "1280x720"] },
      seed: { type: "integer" },
    });
    expect(entry.extraParams).toMatchObject({ supportsReasoning: false, reasoningEffortMap: {} });
  });

  it("shows no effort map on a route that does not reason, even one configured with a map", () => {
    const config = loadConfigFile();
    const video = config.models.find((model) => model.id === "simulator/video")!;
    video.providers[0].reasoning_effort_map = { low: "low", high: "high" };
    const model = createCatalogue(config, {}).get("simulator/video")!;
    expect(providerEntryToProto(model, model.routes[0], createMediaAdapters()).extraParams).toMatchObject({ supportsReasoning: false, reasoningEffortMap: {} });
    const reasoning = createCatalogue(config, {}).get("simulator/reasoning")!;
    expect(providerEntryToProto(reasoning, reasoning.routes[0], createMediaAdapters()).extraParams?.reasoningEffortMap).toEqual({ low: "low", medium: "medium", high: "high" });
  });
});

describe("mediaParametersOf", () => {
  const config = (outputModalities: string[], details: Record<string, unknown>, inputModalities = ["text"]) =>
    parseConfig(
      JSON.stringify({
        providers: [{ id: "simulator", label: "Simulator", protocol: "simulator" }],
        models: [
          {
            id: "test/media",
            name: "media",
            created: 0,
            creator: "test",
            context_length: 1000,
            max_completion_tokens: 1,
            input_modalities: inputModalities,
            output_modalities: outputModalities,
            supported_parameters: [],
            supported_params_details: details,
            providers: [{ provider: "simulator", provider_model_id: "image", pricing: { prompt: "0", completion: "0" } }],
          },
        ],
      }),
    );
  const parametersOf = (outputModalities: string[], details: Record<string, unknown> = {}) => {
    const [route] = createCatalogue(config(outputModalities, details), {}).get("test/media")!.routes;
    return Object.fromEntries(mediaParametersOf(route, createMediaAdapters()));
  };

  it("lists an image model's parameters on the simulator: n up to the spec's 10 (one image a job, fanned out), size, seed, url results", () => {
    expect(parametersOf(["image"])).toEqual({
      n: { type: "integer", minimum: 1, maximum: 10 },
      size: { type: "string" },
      seed: { type: "integer" },
      response_format: { type: "string", enum: ["url"] },
    });
  });

  it("leaves out a parameter whose allowed list is empty, and gives a listed one its values", () => {
    expect(Object.keys(parametersOf(["image"], { size: [] }))).toEqual(["n", "seed", "response_format"]);
    expect(parametersOf(["image"], { size: ["256x256"] }).size).toEqual({ type: "string", enum: ["256x256"] });
  });

  it("lists nothing for a text model, and only what the model makes", () => {
    expect(parametersOf(["text"])).toEqual({});
    expect(Object.keys(parametersOf(["video"]))).toEqual(["image", "seconds", "size", "seed"]);
  });

  /** The simulator as a protocol that carries input images and makes four images a job. */
  const imaging = () => {
    const adapters = createMediaAdapters();
    return { ...adapters, simulator: { ...adapters.simulator!, maxImagesPerJob: 4, imageParameters: ["size", "image"] } };
  };

  it("lists image (input images) only for a model whose input_modalities has image, as the task endpoint takes them", () => {
    const listed = (inputModalities: string[]) => {
      const [route] = createCatalogue(config(["image"], {}, inputModalities), {}).get("test/media")!.routes;
      return [...mediaParametersOf(route, imaging()).keys()];
    };
    expect(listed(["text"])).toEqual(["n", "size", "response_format"]);
    expect(listed(["text", "image"])).toEqual(["n", "size", "image", "response_format"]);
  });

  it("hides a video parameter whose details list is empty (seed: [], generateAudio: [])", () => {
    expect(Object.keys(parametersOf(["video"], { seed: [] }))).toEqual(["image", "seconds", "size"]);
  });

  it("narrows n to the configured supported_params_details.n.maximum, published and applied alike", () => {
    const adapters = imaging();
    const model = createCatalogue(config(["image"], { n: { maximum: 2 } }), {}).get("test/media")!;
    expect(mediaParametersOf(model.routes[0], adapters).get("n")).toEqual({ type: "integer", minimum: 1, maximum: 2 });
    expect(mostImagesPerRequest(adapters.simulator, model.config.supported_params_details)).toBe(2);
    expect(modelToProto(model, adapters).supportedParamsDetails).toMatchObject({ n: { minimum: 1, maximum: 2 } });
    // A configured maximum above what one job of the protocol makes is published: the rest is fanned out into more jobs.
    const generous = createCatalogue(config(["image"], { n: { maximum: 9 } }), {}).get("test/media")!;
    expect(modelToProto(generous, adapters).supportedParamsDetails).toMatchObject({ n: { maximum: 9 } });
    expect(mostImagesPerRequest(adapters.simulator, generous.config.supported_params_details)).toBe(9);
    // Never above the spec's 10.
    const greedy = createCatalogue(config(["image"], { n: { maximum: 50 } }), {}).get("test/media")!;
    expect(mostImagesPerRequest(adapters.simulator, greedy.config.supported_params_details)).toBe(10);
  });

  it("lists nothing for a route without a media adapter", () => {
    const [route] = createCatalogue(config(["image"], {}), {}).get("test/media")!.routes;
    expect(mediaParametersOf(route, {}).size).toBe(0);
  });
});
