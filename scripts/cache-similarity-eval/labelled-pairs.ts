// The labelled pairs of the semantic cache's evaluation
// (test/core/cache/similarity-pairs.jsonl): two prompts, and whether a cached
// answer to the first is a correct answer to the second. Read and checked: a
// malformed line is an error, not a silently skipped pair.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const LABELLED_PAIRS_FILE = fileURLToPath(new URL("../../test/core/cache/similarity-pairs.jsonl", import.meta.url));

export interface LabelledPair {
  a: string;
  b: string;
  /** A cached answer to `a` is a correct answer to `b`. */
  same: boolean;
  /** How the two differ: paraphrase, reorder, typo, filler, number, negation, entity, direction, ... */
  kind: string;
  /** ISO 639-1 code of the prompts' language. */
  lang: string;
}

export function loadLabelledPairs(file = LABELLED_PAIRS_FILE): LabelledPair[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const pairs = readFileSync(file, "utf8")
    .split("\n")
    .flatMap((line, index) => {
      if (line.trim() === "") return [];
      const where = `line ${index + 1}`;
      const pair = JSON.parse(line) as Partial<LabelledPair>;
      for (const key of ["a", "b", "kind", "lang"] as const) if (typeof pair[key] !== "string" || pair[key] === "") problems.push(`${where}: no ${key}`);
      if (typeof pair.same !== "boolean") problems.push(`${where}: same is not true or false`);
      if (pair.a === pair.b) problems.push(`${where}: a and b are the same text`);
      const key = JSON.stringify([pair.a, pair.b]);
      if (seen.has(key)) problems.push(`${where}: duplicate pair`);
      seen.add(key);
      return [pair as LabelledPair];
    });
  if (problems.length > 0) throw new Error(`the labelled similarity pairs have problems:\n  ${problems.join("\n  ")}`);
  return pairs;
}
