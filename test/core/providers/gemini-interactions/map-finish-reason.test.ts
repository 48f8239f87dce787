import { describe, expect, it } from "vitest";
import { mapFinishReason } from "../../../../core/providers/gemini-interactions/map-finish-reason.ts";
import { FinishReason } from "../../../../gen/router/v1/inference_pb.js";

describe("mapFinishReason", () => {
  it.each([
    ["completed", false, FinishReason.STOP],
    ["completed", true, FinishReason.TOOL_CALLS],
    ["requires_action", true, FinishReason.TOOL_CALLS],
    ["requires_action", false, FinishReason.STOP],
    ["incomplete", false, FinishReason.LENGTH],
    ["incomplete", true, FinishReason.LENGTH],
    ["budget_exceeded", false, FinishReason.LENGTH],
    ["failed", false, FinishReason.ERROR],
    ["cancelled", true, FinishReason.ERROR],
    ["something_new", false, FinishReason.STOP],
  ])("%s (tool calls: %s)", (status, hasToolCalls, expected) => {
    expect(mapFinishReason(status, hasToolCalls)).toBe(expected);
  });
});
