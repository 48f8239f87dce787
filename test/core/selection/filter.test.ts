// Step 1: the models that can serve the request at all, and why the others cannot.
import { describe, expect, it } from "vitest";
import { describeExcluded, filterCandidates } from "../../../core/selection/filter.ts";
import { selectionCatalogue } from "../../support/selection-catalogue.ts";

const ids = (result: ReturnType<typeof filterCandidates>) => result.candidates.map((c) => c.model.config.id);

describe("filterCandidates", () => {
  const catalogue = selectionCatalogue();

  it("takes the text models with quality scores; never one without scores or one that makes no text", () => {
    expect(ids(filterCandidates({}, catalogue))).toEqual(["test/frontier", "test/mid", "test/small", "test/eyes"]);
  });

  it("takes the models selection.models names instead, scored or not", () => {
    expect(ids(filterCandidates({}, catalogue, { modelPatterns: ["test/unscored", "test/s*"] }))).toEqual(["test/small", "test/unscored"]);
  });

  it("leaves out models lacking tools, structured output, image input or room in the context, saying which", () => {
    const tools = filterCandidates({ tools: true }, catalogue);
    expect(ids(tools)).toEqual(["test/frontier", "test/mid", "test/eyes"]);
    expect(tools.excluded).toEqual([{ model: "test/small", reason: "tool calling" }]);
    expect(ids(filterCandidates({ structuredOutput: true }, catalogue))).not.toContain("test/small");
    expect(ids(filterCandidates({ inputModalities: ["image"] }, catalogue))).toEqual(["test/eyes"]);
    expect(ids(filterCandidates({ contextTokens: 15000, maxTokens: 2000 }, catalogue))).toEqual(["test/frontier"]);
  });

  it("applies the key's allow-list", () => {
    const result = filterCandidates({}, catalogue, { allowedModels: ["test/mid"] });
    expect(ids(result)).toEqual(["test/mid"]);
    expect(result.excluded).toContainEqual({ model: "test/frontier", reason: "not in the key's allowed models" });
  });

  it("takes only free routes for a free request, and only routes whose provider has its key", () => {
    expect(ids(filterCandidates({ free: true }, catalogue))).toEqual([]);
    expect(ids(filterCandidates({}, selectionCatalogue({}, {})))).toEqual([]);
  });

  it("says what the models lack when none fits", () => {
    const { excluded } = filterCandidates({ inputModalities: ["audio"] }, catalogue);
    expect(describeExcluded(excluded)).toBe("no model fits the request: 4 lack audio input");
  });
});
