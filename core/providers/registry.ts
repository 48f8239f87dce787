// Every upstream protocol the core speaks, one line each: what it carries
// (capabilities), its chat adapter and token estimate if it serves chat, its
// media adapter if it runs media jobs, and what a provider of it must
// configure. Adding a protocol is a folder under core/providers/ plus one line
// here (docs/architecture.md); the config schema's protocol names are this
// table's keys.
import { anthropicCapabilities, anthropicTokenEstimate, createAnthropicAdapter } from "./anthropic/adapter.ts";
import { createBflMediaAdapter } from "./bfl/media.ts";
import { mediaOnlyCapabilities, type ProtocolCapabilities } from "./capabilities.ts";
import { createGeminiAdapter, geminiCapabilities, geminiTokenEstimate } from "./gemini/adapter.ts";
import { createGeminiInteractionsAdapter, geminiInteractionsCapabilities, geminiInteractionsTokenEstimate } from "./gemini-interactions/adapter.ts";
import type { HttpClient } from "./http-client.ts";
import { createKlingMediaAdapter } from "./kling/media.ts";
import type { MediaJobAdapter } from "./media-job.ts";
import { createOpenAiCompatibleAdapter, openAiCompatibleCapabilities, openAiCompatibleTokenEstimate } from "./openai-compatible/adapter.ts";
import { createOpenAiCompatibleMediaAdapter } from "./openai-compatible/media.ts";
import { createPolloMediaAdapter } from "./pollo/media.ts";
import { createSimulatorAdapter, simulatorCapabilities, simulatorTokenEstimate } from "./simulator/adapter.ts";
import { createSimulatorMediaAdapter } from "./simulator/media.ts";
import type { TokenEstimateProfile } from "./token-estimate.ts";
import type { ProviderAdapter } from "./types.ts";
import { createVertexMediaAdapter, vertexCapabilities } from "./vertex/media.ts";

/** The chat half of a protocol: its adapter, and what a token estimate on its routes needs (core/count-tokens/). */
export interface ChatProtocol {
  createAdapter(http: HttpClient): ProviderAdapter;
  tokenEstimate: TokenEstimateProfile;
}

/** What a provider of the protocol must name in the configuration (core/config/schema.ts checks it). */
export interface ProtocolConfigNeeds {
  /** `base_url`: every protocol that calls an upstream (the simulator answers in-process). */
  baseUrl: boolean;
  /** Both `api_key_env` and `secret_key_env`: the protocol signs with a key pair (Kling: the access key is the token's issuer, the secret key signs it). */
  keyPair?: true;
}

export interface RegisteredProtocol {
  /** The descriptor routing and the catalogue read; `chat: false` exactly when there is no `chat` below. */
  capabilities: ProtocolCapabilities;
  /** Absent: the protocol serves no chat, and routing skips its routes for a chat request. */
  chat?: ChatProtocol;
  /** Asynchronous media jobs (images, videos), for protocols that run them (core/tasks/). */
  createMediaAdapter?(): MediaJobAdapter;
  config: ProtocolConfigNeeds;
}

const CALLS_UPSTREAM: ProtocolConfigNeeds = { baseUrl: true };

const PROTOCOLS = {
  "openai-compatible": { capabilities: openAiCompatibleCapabilities, chat: { createAdapter: createOpenAiCompatibleAdapter, tokenEstimate: openAiCompatibleTokenEstimate }, createMediaAdapter: createOpenAiCompatibleMediaAdapter, config: CALLS_UPSTREAM },
  anthropic: { capabilities: anthropicCapabilities, chat: { createAdapter: createAnthropicAdapter, tokenEstimate: anthropicTokenEstimate }, config: CALLS_UPSTREAM },
  gemini: { capabilities: geminiCapabilities, chat: { createAdapter: createGeminiAdapter, tokenEstimate: geminiTokenEstimate }, config: CALLS_UPSTREAM },
  "gemini-interactions": { capabilities: geminiInteractionsCapabilities, chat: { createAdapter: createGeminiInteractionsAdapter, tokenEstimate: geminiInteractionsTokenEstimate }, config: CALLS_UPSTREAM },
  simulator: { capabilities: simulatorCapabilities, chat: { createAdapter: createSimulatorAdapter, tokenEstimate: simulatorTokenEstimate }, createMediaAdapter: createSimulatorMediaAdapter, config: { baseUrl: false } },
  bfl: { capabilities: mediaOnlyCapabilities, createMediaAdapter: createBflMediaAdapter, config: CALLS_UPSTREAM },
  pollo: { capabilities: mediaOnlyCapabilities, createMediaAdapter: createPolloMediaAdapter, config: CALLS_UPSTREAM },
  kling: { capabilities: mediaOnlyCapabilities, createMediaAdapter: createKlingMediaAdapter, config: { baseUrl: true, keyPair: true } },
  vertex: { capabilities: vertexCapabilities, createMediaAdapter: createVertexMediaAdapter, config: CALLS_UPSTREAM },
} satisfies Record<string, RegisteredProtocol>;

export type ProviderProtocol = keyof typeof PROTOCOLS;

/** The protocols' names, as the configuration's `protocol` takes them. */
export const PROTOCOL_NAMES = Object.keys(PROTOCOLS) as [ProviderProtocol, ...ProviderProtocol[]];

const entries = () => Object.entries(PROTOCOLS) as [ProviderProtocol, RegisteredProtocol][];

/** A protocol's registry entry. */
export const protocolOf = (protocol: ProviderProtocol): RegisteredProtocol => PROTOCOLS[protocol];

/** A protocol's descriptor, without building its adapter (the catalogue's view). */
export const capabilitiesOf = (protocol: ProviderProtocol): ProtocolCapabilities => PROTOCOLS[protocol].capabilities;

/** The token estimate of a chat protocol (routing sends chat to no other). */
export function tokenEstimateOf(protocol: ProviderProtocol): TokenEstimateProfile {
  const chat: ChatProtocol | undefined = protocolOf(protocol).chat;
  if (!chat) throw new Error(`protocol ${protocol} serves no chat`);
  return chat.tokenEstimate;
}

/** One chat adapter per protocol that serves chat, sharing the core's HTTP client (routing sends chat to no other). */
export function createChatAdapters(http: HttpClient): Record<string, ProviderAdapter> {
  return Object.fromEntries(entries().flatMap(([name, protocol]) => (protocol.chat ? [[name, protocol.chat.createAdapter(http)]] : [])));
}

/** The media job adapters of the protocols that have one. */
export function createMediaAdapters(): Partial<Record<ProviderProtocol, MediaJobAdapter>> {
  return Object.fromEntries(entries().flatMap(([name, protocol]) => (protocol.createMediaAdapter ? [[name, protocol.createMediaAdapter()]] : [])));
}
