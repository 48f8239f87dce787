// A provider's base_url without its trailing slashes: every adapter joins its
// paths to it with one slash, whatever the configuration wrote.
import type { ProviderConfig } from "./provider-config.ts";

export function baseUrlOf(provider: ProviderConfig): string {
  return (provider.base_url ?? "").replace(/\/+$/, "");
}
