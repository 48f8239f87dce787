// Catalogue messages as the spec's Model object and Provider entry.
import type { Architecture, Model, PriceToShow, ProviderEntry } from "../../../gen/router/v1/catalogue_pb.js";

/** The prices a route sets, under their public names; an empty string is a price it does not set. */
function setPrices(prices: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(prices).filter((entry): entry is [string, string] => !!entry[1]));
}

/** Media prices (per image, per megapixel, per second of video, per media output token) under their public names. */
function mediaPrices(
  prices:
    | Pick<PriceToShow, "imageOutput" | "imageOutputFirstMegapixel" | "imageOutputPerMegapixel" | "imageInputPerMegapixel" | "videoOutputPerSecond" | "completionImage" | "completionAudio" | "completionVideo" | "promptImage">
    | undefined,
) {
  return setPrices({
    image_output: prices?.imageOutput,
    image_output_first_megapixel: prices?.imageOutputFirstMegapixel,
    image_output_per_megapixel: prices?.imageOutputPerMegapixel,
    image_input_per_megapixel: prices?.imageInputPerMegapixel,
    video_output_per_second: prices?.videoOutputPerSecond,
    completion_image: prices?.completionImage,
    completion_audio: prices?.completionAudio,
    completion_video: prices?.completionVideo,
    prompt_image: prices?.promptImage,
  });
}

export function encodeModel(model: Model) {
  const pricing = {
    prompt: model.pricing?.prompt ?? "0",
    completion: model.pricing?.completion ?? "0",
    ...setPrices({
      request: model.pricing?.request,
      input_cache_read: model.pricing?.inputCacheRead,
      input_cache_write: model.pricing?.inputCacheWrite,
      image: model.pricing?.image,
      web_search_per_1000_requests_low: model.pricing?.webSearchPer1000RequestsLow,
      web_search_per_1000_requests_medium: model.pricing?.webSearchPer1000RequestsMedium,
      web_search_per_1000_requests_high: model.pricing?.webSearchPer1000RequestsHigh,
    }),
    ...mediaPrices(model.pricing),
  };
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
      ...setPrices({
        input_cache_read: pricing?.inputCacheRead,
        input_cache_write: pricing?.inputCacheWrite,
        image: pricing?.image,
      }),
      ...mediaPrices(pricing),
      priceToShow: {
        prompt: pricing?.priceToShow?.prompt ?? "0",
        completion: pricing?.priceToShow?.completion ?? "0",
        ...mediaPrices(pricing?.priceToShow),
      },
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
    // Beyond the spec: what the route measured (docs/routing.md, "Sorting"); null before its first answer.
    measured: entry.measured
      ? {
          throughput_tokens_per_second: roundedOrNull(entry.measured.throughputTokensPerSecond),
          first_token_latency_ms: roundedOrNull(entry.measured.firstTokenLatencyMs),
          samples: Number(entry.measured.samples),
        }
      : null,
  };
}

const roundedOrNull = (value: number | undefined) => (value === undefined ? null : Math.round(value * 100) / 100);

function encodeArchitecture(architecture: Architecture | undefined) {
  return {
    modality: architecture?.modality ?? "",
    input_modalities: architecture?.inputModalities ?? [],
    output_modalities: architecture?.outputModalities ?? [],
    tokenizer: architecture?.tokenizer ?? "",
  };
}
