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
          // A row the format cannot ask: declared, skipped, drawn as — and not counted.
          result("responses", "anthropic", "JSON", "cached prompt", "skipped"),
          result("responses", "anthropic", "stream", "cached prompt", "skipped"),
          result("messages", "gemini", "JSON", "plain text", "passed"),
          // Not a matrix cell: ignored.
          { ancestorTitles: ["something else"], title: "x", status: "passed" },
        ],
      },
    ],
  };

  it("reads the matrix cells out of vitest's JSON report", () => {
    expect(cellsOf(report).slice(0, 2)).toEqual([
      { format: "chat", protocol: "anthropic", mode: "JSON", feature: "plain text", asked: true, passed: true },
      { format: "chat", protocol: "anthropic", mode: "stream", feature: "plain text", asked: true, passed: false },
    ]);
    expect(cellsOf(report).at(-1)).toEqual({ format: "messages", protocol: "gemini", mode: "JSON", feature: "plain text", asked: true, passed: true });
    expect(cellsOf(report).filter((cell) => !cell.asked)).toEqual([
      { format: "responses", protocol: "anthropic", mode: "JSON", feature: "cached prompt", asked: false, passed: false },
      { format: "responses", protocol: "anthropic", mode: "stream", feature: "cached prompt", asked: false, passed: false },
    ]);
    expect(cellsOf(report)).toHaveLength(11);
  });

  it("draws one table per format, marks each cell by its result (— for a row the format has not or cannot ask) and counts the asked ones", () => {
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
