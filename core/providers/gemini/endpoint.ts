// Where and how a Gemini API call goes: `{base_url}/models/{model}:method`,
// key in `x-goog-api-key`. Shared by the generate and count-tokens calls.
import { baseUrlOf } from "../base-url.ts";
import type { UpstreamCall } from "../types.ts";

/** The route's model id without Google's optional `models/` prefix. */
export const bareModel = (call: UpstreamCall): string => call.route.provider_model_id.replace(/^models\//, "");

/** `{base_url}/models/{model}:{method}` (method may carry a query, as `streamGenerateContent?alt=sse`). */
export function methodUrl(call: UpstreamCall, method: string): URL {
  const base = baseUrlOf(call.provider);
  return new URL(`${base}/models/${encodeURIComponent(bareModel(call))}:${method}`);
}

export const keyHeaders = ({ apiKey }: UpstreamCall): Record<string, string> => (apiKey ? { "x-goog-api-key": apiKey } : {});
