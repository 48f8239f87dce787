// The OpenAI chat-completions protocol, spoken by OpenAI and by every vendor
// configured as `openai-compatible` (their differences are quirk flags).
import type { ProtocolCapabilities } from "../capabilities.ts";
import { DEFAULT_MEDIA_TOKENS, type TokenEstimateProfile } from "../token-estimate.ts";
import type { HttpClient } from "../http-client.ts";
import { checkShape, exchange, inStreamError, parseUpstreamJson, type HttpProtocol } from "../http-exchange.ts";
import type { ProviderAdapter } from "../types.ts";
import { convertRequest } from "./convert-request.ts";
import { bearerHeaders, chatCompletionsUrl } from "./endpoint.ts";
import { mapError } from "./map-error.ts";
import { chunkSchema, createChunkTranslator, isPlainChunk, type OpenAiChunk } from "./parse-stream.ts";

export const openAiCompatibleCapabilities: ProtocolCapabilities = {
  reasoning: "effort",
  cacheControl: false,
  mediaOptions: [],
  passthrough: ["user"],
  parallelToolCalls: true,
  serverTools: [],
};

/** Its model ids are OpenAI's: the tokenizer picks a known model's own encoding. */
export const openAiCompatibleTokenEstimate: TokenEstimateProfile = { media: DEFAULT_MEDIA_TOKENS, openAiModelIds: true };

export function createOpenAiCompatibleAdapter(http: HttpClient): ProviderAdapter {
  const protocol: HttpProtocol<OpenAiChunk> = {
    url: ({ provider }) => chatCompletionsUrl(provider),
    headers: bearerHeaders,
    convertRequest,
    errorOf: mapError,
    parse: (data) => (data === "[DONE]" ? undefined : parseChunk(data)),
    translator: createChunkTranslator,
  };
  return { capabilities: openAiCompatibleCapabilities, stream: (call) => exchange(http, call, protocol) };
}

function parseChunk(data: string): OpenAiChunk {
  const json = parseUpstreamJson(data);
  // Vendors report failures inside an open stream as an `error` object.
  const error = (json as { error?: { message?: string } }).error;
  if (error) throw inStreamError(error.message ?? "upstream error");
  // Most chunks are a plain delta: checked by hand, the schema takes the rest.
  return isPlainChunk(json) ? json : checkShape(chunkSchema, json);
}
