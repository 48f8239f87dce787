// The chat format's usage object (shared by the JSON answer and the final chunk).
import type { ResponseStart, Usage } from "../../../gen/router/v1/inference_pb.js";
import { FinishReason } from "../../../gen/router/v1/inference_pb.js";
import { exactNumber } from "../../json.ts";

export function encodeUsage(usage: Usage | undefined, start: Pick<ResponseStart, "id" | "provider">) {
  const input = usage?.inputTokens ?? 0;
  const output = usage?.outputTokens ?? 0;
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    // cache_write_tokens: prompt tokens written to the provider's cache (priced apart; OpenRouter's name).
    prompt_tokens_details: { cached_tokens: usage?.cachedInputTokens ?? 0, cache_write_tokens: usage?.cacheWriteTokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: usage?.reasoningTokens ?? 0 },
    object: "",
    cost: exactNumber(usage?.cost || "0"),
    chat_id: start.id,
    provider: start.provider,
  };
}

const FINISH_REASONS: Record<FinishReason, string | null> = {
  [FinishReason.UNSPECIFIED]: null,
  [FinishReason.STOP]: "stop",
  [FinishReason.LENGTH]: "length",
  [FinishReason.TOOL_CALLS]: "tool_calls",
  [FinishReason.CONTENT_FILTER]: "content_filter",
  // The spec's enum has no error value; an errored answer never reaches a finish chunk.
  [FinishReason.ERROR]: "stop",
};

export function encodeFinishReason(reason: FinishReason): string | null {
  return FINISH_REASONS[reason];
}
