// The matrix table is rendered from test results, so a failing cell shows.
import { describe, expect, it } from "vitest";
import { cellsOf, renderMatrix } from "../../scripts/render-translation-matrix.ts";

const result = (protocol: string, mode: string, title: string, status: string) => ({
  ancestorTitles: ["translation matrix", protocol, mode],
  title,
  status,
});

describe("render-translation-matrix", () => {
  const report = {
    testResults: [
      {
        assertionResults: [
          result("anthropic", "JSON", "plain text", "passed"),
          result("anthropic", "stream", "plain text", "failed"),
          result("gemini", "JSON", "plain text", "passed"),
          result("gemini", "stream", "plain text", "passed"),
          // Not a matrix cell: ignored.
          { ancestorTitles: ["something else"], title: "x", status: "passed" },
        ],
      },
    ],
  };

  it("reads the matrix cells out of vitest's JSON report", () => {
    expect(cellsOf(report)).toEqual([
      { protocol: "anthropic", mode: "JSON", feature: "plain text", passed: true },
      { protocol: "anthropic", mode: "stream", feature: "plain text", passed: false },
      { protocol: "gemini", mode: "JSON", feature: "plain text", passed: true },
      { protocol: "gemini", mode: "stream", feature: "plain text", passed: true },
    ]);
  });

  it("marks each cell by its result and counts them", () => {
    const table = renderMatrix(cellsOf(report));
    expect(table).toContain("| Feature | anthropic | gemini |");
    expect(table).toContain("| plain text | JSON ✅ · stream ❌ | JSON ✅ · stream ✅ |");
    expect(table).toContain("3 of 4 cells pass.");
  });
});
