// Where and how a chat request goes: POST {base_url}/chat/completions with the
// key as a bearer token (none when the provider has no key: a local server).
import { baseUrlOf } from "../base-url.ts";
import type { ProviderConfig } from "../provider-config.ts";
import type { UpstreamCall } from "../types.ts";

// Built once per provider: every request of a busy route would build the same URL.
const urls = new WeakMap<ProviderConfig, URL>();

/** `{base_url}/chat/completions`. */
export function chatCompletionsUrl(provider: ProviderConfig): URL {
  let url = urls.get(provider);
  if (!url) {
    url = new URL(`${baseUrlOf(provider)}/chat/completions`);
    urls.set(provider, url);
  }
  return url;
}

export const bearerHeaders = ({ apiKey }: Pick<UpstreamCall, "apiKey">): Record<string, string> => (apiKey ? { authorization: `Bearer ${apiKey}` } : {});
