import { describe, expect, it } from "vitest";
import { convertUsage } from "../../../../core/providers/gemini-interactions/convert-usage.ts";
import { Modality } from "../../../../gen/router/v1/inference_pb.js";

describe("convertUsage", () => {
  it("input with the tool-use prompt, output with the thoughts, tokens by modality, and the usage unchanged as raw", () => {
    const usage = {
      total_input_tokens: 100,
      total_cached_tokens: 40,
      total_tool_use_tokens: 7,
      total_output_tokens: 20,
      total_thought_tokens: 30,
      total_tokens: 157,
      input_tokens_by_modality: [{ modality: "text", tokens: 60 }, { modality: "image", tokens: 40 }],
      output_tokens_by_modality: [{ modality: "audio", tokens: 20 }, { modality: "hologram", tokens: 1 }],
      grounding_tool_count: [{ type: "google_search", count: 1 }],
    };
    const converted = convertUsage(usage);
    expect(converted).toMatchObject({ inputTokens: 107, cachedInputTokens: 40, cacheWriteTokens: 0, outputTokens: 50, reasoningTokens: 30, raw: usage });
    expect(converted.inputByModality?.map(({ modality, tokens }) => [modality, tokens])).toEqual([[Modality.TEXT, 60], [Modality.IMAGE, 40]]);
    expect(converted.outputByModality?.map(({ modality, tokens }) => [modality, tokens])).toEqual([[Modality.AUDIO, 20], [Modality.UNSPECIFIED, 1]]);
  });

  it("counts Google leaves out as zero", () => {
    expect(convertUsage({})).toMatchObject({ inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0, inputByModality: [], outputByModality: [] });
  });
});
