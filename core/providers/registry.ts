// Every upstream protocol the core speaks, one line each: its descriptor and
// the factory of its adapter. Adding a protocol is a folder under
// core/providers/ plus one line here (docs/architecture.md).
import type { ProviderProtocol } from "../config/schema.ts";
import { anthropicCapabilities, createAnthropicAdapter } from "./anthropic/adapter.ts";
import { createBflMediaAdapter } from "./bfl/adapter.ts";
import type { ProtocolCapabilities } from "./capabilities.ts";
import { createGeminiAdapter, geminiCapabilities } from "./gemini/adapter.ts";
import type { HttpClient } from "./http-client.ts";
import { createKlingMediaAdapter } from "./kling/media.ts";
import { createOpenAiCompatibleAdapter, openAiCompatibleCapabilities } from "./openai-compatible/adapter.ts";
import { createOpenAiCompatibleMediaAdapter } from "./openai-compatible/media.ts";
import { createSimulatorAdapter, simulatorCapabilities } from "./simulator/adapter.ts";
import { createSimulatorMediaAdapter } from "./simulator/media.ts";
import type { MediaJobAdapter } from "./media-job.ts";
import { createMediaOnlyChatAdapter, mediaOnlyCapabilities } from "./media-only.ts";
import { createPolloMediaAdapter } from "./pollo/media.ts";
import type { ProviderAdapter } from "./types.ts";
import { createVertexChatAdapter, createVertexMediaAdapter, vertexCapabilities } from "./vertex/media.ts";

interface RegisteredProtocol {
  capabilities: ProtocolCapabilities;
  createAdapter(http: HttpClient): ProviderAdapter;
  /** Asynchronous media jobs (images, videos), for protocols that run them (core/tasks/). */
  createMediaAdapter?(): MediaJobAdapter;
}

const PROTOCOLS: Record<ProviderProtocol, RegisteredProtocol> = {
  "openai-compatible": { capabilities: openAiCompatibleCapabilities, createAdapter: createOpenAiCompatibleAdapter, createMediaAdapter: createOpenAiCompatibleMediaAdapter },
  anthropic: { capabilities: anthropicCapabilities, createAdapter: createAnthropicAdapter },
  gemini: { capabilities: geminiCapabilities, createAdapter: createGeminiAdapter },
  simulator: { capabilities: simulatorCapabilities, createAdapter: createSimulatorAdapter, createMediaAdapter: createSimulatorMediaAdapter },
  bfl: { capabilities: mediaOnlyCapabilities, createAdapter: createMediaOnlyChatAdapter("images"), createMediaAdapter: createBflMediaAdapter },
  pollo: { capabilities: mediaOnlyCapabilities, createAdapter: createMediaOnlyChatAdapter("videos"), createMediaAdapter: createPolloMediaAdapter },
  kling: { capabilities: mediaOnlyCapabilities, createAdapter: createMediaOnlyChatAdapter("videos"), createMediaAdapter: createKlingMediaAdapter },
  vertex: { capabilities: vertexCapabilities, createAdapter: createVertexChatAdapter, createMediaAdapter: createVertexMediaAdapter },
};

/** A protocol's descriptor, without building its adapter (the catalogue's view). */
export function capabilitiesOf(protocol: ProviderProtocol): ProtocolCapabilities {
  return PROTOCOLS[protocol].capabilities;
}

/** One adapter per protocol, sharing the core's HTTP client. */
export function createAdapters(http: HttpClient): Record<ProviderProtocol, ProviderAdapter> {
  const entries = Object.entries(PROTOCOLS) as [ProviderProtocol, RegisteredProtocol][];
  return Object.fromEntries(entries.map(([name, protocol]) => [name, protocol.createAdapter(http)])) as Record<ProviderProtocol, ProviderAdapter>;
}

/** The media job adapters of the protocols that have one. */
export function createMediaAdapters(): Partial<Record<ProviderProtocol, MediaJobAdapter>> {
  const entries = Object.entries(PROTOCOLS) as [ProviderProtocol, RegisteredProtocol][];
  return Object.fromEntries(entries.flatMap(([name, protocol]) => (protocol.createMediaAdapter ? [[name, protocol.createMediaAdapter()]] : [])));
}
