// The similarity evaluation (npm run eval:cache) holds its numbers: the
// labelled pairs stay the set docs/cache-similarity.md describes, the default
// threshold of the lexical embedding stays the one measured on them, and the
// match rule (cosine at or above the threshold AND equal guards) keeps its
// precision and recall at or above floors. A floor, not an exact number:
// improving the embedding may move recall up freely.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Embedder } from "../../../core/cache/embedding/embedder.ts";
import { createLexicalEmbedder, LEXICAL_DEFAULT_THRESHOLD } from "../../../core/cache/embedding/lexical.ts";
import { evaluateSimilarity, predictedSame, scoreAt, TARGET_PRECISION } from "../../../scripts/cache-similarity-eval/evaluate.ts";
import { loadLabelledPairs } from "../../../scripts/cache-similarity-eval/labelled-pairs.ts";
import { withResults } from "../../../scripts/eval-cache-similarity.ts";

/** Recall at the default threshold when it was last measured (docs/cache-similarity.md), less two points. */
const RECALL_FLOOR = 0.374 - 0.02;

const pairs = loadLabelledPairs();
const evaluation = await evaluateSimilarity(pairs, createLexicalEmbedder());
const ofKinds = (...kinds: string[]) => evaluation.scored.filter((s) => kinds.includes(s.pair.kind));

describe("the labelled similarity pairs", () => {
  it("has at least 360 pairs in at least 6 languages, both labels well represented", () => {
    expect(pairs.length).toBeGreaterThanOrEqual(360);
    const languages = new Set(pairs.map((p) => p.lang));
    expect(languages.size).toBeGreaterThanOrEqual(6);
    for (const lang of ["en", "fr", "de", "es", "pt", "it", "zh", "ja"]) expect(pairs.filter((p) => p.lang === lang).length, lang).toBeGreaterThanOrEqual(20);
    expect(pairs.filter((p) => p.same).length).toBeGreaterThanOrEqual(150);
    expect(pairs.filter((p) => !p.same).length).toBeGreaterThanOrEqual(150);
  });

  it("has at least 40 pairs differing in one number and 40 in one negation, and entity and direction swaps, all labelled different", () => {
    for (const kind of ["number", "negation"]) expect(pairs.filter((p) => p.kind === kind).length, kind).toBeGreaterThanOrEqual(40);
    for (const kind of ["entity", "direction"]) expect(pairs.filter((p) => p.kind === kind).length, kind).toBeGreaterThanOrEqual(20);
    for (const pair of pairs.filter((p) => ["number", "negation", "entity", "direction", "opposite", "topic"].includes(p.kind))) expect(pair.same, pair.a).toBe(false);
  });

  it("refuses a malformed line rather than skipping it", () => {
    const dir = mkdtempSync(join(tmpdir(), "similarity-pairs-"));
    try {
      const file = join(dir, "pairs.jsonl");
      writeFileSync(file, JSON.stringify({ a: "x", b: "y", same: "yes", kind: "typo", lang: "en" }) + "\n" + JSON.stringify({ a: "x", b: "x", same: true, kind: "", lang: "en" }) + "\n");
      expect(() => loadLabelledPairs(file)).toThrow(/line 1: same is not true or false[\s\S]*line 2: no kind[\s\S]*line 2: a and b are the same text/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the lexical embedding on the labelled pairs", () => {
  it("chooses the threshold lexical.ts publishes as its default", () => {
    expect(evaluation.chosen.threshold).toBe(LEXICAL_DEFAULT_THRESHOLD);
  });

  it("keeps precision at or above 0.99 and recall at or above its floor at the default threshold", () => {
    const atDefault = scoreAt(evaluation.scored, LEXICAL_DEFAULT_THRESHOLD);
    expect(atDefault.precision).toBeGreaterThanOrEqual(TARGET_PRECISION);
    expect(atDefault.recall).toBeGreaterThanOrEqual(RECALL_FLOOR);
  });

  it("never matches a pair differing in one number or one negation, at any threshold: their guards differ", () => {
    for (const scored of ofKinds("number", "negation")) {
      expect(scored.guardsEqual, `${scored.pair.a} / ${scored.pair.b}`).toBe(false);
      expect(predictedSame(scored, 0)).toBe(false);
    }
  });

  it("almost never lets the guard refuse a pair labelled same", () => {
    expect(evaluation.scored.filter((s) => s.pair.same && !s.guardsEqual).length).toBeLessThanOrEqual(3);
  });

  it("fails an embedding that cannot tell prompts apart (the floors can fail)", async () => {
    const blind: Embedder = { id: "blind", defaultThreshold: 0.5, embed: async (texts) => texts.map(() => Float32Array.of(1)) };
    const blindEvaluation = await evaluateSimilarity(pairs, blind);
    expect(scoreAt(blindEvaluation.scored, LEXICAL_DEFAULT_THRESHOLD).precision).toBeLessThan(TARGET_PRECISION);
    expect(blindEvaluation.chosen.threshold).toBe(1);
    expect(blindEvaluation.chosen.precision).toBeLessThan(TARGET_PRECISION);
  });

  it("is deterministic: a second run gives the same similarities", async () => {
    const again = await evaluateSimilarity(pairs, createLexicalEmbedder());
    expect(again.scored.map((s) => s.similarity)).toEqual(evaluation.scored.map((s) => s.similarity));
  });
});

describe("npm run eval:cache's results block", () => {
  it("replaces only the generated block of the doc", () => {
    const doc = "intro\n<!-- eval:cache results: generated by npm run eval:cache -->\nold\n<!-- /eval:cache results -->\nafter\n";
    expect(withResults(doc, "new\n")).toBe("intro\n<!-- eval:cache results: generated by npm run eval:cache -->\nnew\n<!-- /eval:cache results -->\nafter\n");
    expect(() => withResults("no markers", "new\n")).toThrow(/no generated block/);
  });
});
