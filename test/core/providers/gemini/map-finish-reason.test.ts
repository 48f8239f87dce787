import { describe, expect, it } from "vitest";
import { mapFinishReason } from "../../../../core/providers/gemini/map-finish-reason.ts";
import { FinishReason } from "../../../../gen/router/v1/inference_pb.js";

describe("mapFinishReason", () => {
  it.each([
    ["STOP", false, FinishReason.STOP],
    ["STOP", true, FinishReason.TOOL_CALLS],
    ["MAX_TOKENS", false, FinishReason.LENGTH],
    ["MAX_TOKENS", true, FinishReason.LENGTH],
    ["SAFETY", false, FinishReason.CONTENT_FILTER],
    ["RECITATION", false, FinishReason.CONTENT_FILTER],
    ["BLOCKLIST", false, FinishReason.CONTENT_FILTER],
    ["PROHIBITED_CONTENT", false, FinishReason.CONTENT_FILTER],
    ["SPII", false, FinishReason.CONTENT_FILTER],
    ["IMAGE_SAFETY", false, FinishReason.CONTENT_FILTER],
    ["LANGUAGE", false, FinishReason.CONTENT_FILTER],
    ["MALFORMED_FUNCTION_CALL", true, FinishReason.ERROR],
    ["UNEXPECTED_TOOL_CALL", false, FinishReason.ERROR],
    ["TOO_MANY_TOOL_CALLS", true, FinishReason.ERROR],
    ["MISSING_THOUGHT_SIGNATURE", false, FinishReason.ERROR],
    ["OTHER", false, FinishReason.ERROR],
    ["SOMETHING_NEW", false, FinishReason.STOP],
    ["FINISH_REASON_UNSPECIFIED", true, FinishReason.TOOL_CALLS],
  ])("%s (tool calls: %s)", (raw, hasToolCalls, expected) => {
    expect(mapFinishReason(raw, hasToolCalls)).toBe(expected);
  });
});
