// What an upstream protocol can carry, as data. Each adapter declares its
// protocol's descriptor; the catalogue attaches it to every route of a provider
// speaking that protocol, and routing reads it there. Shared code never asks a
// protocol's name: it asks its descriptor.

import type { PublicFormat } from "../../gen/router/v1/inference_pb.js";
import type { ProviderConfig } from "./provider-config.ts";

/** The chat media options, by the output modality they steer. */
export type MediaOutput = "image" | "audio" | "video";

export interface ProtocolCapabilities {
  /**
   * How the protocol sizes thinking on a route whose `reasoning_effort_map`
   * is empty (a route with a map always gets one of the map's levels):
   * - `budget`: a token budget (Anthropic `budget_tokens`, Gemini 2.5
   *   `thinkingBudget`); routing turns an effort into a share of the completion limit;
   * - `effort`: effort levels only (OpenAI `reasoning_effort`); without a map
   *   the model reasons at its fixed effort, and routing says so in a warning.
   */
  readonly reasoning: "budget" | "effort";
  /**
   * Whether explicit prompt-caching breakpoints (`cache_control` on content
   * parts) reach the upstream. Elsewhere the provider caches by itself and
   * routing warns that the breakpoints were not sent.
   */
  readonly cacheControl: boolean;
  /**
   * The price of a cache write kept an hour, as a whole multiple of the prompt
   * price, used when the route's pricing names no `input_cache_write_1h`.
   * Set only by protocols that report hour-long writes (Anthropic: 2x); unset,
   * they are priced as other cache writes.
   */
  readonly oneHourCacheWritePriceMultiple?: number;
  /**
   * The output modalities whose chat media options the protocol carries:
   * `image` takes `aspectRatio`, `audio` takes the audio `prompt` and `duration`.
   * Routing drops them, with a warning, on a route whose protocol does not
   * carry them or whose model does not generate that modality. `video` is
   * the answer itself (`MediaOptions.video`): a route that cannot make one is
   * skipped, as for a missing capability.
   */
  readonly mediaOptions: readonly MediaOutput[];
  /**
   * The pass-through fields (`GenerateRequest.passthrough`, such as OpenAI's
   * `user`) the protocol sends on. Routing drops the others, with a warning.
   */
  readonly passthrough: readonly string[];
  /**
   * Whether the protocol can limit the model to one tool call per turn
   * (`parallel_tool_calls: false`). Where it cannot, the adapter's converter
   * leaves the field out and returns a warning.
   */
  readonly parallelToolCalls: boolean;
  /**
   * The public format whose own wire this protocol speaks (Anthropic: the
   * Messages format). A request in that format reaches it with nothing lost:
   * its unmodelled blocks (NativePart), the originals of its blocks and
   * tools and every pass-through field, which its converter takes from
   * `native-blocks.ts`. Other routes get the typed parts only, with a warning
   * for what was dropped.
   */
  readonly nativeFormat?: PublicFormat;
  /**
   * The server tools (GenerateRequest.server_tools by name) the protocol runs:
   * `web_search`. A tool known only to the native format (an Anthropic code
   * execution tool) is served by the native format's protocol alone.
   */
  readonly serverTools: readonly string[];
  /**
   * Credentials the protocol finds in the environment, so that its routes are
   * enabled while the provider's `api_key_env` is unset (Vertex: Google's
   * application default credentials, which GOOGLE_APPLICATION_CREDENTIALS
   * names). Unset: the key is needed.
   */
  readonly ambientCredentials?: AmbientCredentials;
  /**
   * `false` for a protocol that runs media jobs only (no chat adapter in its
   * registry entry): routing skips its routes for a chat request. Unset: it serves chat.
   */
  readonly chat?: false;
}

/** The descriptor of a protocol that serves no chat (BFL, Pollo, Kling): it carries nothing of a chat request. */
export const mediaOnlyCapabilities: ProtocolCapabilities = {
  reasoning: "effort",
  cacheControl: false,
  mediaOptions: [],
  passthrough: [],
  parallelToolCalls: false,
  serverTools: [],
  chat: false,
};

/** Credentials a protocol finds in the environment in place of the provider's key. */
export interface AmbientCredentials {
  /** The variable that points at them: a disabled route's message names it beside the key's. */
  readonly variable: string;
  /** Whether they stand for this provider's key (they are there, and the provider is configured to use them). */
  present(env: Readonly<Record<string, string | undefined>>, provider: ProviderConfig): boolean;
}
