// Google's Interactions API (generativelanguage.googleapis.com/v1beta), the
// successor of generateContent: POST {base_url}/interactions with the key in
// `x-goog-api-key`, answered here always as Server-Sent Events (the body asks
// `stream: true`, whether or not the caller streams: one parser, and a whole
// JSON answer is the fold of the same events) and never stored upstream.
import type { ProtocolCapabilities } from "../capabilities.ts";
import { geminiTokenEstimate } from "../gemini/adapter.ts";
import type { HttpClient } from "../http-client.ts";
import { exchange, type HttpProtocol } from "../http-exchange.ts";
import type { TokenEstimateProfile } from "../token-estimate.ts";
import type { ProviderAdapter, UpstreamCall } from "../types.ts";
import { convertRequest } from "./convert-request.ts";
import { interactionsUrl, keyHeaders } from "./endpoint.ts";
import { mapError } from "./map-error.ts";
import { createEventTranslator, parseEvent, type InteractionsEvent } from "./parse-stream.ts";

const protocol: HttpProtocol<InteractionsEvent> = {
  url: ({ provider }: UpstreamCall) => interactionsUrl(provider),
  headers: keyHeaders,
  convertRequest,
  errorOf: mapError,
  parse: parseEvent,
  translator: createEventTranslator,
};

export const geminiInteractionsCapabilities: ProtocolCapabilities = {
  // Thinking is sized by level only (`thinking_level`, minimal to high): a route maps efforts to levels.
  reasoning: "effort",
  cacheControl: false,
  // An image's aspect ratio (response_format image); a music model's prompt and length, as text.
  mediaOptions: ["image", "audio"],
  passthrough: [],
  parallelToolCalls: false,
  // Google's own tools (search, code execution) are not asked for yet.
  serverTools: [],
};

/** The same models as generateContent's, counted the same way (258 tokens per image tile). */
export const geminiInteractionsTokenEstimate: TokenEstimateProfile = geminiTokenEstimate;

export function createGeminiInteractionsAdapter(http: HttpClient): ProviderAdapter {
  // Always a stream upstream (the body says so): the exchange reads it as one.
  return { capabilities: geminiInteractionsCapabilities, stream: (call) => exchange(http, { ...call, stream: true }, protocol) };
}
