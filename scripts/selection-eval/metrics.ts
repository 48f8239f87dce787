// The evaluation's accuracy numbers: tag precision and recall (micro and per
// tag), top-1 and top-3 candidate accuracy against the acceptable models, and
// how often the difficulty tier matches the label.
import type { Selection } from "../../core/selection/select.ts";
import { TASK_TAGS } from "../../core/selection/tags.ts";
import type { LabelledPrompt } from "./labelled-set.ts";

export interface Outcome {
  prompt: LabelledPrompt;
  selection: Selection;
}

export interface TagScore {
  tag: string;
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  /** Of the prompts given the tag, the share labelled with it (1 when the tag was never given). */
  precision: number;
  /** Of the prompts labelled with the tag, the share given it. */
  recall: number;
}

export function tagScores(outcomes: readonly Outcome[]): { micro: TagScore; perTag: TagScore[] } {
  const perTag = TASK_TAGS.map((tag) => {
    let truePositives = 0;
    let falsePositives = 0;
    let falseNegatives = 0;
    for (const { prompt, selection } of outcomes) {
      const expected = prompt.tags.includes(tag);
      const assigned = selection.assignedTags.includes(tag);
      if (expected && assigned) truePositives++;
      else if (assigned) falsePositives++;
      else if (expected) falseNegatives++;
    }
    return score(tag, truePositives, falsePositives, falseNegatives);
  });
  const sum = (key: "truePositives" | "falsePositives" | "falseNegatives") => perTag.reduce((total, s) => total + s[key], 0);
  return { micro: score("micro", sum("truePositives"), sum("falsePositives"), sum("falseNegatives")), perTag };
}

function score(tag: string, truePositives: number, falsePositives: number, falseNegatives: number): TagScore {
  const ratio = (part: number, whole: number) => (whole === 0 ? 1 : part / whole);
  return { tag, truePositives, falsePositives, falseNegatives, precision: ratio(truePositives, truePositives + falsePositives), recall: ratio(truePositives, truePositives + falseNegatives) };
}

/** The share of prompts where one of the first `k` candidates is acceptable (k = 1: the selected model). */
export function topKAccuracy(outcomes: readonly Outcome[], k: number): number {
  const hits = outcomes.filter(({ prompt, selection }) => selection.topCandidates.slice(0, k).some((candidate) => prompt.acceptable.has(candidate.model)));
  return share(hits.length, outcomes.length);
}

/** The share of prompts whose difficulty tier is the labelled one. */
export function difficultyAccuracy(outcomes: readonly Outcome[]): number {
  return share(outcomes.filter(({ prompt, selection }) => prompt.difficulty === selection.difficulty).length, outcomes.length);
}

const share = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);
