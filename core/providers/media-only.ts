// What a protocol that serves no chat (BFL, Pollo, Kling, Vertex Veo) answers
// on the chat path: its routes carry nothing of a chat request, and a chat
// request routed to one fails over to the model's next route, saying why.
import type { ProtocolCapabilities } from "./capabilities.ts";
import { UpstreamError, type ProviderAdapter } from "./types.ts";

export const mediaOnlyCapabilities: ProtocolCapabilities = {
  reasoning: "effort",
  cacheControl: false,
  mediaOptions: [],
  passthrough: [],
  parallelToolCalls: false,
  serverTools: [],
};

/** `serves`: what the provider makes instead, for the failover's reason ("images", "videos"). */
export function createMediaOnlyChatAdapter(serves: string): () => ProviderAdapter {
  return () => ({
    capabilities: mediaOnlyCapabilities,
    async *stream() {
      throw new UpstreamError(`this provider generates ${serves} only, through the media task endpoints`, { retryable: true, reason: "not_a_chat_protocol" });
    },
  });
}
