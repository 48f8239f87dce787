// Where and how every Anthropic request goes: {base_url}/messages and
// {base_url}/messages/count_tokens, with the version, the key and the betas.
import { baseUrlOf } from "../base-url.ts";
import type { ProviderConfig } from "../provider-config.ts";
import type { UpstreamCall } from "../types.ts";
import { anthropicOptions } from "./provider-options.ts";

/** `{base_url}/messages`, or one of its sub-resources (`count_tokens`). */
export const messagesUrl = (provider: ProviderConfig, subResource?: string): URL =>
  new URL(`${baseUrlOf(provider)}/messages${subResource ? `/${subResource}` : ""}`);

/** The API version every request names (the current stable one). */
export const ANTHROPIC_VERSION = "2023-06-01";

/**
 * The version, the key, and a Messages request's `anthropic-beta` values
 * (provider_options; routing gives them to Anthropic routes alone); betas change what
 * is generated and what is counted alike (tools, context management).
 */
export function anthropicHeaders({ apiKey, request }: Pick<UpstreamCall, "apiKey" | "request">): Record<string, string> {
  return {
    "anthropic-version": ANTHROPIC_VERSION,
    ...(apiKey ? { "x-api-key": apiKey } : {}),
    ...betasHeader(anthropicOptions(request).betas),
  };
}

const betasHeader = (betas: string[]): Record<string, string> => (betas.length > 0 ? { "anthropic-beta": betas.join(",") } : {});
