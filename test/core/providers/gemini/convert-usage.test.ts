import { describe, expect, it } from "vitest";
import { convertUsage } from "../../../../core/providers/gemini/convert-usage.ts";
import { Modality } from "../../../../gen/router/v1/inference_pb.js";

describe("convertUsage", () => {
  it("counts cached tokens inside the prompt, thoughts inside the output, tool-use prompts as input", () => {
    expect(
      convertUsage({
        promptTokenCount: 1000,
        cachedContentTokenCount: 600,
        candidatesTokenCount: 50,
        thoughtsTokenCount: 200,
        toolUsePromptTokenCount: 70,
        totalTokenCount: 1320,
      }),
    ).toMatchObject({ inputTokens: 1070, cachedInputTokens: 600, cacheWriteTokens: 0, outputTokens: 250, reasoningTokens: 200 });
  });

  it("reads an intermediate chunk's partial usage as zeros where absent", () => {
    expect(convertUsage({ promptTokenCount: 9, totalTokenCount: 9 })).toMatchObject({
      inputTokens: 9,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
      inputByModality: [],
      outputByModality: [],
    });
  });

  it("keeps the tokens by modality and the provider's usage object unchanged", () => {
    const metadata = {
      promptTokenCount: 1300,
      candidatesTokenCount: 40,
      totalTokenCount: 1340,
      promptTokensDetails: [
        { modality: "TEXT", tokenCount: 42 },
        { modality: "IMAGE", tokenCount: 1258 },
      ],
      candidatesTokensDetails: [{ modality: "AUDIO", tokenCount: 40 }],
      trafficType: "ON_DEMAND",
    };
    const usage = convertUsage(metadata);
    expect(usage.inputByModality?.map(({ modality, tokens }) => [Modality[modality], tokens])).toEqual([
      ["TEXT", 42],
      ["IMAGE", 1258],
    ]);
    expect(usage.outputByModality?.map(({ modality, tokens }) => [Modality[modality], tokens])).toEqual([["AUDIO", 40]]);
    expect(usage.raw).toEqual(metadata);
  });
});
