// Google's Interactions API (generativelanguage.googleapis.com/v1beta), the
// successor of generateContent: POST {base_url}/interactions with the key in
// `x-goog-api-key`, answered here always as Server-Sent Events (the body asks
// `stream: true`, whether or not the caller streams: one parser, and a whole
// JSON answer is the fold of the same events; a video, made in the background,
// is polled instead: video.ts), stored upstream when the caller
// keeps the answer (continuation.ts: a continuation sends only the new input,
// and the whole history when the upstream has lost its copy).
import type { ProtocolCapabilities } from "../capabilities.ts";
import { geminiTokenEstimate } from "../gemini/adapter.ts";
import type { HttpClient } from "../http-client.ts";
import { exchange, type HttpProtocol } from "../http-exchange.ts";
import type { TokenEstimateProfile } from "../token-estimate.ts";
import type { ProviderAdapter, UpstreamCall, UpstreamStream } from "../types.ts";
import { isLostInteraction, isStored, withoutUpstream } from "./continuation.ts";
import { convertRequest } from "./convert-request.ts";
import { deleteInteraction } from "./delete-interaction.ts";
import { interactionsUrl, keyHeaders } from "./endpoint.ts";
import { mapError } from "./map-error.ts";
import { createEventTranslator, parseEvent, type InteractionsEvent } from "./parse-stream.ts";
import { videoInteraction } from "./video.ts";

/** The protocol of one call: a stored answer's interaction id is its upstream id. */
const protocolOf = (call: UpstreamCall): HttpProtocol<InteractionsEvent> => ({
  url: ({ provider }: UpstreamCall) => interactionsUrl(provider),
  headers: keyHeaders,
  convertRequest,
  errorOf: mapError,
  parse: parseEvent,
  translator: () => createEventTranslator({ stored: isStored(call.request) }),
});

export const geminiInteractionsCapabilities: ProtocolCapabilities = {
  // Thinking is sized by level only (`thinking_level`, minimal to high): a route maps efforts to levels.
  reasoning: "effort",
  cacheControl: false,
  // An image's aspect ratio (response_format image); a music model's prompt and length, as text;
  // a video model's answer (response_format video, made in the background and polled: video.ts).
  mediaOptions: ["image", "audio", "video"],
  passthrough: [],
  parallelToolCalls: false,
  // Google's own tools (search, code execution) are not asked for yet.
  serverTools: [],
};

/** The same models as generateContent's, counted the same way (258 tokens per image tile). */
export const geminiInteractionsTokenEstimate: TokenEstimateProfile = geminiTokenEstimate;

export function createGeminiInteractionsAdapter(http: HttpClient): ProviderAdapter {
  // Always a stream upstream (the body says so): the exchange reads it as one.
  const send = (call: UpstreamCall) => exchange(http, { ...call, stream: true }, protocolOf(call));
  return {
    capabilities: geminiInteractionsCapabilities,
    // A video is made in the background and polled (video.ts).
    stream: (call) => (call.request.media?.video ? videoInteraction(http, call) : call.request.conversation?.upstream ? continued(call, send) : send(call)),
    forgetStored: deleteInteraction,
  };
}

/**
 * A continuation of an interaction the upstream keeps; when the upstream no
 * longer has it (refused before any answer), sent once more with the whole
 * history, so the caller never sees that failure.
 */
function continued(call: UpstreamCall, send: (call: UpstreamCall) => UpstreamStream): UpstreamStream {
  const first = send(call);
  async function* events() {
    let answered = false;
    try {
      for await (const event of first) {
        answered = true;
        yield event;
      }
    } catch (error) {
      if (answered || !isLostInteraction(error)) throw error;
      yield* send(withoutUpstream(call));
    }
  }
  return first.warnings ? Object.assign(events(), { warnings: first.warnings }) : events();
}
