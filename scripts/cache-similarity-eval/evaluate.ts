// The semantic cache's match rule on the labelled pairs: a pair is predicted
// "same" when the cosine similarity of its embeddings is at or above the
// threshold AND its prompt guards are equal (what the index does). Precision
// and recall at every threshold from 0.50 to 1.00, and the default threshold:
// the lowest whose precision reaches the target.
import type { Embedder } from "../../core/cache/embedding/embedder.ts";
import { promptGuard } from "../../core/cache/embedding/prompt-guard.ts";
import type { LabelledPair } from "./labelled-pairs.ts";

export const TARGET_PRECISION = 0.99;
/** 0.50, 0.51, ... 1.00, computed from integers so that no 0.57000000001 creeps in. */
export const THRESHOLDS: readonly number[] = Array.from({ length: 51 }, (_, i) => (50 + i) / 100);
/** Float32 rounding: a text's vector with itself may come out 0.99999994. */
const EPSILON = 1e-6;

export interface ScoredPair {
  pair: LabelledPair;
  similarity: number;
  guardsEqual: boolean;
}

export interface ThresholdScore {
  threshold: number;
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  /** Of the pairs predicted same, the share labelled same (1 when none is predicted). */
  precision: number;
  /** Of the pairs labelled same, the share predicted same. */
  recall: number;
}

export interface SimilarityEvaluation {
  scored: ScoredPair[];
  sweep: ThresholdScore[];
  /** The lowest threshold reaching TARGET_PRECISION (1 when none does below). */
  chosen: ThresholdScore;
}

export async function scorePairs(pairs: readonly LabelledPair[], embedder: Embedder): Promise<ScoredPair[]> {
  const vectors = await embedder.embed(pairs.flatMap((pair) => [pair.a, pair.b]));
  return pairs.map((pair, i) => ({
    pair,
    similarity: dot(vectors[2 * i], vectors[2 * i + 1]),
    guardsEqual: promptGuard(pair.a) === promptGuard(pair.b),
  }));
}

export const predictedSame = (scored: ScoredPair, threshold: number) => scored.guardsEqual && scored.similarity >= threshold - EPSILON;

export function scoreAt(scored: readonly ScoredPair[], threshold: number): ThresholdScore {
  let truePositives = 0;
  let falsePositives = 0;
  let falseNegatives = 0;
  for (const entry of scored) {
    const predicted = predictedSame(entry, threshold);
    if (predicted && entry.pair.same) truePositives++;
    else if (predicted) falsePositives++;
    else if (entry.pair.same) falseNegatives++;
  }
  const ratio = (part: number, whole: number) => (whole === 0 ? 1 : part / whole);
  return {
    threshold,
    truePositives,
    falsePositives,
    falseNegatives,
    precision: ratio(truePositives, truePositives + falsePositives),
    recall: ratio(truePositives, truePositives + falseNegatives),
  };
}

export async function evaluateSimilarity(pairs: readonly LabelledPair[], embedder: Embedder): Promise<SimilarityEvaluation> {
  const scored = await scorePairs(pairs, embedder);
  const sweep = THRESHOLDS.map((threshold) => scoreAt(scored, threshold));
  const chosen = sweep.find((row) => row.precision >= TARGET_PRECISION) ?? sweep[sweep.length - 1];
  return { scored, sweep, chosen };
}

/** Per kind of pair at one threshold: how many, and how many the rule calls same. */
export function kindsAt(scored: readonly ScoredPair[], threshold: number): { kind: string; same: boolean; pairs: number; predictedSame: number }[] {
  const kinds = new Map<string, { kind: string; same: boolean; pairs: number; predictedSame: number }>();
  for (const entry of scored) {
    const row = kinds.get(entry.pair.kind) ?? { kind: entry.pair.kind, same: entry.pair.same, pairs: 0, predictedSame: 0 };
    row.pairs++;
    if (predictedSame(entry, threshold)) row.predictedSame++;
    kinds.set(entry.pair.kind, row);
  }
  return [...kinds.values()].sort((x, y) => Number(y.same) - Number(x.same) || x.kind.localeCompare(y.kind));
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}
