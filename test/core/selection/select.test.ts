// The three steps together: the selection's answer, its explicit form, its
// error when no model fits, the preference's sources, determinism.
import { describe, expect, it } from "vitest";
import { selectModel } from "../../../core/selection/select.ts";
import { selectionCatalogue, userMessage } from "../../support/selection-catalogue.ts";

describe("selectModel", () => {
  const catalogue = selectionCatalogue();

  it("picks by tags and difficulty, with up to 5 candidates best first and a reasoning effort where the model reasons", () => {
    const selection = selectModel({ messages: [userMessage("Prove, step by step and rigorously, that the algorithm's complexity is O(n log n).")] }, catalogue);
    expect(selection).toMatchObject({ selectedModel: "test/frontier", strategy: "auto", difficulty: "hard", reasoningEffort: "high" });
    expect(selection.assignedTags).toContain("math");
    expect(selection.topCandidates.length).toBeLessThanOrEqual(5);
    expect(selection.topCandidates[0].model).toBe("test/frontier");
  });

  it("returns a named model as is, strategy explicit", () => {
    expect(selectModel({ messages: [userMessage("hi")] }, catalogue, { model: "test/mid" })).toMatchObject({ selectedModel: "test/mid", strategy: "explicit", topCandidates: [] });
  });

  it("says why when no model fits", () => {
    const selection = selectModel({ messages: [userMessage("hi")], needs: { inputModalities: ["audio"] } }, catalogue);
    expect(selection).toMatchObject({ selectedModel: "", strategy: "auto", error: "no model fits the request: 4 lack audio input", topCandidates: [] });
  });

  it("tags an image prompt vision and picks a model that sees", () => {
    const selection = selectModel({ messages: [userMessage("What is this?")], needs: { inputModalities: ["image"] } }, catalogue);
    expect(selection).toMatchObject({ selectedModel: "test/eyes", assignedTags: ["vision"] });
  });

  it("takes the request's preference over the organisation's over the configuration's", () => {
    const configured = selectionCatalogue({ selection: { preference: 1 }, organizations: [{ id: "org_thrifty", name: "Thrifty", selection_preference: 0 }] });
    const chat = { messages: [userMessage("Tell me something nice about autumn leaves and the weather today")] };
    expect(selectModel(chat, configured).selectedModel).toBe("test/frontier");
    expect(selectModel(chat, configured, { organizationId: "org_thrifty" }).selectedModel).toBe("test/small");
    expect(selectModel({ ...chat, preference: 1 }, configured, { organizationId: "org_thrifty" }).selectedModel).toBe("test/frontier");
  });

  it("gives the same answer for the same input", () => {
    const input = { messages: [userMessage("Écris une fonction Python qui trie une liste")] };
    expect(selectModel(input, catalogue)).toEqual(selectModel(input, catalogue));
  });
});
