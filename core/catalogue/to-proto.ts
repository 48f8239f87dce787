// Builds the catalogue service's messages (the spec's Model object and Provider
// entry) from the in-memory catalogue.
import { create } from "@bufbuild/protobuf";
import {
  ArchitectureSchema,
  ModelSchema,
  ProviderEntrySchema,
  type Architecture,
  type Model,
  type ProviderEntry,
} from "../../gen/router/v1/catalogue_pb.js";
import type { ModelProviderConfig } from "../config/schema.ts";
import { supportedParametersOf, type CatalogueModel, type ProviderRoute } from "./catalogue.ts";
import { mediaParametersOf, type MediaAdapters } from "./media-parameters.ts";

type Pricing = ModelProviderConfig["pricing"];

export function modelToProto(model: CatalogueModel, mediaAdapters: MediaAdapters): Model {
  const { config } = model;
  const top = model.routes.find((r) => r.enabled) ?? model.routes[0];
  return create(ModelSchema, {
    id: config.id,
    name: config.name,
    description: config.description,
    created: BigInt(config.created),
    contextLength: config.context_length,
    architecture: architectureOf(model),
    pricing: {
      prompt: top.route.pricing.prompt,
      completion: top.route.pricing.completion,
      request: top.route.pricing.request,
      inputCacheRead: top.route.pricing.input_cache_read ?? "",
      inputCacheWrite: top.route.pricing.input_cache_write ?? "",
      image: top.route.pricing.image ?? "",
      ...mediaPrices(top.route.pricing),
      webSearchPer1000RequestsLow: top.route.pricing.web_search_per_1000_requests_low ?? "",
      webSearchPer1000RequestsMedium: top.route.pricing.web_search_per_1000_requests_medium ?? "",
      webSearchPer1000RequestsHigh: top.route.pricing.web_search_per_1000_requests_high ?? "",
    },
    topProvider: {
      contextLength: top.contextLength,
      maxCompletionTokens: top.maxCompletionTokens,
      isModerated: config.is_moderated,
    },
    supportedParameters: aggregateSupportedParameters(model, mediaAdapters),
    supportedParamsDetails: parameterDetails(model, mediaAdapters) as Model["supportedParamsDetails"],
    isActive: model.routes.some((r) => r.enabled),
    creator: config.creator,
  });
}

export function providerEntryToProto(model: CatalogueModel, route: ProviderRoute, mediaAdapters: MediaAdapters): ProviderEntry {
  const { pricing } = route.route;
  const media = mediaParametersOf(route, mediaAdapters);
  const supportsReasoning = supportedParametersOf(route).includes("reasoning");
  return create(ProviderEntrySchema, {
    providerId: route.provider.id,
    providerLabel: route.provider.label,
    modelId: model.config.id,
    modelName: model.config.name,
    providerModelId: route.route.provider_model_id,
    architecture: architectureOf(model),
    pricing: {
      prompt: pricing.prompt,
      completion: pricing.completion,
      request: pricing.request,
      webSearchPer1000RequestsLow: pricing.web_search_per_1000_requests_low ?? "0",
      webSearchPer1000RequestsMedium: pricing.web_search_per_1000_requests_medium ?? "0",
      webSearchPer1000RequestsHigh: pricing.web_search_per_1000_requests_high ?? "0",
      priceToShow: { prompt: pricing.prompt, completion: pricing.completion, ...mediaPrices(pricing) },
      inputCacheRead: pricing.input_cache_read ?? "",
      inputCacheWrite: pricing.input_cache_write ?? "",
      image: pricing.image ?? "",
      ...mediaPrices(pricing),
    },
    supportedParameters: [...new Set([...supportedParametersOf(route), ...media.keys()])],
    supportedParametersV2: Object.fromEntries(media) as ProviderEntry["supportedParametersV2"],
    isActive: route.enabled,
    extraParams: {
      supportsReasoning,
      supportWebSearch: route.route.supports_web_search,
      maxCompletionTokens: route.maxCompletionTokens,
      // A map is how an effort reaches a model that reasons; on any other it is never used, so not shown.
      reasoningEffortMap: supportsReasoning ? (route.route.reasoning_effort_map ?? {}) : {},
    },
    defaultExtraParamsValues: {},
    contextLength: route.contextLength,
    freeTier: route.route.free?.enabled ?? false,
    freeDailyQuota: route.route.free?.enabled ? route.route.free.daily_quota : 0,
  });
}

/** Per image, per megapixel, per second of video or per media output token: media prices, empty where the route sets none. */
const mediaPrices = (pricing: Pricing) => ({
  imageOutput: pricing.image_output ?? "",
  imageOutputFirstMegapixel: pricing.image_output_first_megapixel ?? "",
  imageOutputPerMegapixel: pricing.image_output_per_megapixel ?? "",
  imageInputPerMegapixel: pricing.image_input_per_megapixel ?? "",
  videoOutputPerSecond: pricing.video_output_per_second ?? "",
  completionImage: pricing.completion_image ?? "",
  completionAudio: pricing.completion_audio ?? "",
  completionVideo: pricing.completion_video ?? "",
  promptImage: pricing.prompt_image ?? "",
});

/** A model supports a parameter when any of its providers does (a media model: any of its routes' media adapters). */
function aggregateSupportedParameters(model: CatalogueModel, mediaAdapters: MediaAdapters): string[] {
  const all = new Set(model.config.supported_parameters);
  for (const route of model.routes) {
    for (const p of supportedParametersOf(route)) all.add(p);
    for (const p of mediaParametersOf(route, mediaAdapters).keys()) all.add(p);
  }
  return [...all];
}

/**
 * The configured details, with an image model's range of `n` as the task
 * endpoint applies it: the smallest of its routes' maxima (each the spec's,
 * its protocol's and the configured maximum's least), which every route serves.
 */
function parameterDetails(model: CatalogueModel, mediaAdapters: MediaAdapters): Record<string, unknown> {
  const details = model.config.supported_params_details;
  const maxima = model.routes.flatMap((route) => {
    const n = mediaParametersOf(route, mediaAdapters).get("n");
    return n ? [n.maximum as number] : [];
  });
  if (maxima.length === 0) return details;
  const configured = details.n && typeof details.n === "object" ? (details.n as Record<string, unknown>) : {};
  return { ...details, n: { minimum: 1, ...configured, maximum: Math.min(...maxima) } };
}

function architectureOf(model: CatalogueModel): Architecture {
  const { input_modalities: input, output_modalities: output, tokenizer } = model.config;
  return create(ArchitectureSchema, {
    modality: `${input.join("+")}->${output.join("+")}`,
    inputModalities: input,
    outputModalities: output,
    tokenizer,
  });
}

