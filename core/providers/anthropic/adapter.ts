// The Anthropic Messages API: POST {base_url}/messages with `x-api-key` and
// `anthropic-version`, answered by one JSON message or by its SSE event stream.
import { PublicFormat } from "../../../gen/router/v1/inference_pb.js";
import type { ProtocolCapabilities } from "../capabilities.ts";
import { DEFAULT_MEDIA_TOKENS, type TokenEstimateProfile } from "../token-estimate.ts";
import type { HttpClient } from "../http-client.ts";
import { checkShape, exchange, inStreamError, parseUpstreamJson, type HttpProtocol } from "../http-exchange.ts";
import type { ProviderAdapter, UpstreamCall } from "../types.ts";
import { convertRequest } from "./convert-request.ts";
import { countAnthropicTokens } from "./count-tokens.ts";
import { anthropicHeaders, messagesUrl } from "./endpoint.ts";
import { anthropicErrorMessage, mapError } from "./map-error.ts";
import { createEventTranslator, eventSchema, messageAsEvent, messageSchema, type AnthropicEvent } from "./parse-stream.ts";

const protocol: HttpProtocol<AnthropicEvent> = {
  url: ({ provider }: UpstreamCall) => messagesUrl(provider),
  headers: anthropicHeaders,
  convertRequest,
  errorOf: mapError,
  parse,
  translator: createEventTranslator,
};

export const anthropicCapabilities: ProtocolCapabilities = {
  reasoning: "budget",
  cacheControl: true,
  // Anthropic's rate for hour-long cache writes is twice the prompt price.
  oneHourCacheWritePriceMultiple: 2,
  mediaOptions: [],
  passthrough: ["user"],
  parallelToolCalls: true,
  nativeFormat: PublicFormat.MESSAGES,
  serverTools: ["web_search"],
};

/** An image: about (width x height) / 750 tokens, some 1600 at its 1.15-megapixel ceiling. */
export const anthropicTokenEstimate: TokenEstimateProfile = { media: { ...DEFAULT_MEDIA_TOKENS, image: 1600 }, openAiModelIds: false };

export function createAnthropicAdapter(http: HttpClient): ProviderAdapter {
  return {
    capabilities: anthropicCapabilities,
    stream: (call) => exchange(http, call, protocol),
    countTokens: (call) => countAnthropicTokens(http, call),
  };
}

/** A stream event (named by `event`), or the whole message of a JSON answer. */
function parse(data: string, event: string | undefined): AnthropicEvent | undefined {
  const json = parseUpstreamJson(data);
  // `event: error` mid-stream, e.g. overloaded_error.
  if ((json as { type?: unknown }).type === "error") throw inStreamError(anthropicErrorMessage(json) ?? "upstream error");
  if (event === undefined) return messageAsEvent(checkShape(messageSchema, json));
  // Event types added after this adapter was written are skipped, as Anthropic asks clients to.
  if (!KNOWN_EVENTS.has(String((json as { type?: unknown }).type))) return undefined;
  return checkShape(eventSchema, json);
}

const KNOWN_EVENTS = new Set(["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop", "ping"]);
