// Catalogue messages as the spec's Model object and Provider entry.
import type { Architecture, Model, ProviderEntry } from "../../../gen/router/v1/catalogue_pb.js";

export function encodeModel(model: Model) {
  const pricing: Record<string, string> = { prompt: model.pricing?.prompt ?? "0", completion: model.pricing?.completion ?? "0" };
  for (const [key, value] of Object.entries({
    request: model.pricing?.request,
    input_cache_read: model.pricing?.inputCacheRead,
    input_cache_write: model.pricing?.inputCacheWrite,
    image: model.pricing?.image,
  })) {
    if (value) pricing[key] = value;
  }
  return {
    id: model.id,
    name: model.name,
    description: model.description,
    created: Number(model.created),
    context_length: model.contextLength,
    architecture: encodeArchitecture(model.architecture),
    pricing,
    top_provider: {
      context_length: model.topProvider?.contextLength ?? model.contextLength,
      max_completion_tokens: model.topProvider?.maxCompletionTokens ?? 0,
      is_moderated: model.topProvider?.isModerated ?? false,
    },
    supported_parameters: model.supportedParameters,
    supported_params_details: model.supportedParamsDetails ?? {},
    is_active: model.isActive,
    creator: model.creator,
  };
}

export function encodeProviderEntry(entry: ProviderEntry) {
  const pricing = entry.pricing;
  return {
    provider_id: entry.providerId,
    provider_label: entry.providerLabel,
    model_id: entry.modelId,
    model_name: entry.modelName,
    provider_model_id: entry.providerModelId,
    architecture: encodeArchitecture(entry.architecture),
    pricing: {
      prompt: pricing?.prompt ?? "0",
      completion: pricing?.completion ?? "0",
      request: pricing?.request ?? "0",
      web_search_per_1000_requests_low: pricing?.webSearchPer1000RequestsLow ?? "0",
      web_search_per_1000_requests_medium: pricing?.webSearchPer1000RequestsMedium ?? "0",
      web_search_per_1000_requests_high: pricing?.webSearchPer1000RequestsHigh ?? "0",
      ...(pricing?.inputCacheRead ? { input_cache_read: pricing.inputCacheRead } : {}),
      ...(pricing?.inputCacheWrite ? { input_cache_write: pricing.inputCacheWrite } : {}),
      priceToShow: { prompt: pricing?.priceToShow?.prompt ?? "0", completion: pricing?.priceToShow?.completion ?? "0" },
    },
    supported_parameters: entry.supportedParameters,
    supported_parameters_v2: entry.supportedParametersV2 ?? {},
    is_active: entry.isActive,
    context_length: entry.contextLength,
    extra_params: {
      supportsReasoning: entry.extraParams?.supportsReasoning ?? false,
      supportWebSearch: entry.extraParams?.supportWebSearch ?? false,
      max_completion_tokens: entry.extraParams?.maxCompletionTokens ?? 0,
      reasoningEffortMap: entry.extraParams?.reasoningEffortMap ?? {},
    },
    default_extra_params_values: entry.defaultExtraParamsValues ?? {},
    free_tier: entry.freeTier ? { enabled: true, daily_quota: entry.freeDailyQuota } : { enabled: false },
  };
}

function encodeArchitecture(architecture: Architecture | undefined) {
  return {
    modality: architecture?.modality ?? "",
    input_modalities: architecture?.inputModalities ?? [],
    output_modalities: architecture?.outputModalities ?? [],
    tokenizer: architecture?.tokenizer ?? "",
  };
}
