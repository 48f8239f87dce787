// The evaluation's cost model: what the selected model would cost against
// always sending the request to the most capable model.
// - A request costs input tokens × prompt price + output tokens × completion
//   price, at the prices of the model's cheapest usable route.
// - Input tokens: the prompt's text counted with gpt-tokenizer (o200k); images
//   are not counted (the same for both sides).
// - Output tokens: a fixed answer length per labelled difficulty (OUTPUT_TOKENS).
// - The most capable model: of the models router/auto may pick that can serve
//   the request, the one with the highest mean quality over the ten task tags
//   (a tag without a score counts as the model's mean, as the ranking does);
//   ties go to the dearer model, then to the smaller id.
import { countTokens } from "gpt-tokenizer";
import { formatMoney, type Money } from "../../core/billing/money.ts";
import type { Catalogue } from "../../core/catalogue/catalogue.ts";
import { filterCandidates, type Candidate } from "../../core/selection/filter.ts";
import { TASK_TAGS, type Difficulty, type QualityScores } from "../../core/selection/tags.ts";
import type { Outcome } from "./metrics.ts";

/** Answer length assumed per difficulty: a short reply, a page, a long reasoned answer. */
export const OUTPUT_TOKENS: Record<Difficulty, number> = { easy: 250, medium: 700, hard: 2000 };

export interface CostSummary {
  /** Summed over the set, in USD. */
  selected: number;
  mostCapable: number;
  /** 1 - selected / mostCapable. */
  saved: number;
  /** The most capable model for a text prompt (image prompts may get another: the most capable that takes images). */
  mostCapableModel: string;
}

export function costSummary(outcomes: readonly Outcome[], catalogue: Catalogue): CostSummary {
  let selected = 0n;
  let mostCapable = 0n;
  let textBaseline = "";
  for (const { prompt, selection } of outcomes) {
    const candidates = filterCandidates(prompt.needs, catalogue, { modelPatterns: catalogue.selection?.models }).candidates;
    const best = mostCapableOf(candidates);
    if (!best) continue;
    if (!prompt.image) textBaseline ||= best.model.config.id;
    const chosen = candidates.find((c) => c.model.config.id === selection.selectedModel) ?? best;
    const input = countTokens(prompt.text);
    const output = OUTPUT_TOKENS[prompt.difficulty as Difficulty];
    selected += requestCost(chosen, input, output);
    mostCapable += requestCost(best, input, output);
  }
  const usd = (amount: Money) => Number(formatMoney(amount));
  return { selected: usd(selected), mostCapable: usd(mostCapable), saved: mostCapable === 0n ? 0 : 1 - usd(selected) / usd(mostCapable), mostCapableModel: textBaseline };
}

export function requestCost(candidate: Candidate, inputTokens: number, outputTokens: number): Money {
  const { prompt, completion } = candidate.routes[0].prices;
  return BigInt(inputTokens) * prompt + BigInt(outputTokens) * completion;
}

export function mostCapableOf(candidates: readonly Candidate[]): Candidate | undefined {
  const scored = candidates.map((candidate) => ({ candidate, quality: meanQuality(candidate.model.config.quality as QualityScores | undefined), price: requestCost(candidate, 1, 1) }));
  scored.sort((a, b) => b.quality - a.quality || (a.price > b.price ? -1 : a.price < b.price ? 1 : 0) || (a.candidate.model.config.id < b.candidate.model.config.id ? -1 : 1));
  return scored[0]?.candidate;
}

function meanQuality(quality: QualityScores | undefined): number {
  const given = Object.values(quality ?? {}) as number[];
  if (given.length === 0) return 0;
  const mean = given.reduce((sum, value) => sum + value, 0) / given.length;
  return TASK_TAGS.reduce((sum, tag) => sum + (quality?.[tag] ?? mean), 0) / TASK_TAGS.length;
}
