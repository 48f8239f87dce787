// One fake upstream per provider protocol (OpenAI-compatible, Anthropic,
// Gemini, Gemini Interactions) and a configuration with one model per protocol
// routed to it, for the tests that run the same requests through every protocol.
import { parseConfig } from "../../core/config/load.ts";
import type { RouterConfig } from "../../core/config/schema.ts";
import { startFakeAnthropicUpstream } from "./fake-anthropic-upstream.ts";
import { asSeen, startFakeGeminiInteractionsUpstream, type FakeGeminiInteractionsUpstream } from "./fake-gemini-interactions-upstream.ts";
import { startFakeGeminiUpstream } from "./fake-gemini-upstream.ts";
import { startFakeUpstream } from "./fake-openai-upstream.ts";
import type { FakeUpstream } from "./recording-server.ts";

export type Protocol = "openai-compatible" | "anthropic" | "gemini" | "gemini-interactions";
export const PROTOCOLS: Protocol[] = ["openai-compatible", "anthropic", "gemini", "gemini-interactions"];

/**
 * The body of the last request a protocol's fake received, as its model saw
 * it: a continuation of an interaction the Interactions fake keeps has the
 * timeline it continues before its own input (the upstream's conversation).
 */
export function lastSent(upstreams: Record<Protocol, FakeUpstream>, protocol: Protocol): Record<string, any> {
  const body = upstreams[protocol].requests.at(-1)!.body;
  return protocol === "gemini-interactions" ? asSeen(upstreams[protocol] as FakeGeminiInteractionsUpstream, body) : body;
}

/** USD per token in femto-dollars (10^-15), so expected costs are exact integers. */
export const PRICES = { prompt: 1_000_000_000n, completion: 2_000_000_000n, cacheRead: 100_000_000n, cacheWrite: 1_250_000_000n };

export async function startProtocolUpstreams(): Promise<Record<Protocol, FakeUpstream>> {
  const [openai, anthropic, gemini, interactions] = await Promise.all([startFakeUpstream(), startFakeAnthropicUpstream(), startFakeGeminiUpstream(), startFakeGeminiInteractionsUpstream()]);
  return { "openai-compatible": openai, anthropic, gemini, "gemini-interactions": interactions };
}

export async function closeProtocolUpstreams(upstreams: Partial<Record<Protocol, FakeUpstream>>): Promise<void> {
  await Promise.all(Object.values(upstreams).map((upstream) => upstream?.close()));
}

/** OpenAI and Gemini Interactions take an effort (a thinking level); Anthropic and Gemini think on a budget that routing sizes. */
const REASONING_EFFORT_MAPS: Partial<Record<Protocol, Record<string, string>>> = {
  "openai-compatible": { low: "low", medium: "medium", high: "high" },
  "gemini-interactions": { minimal: "minimal", low: "low", medium: "medium", high: "high" },
};

/** Another model on every protocol: `<prefix>/<protocol>-<suffix>`, served by the fakes' `upstreamModel` (e.g. "hang"). */
export interface ExtraModel {
  suffix: string;
  upstreamModel: string;
}

/**
 * The configuration as its JSON document (for a file an entry point reads):
 * providers named after their protocol (key from CHEAP_KEY), models
 * `<prefix>/<protocol>` served by `upstreamModels[protocol]` at PRICES (and
 * any extra ones), and org_test with the key in TEST_API_KEY.
 */
export function protocolConfigDocument(urls: Record<Protocol, string>, prefix: string, upstreamModels: Record<Protocol, string>, extra: ExtraModel[] = []) {
  const modelFor = (protocol: Protocol, id = `${prefix}/${protocol}`, upstreamModel = upstreamModels[protocol]) => ({
    id,
    name: `${prefix} ${protocol}`,
    created: 1700000000,
    creator: prefix,
    context_length: 128000,
    max_completion_tokens: 4096,
    input_modalities: ["text", "image", "file"],
    output_modalities: ["text"],
    supported_parameters: ["max_tokens", "temperature", "top_p", "stop", "tools", "tool_choice", "response_format", "reasoning"],
    providers: [
      {
        provider: protocol,
        provider_model_id: upstreamModel,
        pricing: { prompt: "0.000001", completion: "0.000002", input_cache_read: "0.0000001", input_cache_write: "0.00000125" },
        ...(REASONING_EFFORT_MAPS[protocol] && { reasoning_effort_map: REASONING_EFFORT_MAPS[protocol] }),
      },
    ],
  });
  return {
    providers: PROTOCOLS.map((protocol) => ({ id: protocol, label: protocol, protocol, base_url: urls[protocol], api_key_env: "CHEAP_KEY" })),
    models: PROTOCOLS.flatMap((protocol) => [
      modelFor(protocol),
      ...extra.map(({ suffix, upstreamModel }) => modelFor(protocol, `${prefix}/${protocol}-${suffix}`, upstreamModel)),
    ]),
    organizations: [{ id: "org_test", name: "Test", credits: "1000", keys: [{ id: "key_test", env: "TEST_API_KEY" }] }],
  };
}

export function protocolConfig(urls: Record<Protocol, string>, prefix: string, upstreamModels: Record<Protocol, string>, extra: ExtraModel[] = []): RouterConfig {
  return parseConfig(JSON.stringify(protocolConfigDocument(urls, prefix, upstreamModels, extra)));
}

export const urlsOf = (upstreams: Record<Protocol, FakeUpstream>): Record<Protocol, string> => ({
  "openai-compatible": upstreams["openai-compatible"].url,
  anthropic: upstreams.anthropic.url,
  gemini: upstreams.gemini.url,
  "gemini-interactions": upstreams["gemini-interactions"].url,
});

/** Token counts of one answer, as the router reports them. */
export interface Tokens {
  prompt: number;
  cached: number;
  cacheWrite: number;
  completion: number;
  reasoning: number;
}

/** The exact cost of `tokens` at PRICES, in femto-dollars. */
export function costFemtos(tokens: Pick<Tokens, "prompt" | "cached" | "cacheWrite" | "completion">): bigint {
  const uncached = BigInt(tokens.prompt - tokens.cached - tokens.cacheWrite);
  return uncached * PRICES.prompt + BigInt(tokens.cached) * PRICES.cacheRead + BigInt(tokens.cacheWrite) * PRICES.cacheWrite + BigInt(tokens.completion) * PRICES.completion;
}

/** Femto-dollars as the decimal number a client parses. */
export function dollarsOf(femtos: bigint): number {
  const digits = femtos.toString().padStart(16, "0");
  return Number(`${digits.slice(0, -15)}.${digits.slice(-15)}`);
}

/** The conversation a fake counts prompt tokens of ("conversation" models): what promptTokensOf is given. */
export function countedConversation(protocol: Protocol, sent: Record<string, any>): unknown {
  switch (protocol) {
    case "openai-compatible":
      return sent.messages;
    case "anthropic":
      return { system: sent.system, messages: sent.messages };
    case "gemini":
      return { systemInstruction: sent.systemInstruction, contents: sent.contents };
    case "gemini-interactions":
      return { system_instruction: sent.system_instruction, input: sent.input };
  }
}
