// Where and how a Gemini Interactions API call goes: the collection
// `{base_url}/interactions` (create), and one interaction under it,
// `{base_url}/interactions/{id}` (get, delete) and `.../{id}:cancel`'s REST
// form `.../{id}/cancel`, for the calls a stored conversation will make. The
// key travels in `x-goog-api-key`, as for generateContent.
import { baseUrlOf } from "../base-url.ts";
import type { ProviderConfig } from "../provider-config.ts";
export { keyHeaders } from "../gemini/endpoint.ts";

/** `{base_url}/interactions`, or one interaction (`id`) and an action on it (`cancel`). */
export function interactionsUrl(provider: ProviderConfig, id?: string, action?: "cancel"): URL {
  const path = id === undefined ? "" : `/${encodeURIComponent(id)}${action ? `/${action}` : ""}`;
  return new URL(`${baseUrlOf(provider)}/interactions${path}`);
}
