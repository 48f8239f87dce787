// The matrix table is rendered from test results, so a failing cell shows.
import { describe, expect, it } from "vitest";
import { cellsOf, renderMatrix } from "../../scripts/render-translation-matrix.ts";

const result = (format: string, protocol: string, mode: string, title: string, status: string) => ({
  ancestorTitles: ["translation matrix", format, protocol, mode],
  title,
  status,
});

describe("render-translation-matrix", () => {
  const report = {
    testResults: [
      {
        assertionResults: [
          result("chat", "anthropic", "JSON", "plain text", "passed"),
          result("chat", "anthropic", "stream", "plain text", "failed"),
          result("chat", "gemini", "JSON", "plain text", "passed"),
          result("chat", "gemini", "stream", "plain text", "passed"),
          result("chat", "gemini", "JSON", "cached prompt", "passed"),
          result("chat", "gemini", "stream", "cached prompt", "passed"),
          result("responses", "anthropic", "JSON", "plain text", "passed"),
          result("responses", "anthropic", "stream", "plain text", "passed"),
          result("messages", "gemini", "JSON", "plain text", "passed"),
          // Not a matrix cell: ignored.
          { ancestorTitles: ["something else"], title: "x", status: "passed" },
        ],
      },
    ],
  };

  it("reads the matrix cells out of vitest's JSON report", () => {
    expect(cellsOf(report).slice(0, 2)).toEqual([
      { format: "chat", protocol: "anthropic", mode: "JSON", feature: "plain text", passed: true },
      { format: "chat", protocol: "anthropic", mode: "stream", feature: "plain text", passed: false },
    ]);
    expect(cellsOf(report).at(-1)).toEqual({ format: "messages", protocol: "gemini", mode: "JSON", feature: "plain text", passed: true });
    expect(cellsOf(report)).toHaveLength(9);
  });

  it("draws one table per format, marks each cell by its result (— for a row the format has not) and counts them", () => {
    const document = renderMatrix(cellsOf(report));
    expect(document).toContain("8 of 9 cells pass.");
    const [, chat, responses, messages] = document.split(/^## /m);
    expect(chat).toMatch(/^Chat completions\n/);
    expect(chat).toContain("5 of 6 cells pass.");
    expect(chat).toContain("| Feature | anthropic | gemini |");
    expect(chat).toContain("| plain text | JSON ✅ · stream ❌ | JSON ✅ · stream ✅ |");
    expect(chat).toContain("| cached prompt | JSON — · stream — | JSON ✅ · stream ✅ |");
    expect(responses).toMatch(/^Responses\n/);
    expect(responses).toContain("2 of 2 cells pass.");
    expect(responses).toContain("| plain text | JSON ✅ · stream ✅ | JSON — · stream — |");
    expect(responses).toContain("| cached prompt | JSON — · stream — | JSON — · stream — |");
    expect(messages).toMatch(/^Messages\n/);
    expect(messages).toContain("| plain text | JSON — · stream — | JSON ✅ · stream — |");
  });
});
