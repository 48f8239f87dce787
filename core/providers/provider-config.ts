// A provider's entry in the configuration (docs/configuration.md): the
// providers' own part of the config schema, next to the registry that says what
// each protocol needs, so that core/providers/ imports nothing from core/config/
// (core/config/schema.ts takes this part from here).
import { z } from "zod";
import { environmentVariable, httpUrl } from "../config-fields.ts";
import { PROTOCOL_NAMES, protocolOf } from "./registry.ts";

/** The registry's protocols (core/providers/registry.ts). */
export const providerProtocolSchema = z.enum(PROTOCOL_NAMES);

const openAiQuirksSchema = z
  .object({
    /** Which field carries the completion limit upstream. */
    max_tokens_field: z.enum(["max_tokens", "max_completion_tokens"]).default("max_tokens"),
    /**
     * How the vendor takes reasoning options: OpenAI's `reasoning_effort`, an
     * OpenRouter-style `reasoning: {effort}`, Qwen's `enable_thinking` (with
     * `thinking_budget`), or `thinking: {type: enabled|disabled}` (GLM, Kimi).
     */
    reasoning_field: z.enum(["reasoning_effort", "reasoning", "enable_thinking", "thinking"]).default("reasoning_effort"),
    /**
     * The assistant-message field the vendor reads earlier reasoning back from, or
     * `none`. DeepSeek and Kimi in thinking mode refuse a history whose tool-call
     * turns lack their `reasoning_content` (HTTP 400).
     */
    reasoning_passback: z.enum(["none", "reasoning_content"]).default("none"),
  })
  .strict();

export const providerSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "must be lowercase letters, digits and dashes"),
    label: z.string().min(1),
    protocol: providerProtocolSchema,
    /** Base URL of the upstream API (required where the protocol's registry entry says so: all but the simulator). */
    base_url: httpUrl("https://api.openai.com/v1").optional(),
    /** Environment variable holding the API key; when named, the provider is enabled only when it is set. */
    api_key_env: environmentVariable.optional(),
    /** Environment variable holding a second key the protocol signs with (Kling's secret key; required where the protocol's registry entry needs a key pair); enabled only when set. */
    secret_key_env: environmentVariable.optional(),
    /** A stream's time to its response headers, and the longest silence between its chunks. */
    timeout_ms: z.number().int().positive().default(60_000),
    /** A non-streaming request's time to its whole answer (the upstream generates before it answers). */
    request_timeout_ms: z.number().int().positive().default(600_000),
    quirks: openAiQuirksSchema.default({ max_tokens_field: "max_tokens", reasoning_field: "reasoning_effort", reasoning_passback: "none" }),
    /** Most connections open at once to this provider (per origin); absent: no limit, since every stream holds one for its whole length. */
    max_connections: z.number().int().positive().optional(),
    /** Simulator only: milliseconds between streamed chunks. */
    chunk_delay_ms: z.number().int().nonnegative().default(0),
  })
  .strict()
  .superRefine((provider, ctx) => {
    // What the protocol's registry entry says a provider of it needs.
    const needs = protocolOf(provider.protocol).config;
    if (needs.baseUrl && !provider.base_url) {
      ctx.addIssue({ code: "custom", path: ["base_url"], message: "required for protocol " + provider.protocol });
    }
    if (needs.keyPair && (!provider.api_key_env || !provider.secret_key_env)) {
      ctx.addIssue({ code: "custom", path: [provider.api_key_env ? "secret_key_env" : "api_key_env"], message: `required for protocol ${provider.protocol} (the access key and the secret key)` });
    }
  });

export type ProviderConfig = z.infer<typeof providerSchema>;
export type { ProviderProtocol } from "./registry.ts";
