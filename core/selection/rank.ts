// Step 3 of selection: score each candidate by its quality on the prompt's
// tags, then let the cheapest within a margin of the best win (a Pareto pick:
// the margin is wider for easy prompts and for a preference leaning to cost).
import { formatMoney } from "../billing/money.ts";
import type { Candidate } from "./filter.ts";
import type { Difficulty, QualityScores, TaskTag } from "./tags.ts";

export interface RankedCandidate {
  candidate: Candidate;
  score: number;
  why: string;
}

/** The widest margin (at preference 0) per difficulty: an easy prompt is served well by more models. */
const MAX_MARGIN: Record<Difficulty, number> = { easy: 0.4, medium: 0.25, hard: 0.12 };

/** A model with no score for a tag (and none at all): neither favoured nor penalised. */
const NEUTRAL_QUALITY = 0.5;

export function marginFor(difficulty: Difficulty, preference: number): number {
  return round(MAX_MARGIN[difficulty] * (1 - preference));
}

export function rankCandidates(candidates: Candidate[], tags: readonly string[], difficulty: Difficulty, preference: number): RankedCandidate[] {
  const scored = candidates.map((candidate) => {
    const quality = candidate.model.config.quality as QualityScores | undefined;
    const perTag = tags.map((tag) => ({ tag, value: qualityOf(quality, tag as TaskTag) }));
    const score = round(perTag.reduce((sum, { value }) => sum + value, 0) / perTag.length);
    return { candidate, score, perTag, price: priceOf(candidate) };
  });
  if (scored.length === 0) return [];
  const best = Math.max(...scored.map((s) => s.score));
  const margin = marginFor(difficulty, preference);
  const floor = round(best - margin);
  const byPrice = (a: (typeof scored)[number], b: (typeof scored)[number]) => (a.price < b.price ? -1 : a.price > b.price ? 1 : 0);
  const byScore = (a: (typeof scored)[number], b: (typeof scored)[number]) => b.score - a.score;
  const byId = (a: (typeof scored)[number], b: (typeof scored)[number]) => (a.candidate.model.config.id < b.candidate.model.config.id ? -1 : 1);
  // Within the margin: cheapest first; below it: best first. Ids break the last ties, so the order never depends on the catalogue's.
  const within = scored.filter((s) => s.score >= floor).sort((a, b) => byPrice(a, b) || byScore(a, b) || byId(a, b));
  const below = scored.filter((s) => s.score < floor).sort((a, b) => byScore(a, b) || byPrice(a, b) || byId(a, b));
  return [...within, ...below].map((s, index) => ({
    candidate: s.candidate,
    score: s.score,
    why: `${s.perTag.map(({ tag, value }) => `${tag} ${value}`).join(", ")}; ${perMillion(s.candidate)}; ` + placement(index, s.score >= floor, best, margin),
  }));
}

function placement(index: number, within: boolean, best: number, margin: number): string {
  if (!within) return `below the margin (best ${best} - ${margin})`;
  return index === 0 ? `cheapest within ${margin} of the best score ${best}` : `within ${margin} of the best score, dearer`;
}

/** The model's score for a tag; a tag it has no score for counts as the mean of its scores. */
function qualityOf(quality: QualityScores | undefined, tag: TaskTag): number {
  if (!quality) return NEUTRAL_QUALITY;
  const own = quality[tag];
  if (own !== undefined) return own;
  const values = Object.values(quality) as number[];
  return values.length > 0 ? round(values.reduce((sum, value) => sum + value, 0) / values.length) : NEUTRAL_QUALITY;
}

/** Prompt plus completion price of the cheapest fitting route, per token (exact money). */
const priceOf = (candidate: Candidate) => candidate.routes[0].prices.prompt + candidate.routes[0].prices.completion;

function perMillion(candidate: Candidate): string {
  const { prompt, completion } = candidate.routes[0].prices;
  return `$${formatMoney(prompt * 1_000_000n)} in, $${formatMoney(completion * 1_000_000n)} out per million tokens`;
}

const round = (value: number) => Math.round(value * 1000) / 1000;
