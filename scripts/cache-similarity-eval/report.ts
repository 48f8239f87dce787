// The similarity evaluation as markdown: the set, the precision and recall at
// every threshold, the chosen threshold and each kind of pair there (for stdout
// and docs/cache-similarity.md), and the misses (for tuning the embedding).
import { kindsAt, predictedSame, type SimilarityEvaluation, TARGET_PRECISION } from "./evaluate.ts";

const percent = (value: number) => `${(value * 100).toFixed(1)} %`;

export function renderResults(embedderId: string, evaluation: SimilarityEvaluation): string {
  const { scored, sweep, chosen } = evaluation;
  const languages = [...new Set(scored.map((s) => s.pair.lang))];
  const same = scored.filter((s) => s.pair.same).length;
  const guarded = scored.filter((s) => !s.pair.same && !s.guardsEqual).length;
  const lines = [
    `${scored.length} labelled pairs (${same} same, ${scored.length - same} different), ${languages.length} languages (${languages.join(", ")}); embedding \`${embedderId}\`.`,
    `The prompt guards differ on ${guarded} of the ${scored.length - same} different pairs, and on ${scored.filter((s) => s.pair.same && !s.guardsEqual).length} of the same ones.`,
    "",
    `Chosen threshold: **${chosen.threshold.toFixed(2)}**, the lowest with a precision of at least ${TARGET_PRECISION}: precision ${percent(chosen.precision)}, recall ${percent(chosen.recall)} (${chosen.truePositives} of ${same} same pairs found, ${chosen.falsePositives} false hits).`,
    "",
    "| threshold | precision | recall | false hits | hits |",
    "| --- | --- | --- | --- | --- |",
    ...sweep.map((row) => `| ${row.threshold.toFixed(2)}${row === chosen ? " (chosen)" : ""} | ${percent(row.precision)} | ${percent(row.recall)} | ${row.falsePositives} | ${row.truePositives} |`),
    "",
    `Each kind of pair at ${chosen.threshold.toFixed(2)}: for a kind labelled same, the share found (its recall); for a kind labelled different, the share wrongly matched.`,
    "",
    "| kind | labelled | pairs | matched |",
    "| --- | --- | --- | --- |",
    ...kindsAt(scored, chosen.threshold).map((row) => `| ${row.kind} | ${row.same ? "same" : "different"} | ${row.pairs} | ${row.predictedSame} (${percent(row.predictedSame / row.pairs)}) |`),
  ];
  return lines.join("\n") + "\n";
}

/** The pairs the rule gets wrong at the chosen threshold, and the different pairs closest to it. */
export function renderMisses(evaluation: SimilarityEvaluation): string {
  const { scored, chosen } = evaluation;
  const excerpt = (text: string) => JSON.stringify(text.replace(/\s+/g, " ").slice(0, 60));
  const line = (s: (typeof scored)[number]) => `- ${s.similarity.toFixed(3)} guards ${s.guardsEqual ? "equal" : "differ"} [${s.pair.kind} ${s.pair.lang}] ${excerpt(s.pair.a)} / ${excerpt(s.pair.b)}`;
  const missed = scored.filter((s) => s.pair.same && !predictedSame(s, chosen.threshold)).sort((x, y) => y.similarity - x.similarity);
  const closest = scored.filter((s) => !s.pair.same && s.guardsEqual).sort((x, y) => y.similarity - x.similarity).slice(0, 15);
  return ["Same pairs missed:", ...missed.map(line), "", "Different pairs with equal guards, most similar first:", ...closest.map(line)].join("\n") + "\n";
}
