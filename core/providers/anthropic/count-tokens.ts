// Anthropic's exact count: POST {base_url}/messages/count_tokens takes the
// Messages body less what only generation reads, and answers
// {"input_tokens": N}: the system prompt, messages, tools and thinking
// settings, as the model would be charged for them.
import type { JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import type { HttpClient } from "../http-client.ts";
import { checkShape } from "../http-exchange.ts";
import { postJson } from "../post-json.ts";
import type { UpstreamCall } from "../types.ts";
import { convertRequest } from "./convert-request.ts";
import { anthropicHeaders, messagesUrl } from "./endpoint.ts";
import { mapError } from "./map-error.ts";

/**
 * Fields of MessageCreateParams that MessageCountTokensParams lacks (the
 * official SDK's types): the endpoint refuses them as extra inputs.
 */
const GENERATION_ONLY_FIELDS = [
  "max_tokens", "stream", "temperature", "top_p", "top_k", "stop_sequences", "metadata", "service_tier", "container", "inference_geo", "diagnostics",
];

const countSchema = z.object({ input_tokens: z.number().int().nonnegative() });

/** The Messages body as the counting endpoint takes it: the one Generate would send, less the generation-only fields. */
export function countTokensBody(call: UpstreamCall): JsonObject {
  const body = { ...convertRequest({ ...call, stream: false }).body };
  for (const field of GENERATION_ONLY_FIELDS) delete body[field];
  return body;
}

export async function countAnthropicTokens(http: HttpClient, call: UpstreamCall): Promise<number> {
  const answer = await postJson(http, call, {
    url: messagesUrl(call.provider, "count_tokens"),
    headers: anthropicHeaders(call),
    body: countTokensBody(call),
    errorOf: mapError,
  });
  return checkShape(countSchema, answer).input_tokens;
}
