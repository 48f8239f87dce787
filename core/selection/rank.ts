// Step 3 of selection: order the candidates by quality for the prompt's tags,
// then let the cheapest within a margin of the best win.
import type { Candidate } from "./filter.ts";
import type { Difficulty } from "./tags.ts";

export interface RankedCandidate {
  candidate: Candidate;
  score: number;
  why: string;
}

export function rankCandidates(candidates: Candidate[], tags: readonly string[], difficulty: Difficulty, preference: number): RankedCandidate[] {
  void tags;
  void difficulty;
  void preference;
  return candidates.map((candidate) => ({ candidate, score: 0.5, why: "no quality scores yet" }));
}
