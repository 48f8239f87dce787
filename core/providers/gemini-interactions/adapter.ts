// Google's Interactions API (generativelanguage.googleapis.com/v1beta), the
// successor of generateContent: POST {base_url}/interactions with the key in
// `x-goog-api-key`, answered here always as Server-Sent Events (the body asks
// `stream: true`, whether or not the caller streams: one parser, and a whole
// JSON answer is the fold of the same events) and never stored upstream.
import type { ProtocolCapabilities } from "../capabilities.ts";
import { geminiTokenEstimate } from "../gemini/adapter.ts";
import type { HttpClient } from "../http-client.ts";
import { checkShape, exchange, inStreamError, parseUpstreamJson, type HttpProtocol } from "../http-exchange.ts";
import type { TokenEstimateProfile } from "../token-estimate.ts";
import type { ProviderAdapter, UpstreamCall } from "../types.ts";
import { convertRequest } from "./convert-request.ts";
import { interactionsUrl, keyHeaders } from "./endpoint.ts";
import { googleErrorMessage, mapError, streamErrorMessage } from "./map-error.ts";
import { createEventTranslator, eventSchema, interactionAsEvent, interactionSchema, KNOWN_EVENTS, type InteractionsEvent } from "./parse-stream.ts";

const protocol: HttpProtocol<InteractionsEvent> = {
  url: ({ provider }: UpstreamCall) => interactionsUrl(provider),
  headers: keyHeaders,
  convertRequest,
  errorOf: mapError,
  parse,
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

/** One event of the stream (`[DONE]` ends it), or a whole Interaction. */
function parse(data: string): InteractionsEvent | undefined {
  if (data === "[DONE]") return undefined;
  const json = parseUpstreamJson(data) as { event_type?: unknown; error?: { code?: unknown; message?: unknown } };
  // A failure inside the open stream.
  if (json?.event_type === "error") throw inStreamError(streamErrorMessage(json.error));
  if (json?.event_type === undefined) {
    // Google's error body, when a failure is reported in place of the answer.
    const error = googleErrorMessage(json);
    if (error !== undefined) throw inStreamError(error);
    return interactionAsEvent(checkShape(interactionSchema, json));
  }
  // Event types added after this adapter was written are skipped.
  if (!KNOWN_EVENTS.has(String(json.event_type))) return undefined;
  return checkShape(eventSchema, json);
}
