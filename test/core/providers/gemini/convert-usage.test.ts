import { describe, expect, it } from "vitest";
import { convertUsage } from "../../../../core/providers/gemini/convert-usage.ts";

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
    ).toEqual({ inputTokens: 1070, cachedInputTokens: 600, cacheWriteTokens: 0, outputTokens: 250, reasoningTokens: 200 });
  });

  it("reads an intermediate chunk's partial usage as zeros where absent", () => {
    expect(convertUsage({ promptTokenCount: 9, totalTokenCount: 9 })).toEqual({
      inputTokens: 9,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
    });
  });
});
