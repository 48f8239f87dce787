// The evaluation as markdown: the numbers (for stdout and the docs) and the
// misses (for tuning the selector's lexicons and quality scores).
import { DIFFICULTIES } from "../../core/selection/tags.ts";
import type { Evaluation } from "./evaluate.ts";
import type { LabelledSet } from "./labelled-set.ts";
import { difficultyAccuracy, topKAccuracy } from "./metrics.ts";

const percent = (value: number) => `${(value * 100).toFixed(1)} %`;

export function renderResults(set: LabelledSet, main: Evaluation, byPreference: readonly Evaluation[]): string {
  const languages = new Set(set.prompts.map((p) => p.lang));
  const { micro, perTag } = main.tags;
  const lines = [
    `${set.prompts.length} labelled prompts, ${languages.size} languages (${[...languages].join(", ")}); selector at the configured preference.`,
    "",
    "| measure | value |",
    "| --- | --- |",
    `| tag precision (micro) | ${percent(micro.precision)} |`,
    `| tag recall (micro) | ${percent(micro.recall)} |`,
    `| top-1 accuracy (selected model acceptable) | ${percent(main.top1)} |`,
    `| top-3 accuracy (an acceptable model in the first three) | ${percent(main.top3)} |`,
    `| difficulty tier as labelled | ${percent(main.difficulty)} |`,
    `| cost saved against the most capable model (${main.cost.mostCapableModel}) | ${percent(main.cost.saved)} ($${main.cost.selected.toFixed(4)} against $${main.cost.mostCapable.toFixed(4)}) |`,
    "",
    "| tag | labelled | precision | recall |",
    "| --- | --- | --- | --- |",
    ...perTag.map((s) => `| ${s.tag} | ${s.truePositives + s.falseNegatives} | ${percent(s.precision)} | ${percent(s.recall)} |`),
    "",
    "| labelled difficulty | prompts | top-1 | top-3 | tier as labelled |",
    "| --- | --- | --- | --- | --- |",
    ...DIFFICULTIES.map((difficulty) => {
      const outcomes = main.outcomes.filter((o) => o.prompt.difficulty === difficulty);
      return `| ${difficulty} | ${outcomes.length} | ${percent(topKAccuracy(outcomes, 1))} | ${percent(topKAccuracy(outcomes, 3))} | ${percent(difficultyAccuracy(outcomes))} |`;
    }),
    "",
    "| preference | top-1 | top-3 | cost saved |",
    "| --- | --- | --- | --- |",
    ...byPreference.map((e) => `| ${e.preference} | ${percent(e.top1)} | ${percent(e.top3)} | ${percent(e.cost.saved)} |`),
  ];
  return lines.join("\n") + "\n";
}

/** Every prompt whose tags or selected model miss the label, grouped by labelled tag. */
export function renderMisses(main: Evaluation): string {
  const lines: string[] = [];
  for (const { prompt, selection } of main.outcomes) {
    const tagsMiss = prompt.tags.some((t) => !selection.assignedTags.includes(t)) || selection.assignedTags.some((t) => !prompt.tags.includes(t));
    const modelMiss = !prompt.acceptable.has(selection.selectedModel);
    if (!tagsMiss && !modelMiss) continue;
    const excerpt = prompt.prompt.replace(/\s+/g, " ").slice(0, 70);
    lines.push(
      `- ${prompt.id} [${prompt.tags.join(",")} ${prompt.difficulty}] got [${selection.assignedTags.join(",")} ${selection.difficulty}] -> ${selection.selectedModel || selection.error}${modelMiss ? " (not acceptable)" : ""}: ${excerpt}`,
    );
  }
  return lines.join("\n") + "\n";
}
