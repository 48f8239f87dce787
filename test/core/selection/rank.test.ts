// Step 3: quality on the prompt's tags, then the cheapest within a margin of the
// best; the margin narrows with difficulty and with a preference for quality.
import { describe, expect, it } from "vitest";
import { filterCandidates } from "../../../core/selection/filter.ts";
import { marginFor, rankCandidates } from "../../../core/selection/rank.ts";
import { selectionCatalogue } from "../../support/selection-catalogue.ts";

const { candidates } = filterCandidates({}, selectionCatalogue());
const order = (tags: string[], difficulty: "easy" | "medium" | "hard", preference: number) =>
  rankCandidates(candidates, tags, difficulty, preference).map((r) => r.candidate.model.config.id);

describe("rankCandidates", () => {
  it("lets the cheapest within the margin win an easy chat", () => {
    expect(order(["general_chat"], "easy", 0.5)[0]).toBe("test/small");
  });

  it("takes the best for a hard coding prompt, and a cheaper near-best when cost matters more", () => {
    expect(order(["coding"], "hard", 0.5)[0]).toBe("test/frontier");
    expect(order(["coding"], "medium", 0)[0]).toBe("test/mid");
  });

  it("takes the best whatever it costs at preference 1", () => {
    expect(marginFor("easy", 1)).toBe(0);
    expect(order(["general_chat"], "easy", 1)[0]).toBe("test/frontier");
  });

  it("explains each place with the scores, the prices and the margin", () => {
    const [first, second] = rankCandidates(candidates, ["coding"], "hard", 0.5);
    expect(first.why).toBe("coding 0.95; $10 in, $40 out per million tokens; cheapest within 0.06 of the best score 0.95");
    expect(second.why).toMatch(/^coding 0.85; .*below the margin \(best 0.95 - 0.06\)$/);
  });

  it("scores a tag a model has no score for as the mean of its scores", () => {
    const eyes = rankCandidates(candidates, ["coding"], "hard", 0.5).find((r) => r.candidate.model.config.id === "test/eyes")!;
    expect(eyes.score).toBe(0.85);
  });
});
