// The Google Gemini API (generativelanguage.googleapis.com/v1beta):
// POST {base_url}/models/{model}:generateContent for one JSON answer, and
// :streamGenerateContent?alt=sse for Server-Sent Events, key in `x-goog-api-key`.
import type { ProtocolCapabilities } from "../capabilities.ts";
import { DEFAULT_MEDIA_TOKENS, type TokenEstimateProfile } from "../token-estimate.ts";
import type { HttpClient } from "../http-client.ts";
import { checkShape, exchange, inStreamError, parseUpstreamJson, type HttpProtocol } from "../http-exchange.ts";
import type { ProviderAdapter } from "../types.ts";
import { convertRequest } from "./convert-request.ts";
import { countGeminiTokens } from "./count-tokens.ts";
import { keyHeaders, methodUrl } from "./endpoint.ts";
import { googleErrorMessage, mapError } from "./map-error.ts";
import { createResponseTranslator, responseSchema, type GeminiResponse } from "./parse-stream.ts";

const protocol: HttpProtocol<GeminiResponse> = {
  url: (call) => methodUrl(call, call.stream ? "streamGenerateContent?alt=sse" : "generateContent"),
  headers: keyHeaders,
  convertRequest,
  errorOf: mapError,
  parse: parseResponse,
  translator: createResponseTranslator,
};

export const geminiCapabilities: ProtocolCapabilities = {
  // Gemini 2.5 takes a thinkingBudget; Gemini 3 routes map efforts to thinkingLevel.
  reasoning: "budget",
  cacheControl: false,
  mediaOptions: ["image", "audio"],
  passthrough: [],
  parallelToolCalls: false,
  // Grounding with Google Search.
  serverTools: ["web_search"],
};

/** 258 tokens per image tile. */
export const geminiTokenEstimate: TokenEstimateProfile = { media: { ...DEFAULT_MEDIA_TOKENS, image: 258 }, openAiModelIds: false };

export function createGeminiAdapter(http: HttpClient): ProviderAdapter {
  return { capabilities: geminiCapabilities, stream: (call) => exchange(http, call, protocol), countTokens: (call) => countGeminiTokens(http, call) };
}

function parseResponse(data: string): GeminiResponse {
  const json = parseUpstreamJson(data);
  // Google reports a failure inside an open stream as an `error` object.
  const error = googleErrorMessage(json);
  if (error !== undefined) throw inStreamError(error);
  return checkShape(responseSchema, json);
}
