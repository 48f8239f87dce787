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
import { supportedParametersOf, type CatalogueModel, type ProviderRoute } from "./catalogue.ts";

export function modelToProto(model: CatalogueModel): Model {
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
    },
    topProvider: {
      contextLength: top.contextLength,
      maxCompletionTokens: top.maxCompletionTokens,
      isModerated: config.is_moderated,
    },
    supportedParameters: aggregateSupportedParameters(model),
    supportedParamsDetails: config.supported_params_details as Model["supportedParamsDetails"],
    isActive: model.routes.some((r) => r.enabled),
    creator: config.creator,
  });
}

export function providerEntryToProto(model: CatalogueModel, route: ProviderRoute): ProviderEntry {
  const { pricing } = route.route;
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
      priceToShow: { prompt: pricing.prompt, completion: pricing.completion },
      inputCacheRead: pricing.input_cache_read ?? "",
      inputCacheWrite: pricing.input_cache_write ?? "",
    },
    supportedParameters: supportedParametersOf(route),
    supportedParametersV2: {},
    isActive: route.enabled,
    extraParams: {
      supportsReasoning: supportedParametersOf(route).includes("reasoning"),
      supportWebSearch: route.route.supports_web_search,
      maxCompletionTokens: route.maxCompletionTokens,
      reasoningEffortMap: route.route.reasoning_effort_map ?? {},
    },
    defaultExtraParamsValues: {},
    contextLength: route.contextLength,
    freeTier: route.route.free?.enabled ?? false,
    freeDailyQuota: route.route.free?.enabled ? route.route.free.daily_quota : 0,
  });
}

/** A model supports a parameter when any of its providers does. */
function aggregateSupportedParameters(model: CatalogueModel): string[] {
  const all = new Set(model.config.supported_parameters);
  for (const route of model.routes) for (const p of supportedParametersOf(route)) all.add(p);
  return [...all];
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

