// Step 2 of selection: what the prompt asks for (task tags), how hard it is and
// how sure we are, from deterministic signals: the lexicons of lexicons.ts (six
// languages), code and math notation, length, question structure. No model, no
// randomness: the same text always gives the same answer.
import { CJK_CHARACTER, CODE_NOTATION, EASY_SIGNALS, HARD_SIGNALS, MATH_NOTATION, MEDIUM_SIGNALS, STRONG_HARD_SIGNALS, TAG_PATTERNS } from "./lexicons.ts";
import { TASK_TAGS, type Difficulty, type TaskTag } from "./tags.ts";

export interface Classification {
  tags: string[];
  difficulty: Difficulty;
  confidence: number;
}

/** What the classifier saw, for the selection's explanation and the tests. */
export interface Signals {
  scores: Partial<Record<TaskTag, number>>;
  estimatedTokens: number;
  /** Hard signals, a strong one counting twice. */
  hardSignals: number;
  mediumSignals: number;
  easySignals: number;
  questions: number;
}

/** A tag is assigned when it scores at least this, and at least this share of the best tag's score. */
const MIN_TAG_SCORE = 1;
const MIN_SHARE_OF_BEST = 0.4;
const MAX_TAGS = 3;
/** Hits of one lexicon counted at most this many times: a long text repeating a word is not more of that task. */
const MAX_HITS = 6;
/**
 * Long prompts are classified on their first and last characters only: the
 * instruction is usually at one end, and the time stays bounded (issue 22: well
 * under 1 ms for 2,000 tokens).
 */
const HEAD_CHARACTERS = 6000;
const TAIL_CHARACTERS = 6000;
/** The instruction of a long prompt: its first characters and its last paragraph (at most this long). */
const INSTRUCTION_HEAD = 400;
const INSTRUCTION_TAIL = 400;
/** A hit in the body of a long prompt counts this much of one in its instruction: the body alone (hits capped) never makes a tag. */
const BODY_WEIGHT = 0.08;

export function classifyPrompt(text: string): Classification {
  return classifyWithSignals(text).classification;
}

export function classifyWithSignals(text: string): { classification: Classification; signals: Signals } {
  const sample = text.length > HEAD_CHARACTERS + TAIL_CHARACTERS ? text.slice(0, HEAD_CHARACTERS) + "\n" + text.slice(-TAIL_CHARACTERS) : text;
  const { instruction, body } = splitInstruction(sample);
  const scores: Partial<Record<TaskTag, number>> = {};
  for (const { tag, pattern } of TAG_PATTERNS) {
    const hits = weighted(instruction, body, pattern);
    if (hits > 0) scores[tag] = hits;
  }
  // Notation weighs as much as words: a fenced block or an equation is a strong sign.
  const code = weighted(instruction, body, CODE_NOTATION);
  if (code > 0) scores.coding = round((scores.coding ?? 0) + code * 0.75);
  const math = weighted(instruction, body, MATH_NOTATION);
  if (math > 0) scores.math = round((scores.math ?? 0) + math * 0.75);
  const estimatedTokens = estimateTokens(text);
  // How hard the request is comes from the request, not from the document it is about.
  const signals: Signals = {
    scores,
    estimatedTokens,
    hardSignals: countMatches(instruction, HARD_SIGNALS) + 2 * countMatches(instruction, STRONG_HARD_SIGNALS),
    mediumSignals: countMatches(instruction, MEDIUM_SIGNALS),
    easySignals: countMatches(instruction, EASY_SIGNALS),
    questions: countQuestions(instruction),
  };
  const tags = assignTags(scores);
  return { classification: { tags, difficulty: difficultyOf(signals, tags), confidence: confidenceOf(scores, tags) }, signals };
}

/**
 * The instruction of a long prompt apart from the body it is about: a document
 * to summarise that mentions code or reasons is not a coding or reasoning
 * request. The instruction is the opening paragraph (or the first characters
 * when that paragraph is longer); when the opening names no task, the
 * instruction may come after the document, and the last paragraph joins it.
 * A short prompt is all instruction.
 */
function splitInstruction(text: string): { instruction: string; body: string } {
  if (text.length <= INSTRUCTION_HEAD + INSTRUCTION_TAIL) return { instruction: text, body: "" };
  const firstBreak = text.indexOf("\n\n");
  const headEnd = firstBreak > 0 && firstBreak <= INSTRUCTION_HEAD ? firstBreak : INSTRUCTION_HEAD;
  const head = text.slice(0, headEnd);
  if (TAG_PATTERNS.some(({ pattern }) => countMatches(head, pattern) > 0)) return { instruction: head, body: text.slice(headEnd) };
  const trimmed = text.trimEnd();
  const lastBreak = trimmed.lastIndexOf("\n\n");
  const tailStart = Math.max(headEnd, lastBreak >= 0 && trimmed.length - lastBreak <= INSTRUCTION_TAIL ? lastBreak : trimmed.length - INSTRUCTION_TAIL);
  return { instruction: head + "\n" + trimmed.slice(tailStart), body: text.slice(headEnd, tailStart) };
}

/** Hits in the instruction, plus those in the body at a lower weight (each part capped on its own). */
function weighted(instruction: string, body: string, pattern: RegExp): number {
  const own = countMatches(instruction, pattern);
  return body === "" ? own : own + BODY_WEIGHT * countMatches(body, pattern);
}

function countMatches(text: string, pattern: RegExp): number {
  pattern.lastIndex = 0;
  let hits = 0;
  while (hits < MAX_HITS && pattern.exec(text) !== null) hits++;
  pattern.lastIndex = 0;
  return hits;
}

/** Tags by score, highest first (ties in TASK_TAGS order); general_chat when nothing else is signalled. */
function assignTags(scores: Partial<Record<TaskTag, number>>): TaskTag[] {
  const ranked = TASK_TAGS.filter((tag) => (scores[tag] ?? 0) >= MIN_TAG_SCORE).sort((a, b) => scores[b]! - scores[a]!);
  if (ranked.length === 0) return ["general_chat"];
  const best = scores[ranked[0]]!;
  return ranked.filter((tag) => scores[tag]! >= best * MIN_SHARE_OF_BEST).slice(0, MAX_TAGS);
}

/**
 * Points for length, rigour words (a proof or a hard design counts twice),
 * notation and several questions; one for a request past the trivial; minus
 * for greetings and very short text. 0 or less: easy; 1-2: medium; 3 or more: hard.
 * Length gives one point at most: a long document to summarise is not hard by its length.
 */
function difficultyOf(signals: Signals, tags: readonly TaskTag[]): Difficulty {
  let points = 0;
  if (signals.estimatedTokens > 300) points += 1;
  else if (signals.estimatedTokens < 30 && signals.hardSignals === 0 && signals.mediumSignals === 0) points -= 1;
  points += Math.min(signals.hardSignals, 3);
  if (signals.mediumSignals > 0) points += 1;
  if (signals.questions >= 3) points += 1;
  if (tags.some((tag) => tag === "coding" || tag === "math" || tag === "reasoning")) points += 1;
  if (tags.length >= 2 && tags[0] !== "general_chat") points += 1;
  if (signals.easySignals > 0 && signals.estimatedTokens < 60) points -= 1;
  return points >= 3 ? "hard" : points >= 1 ? "medium" : "easy";
}

/**
 * How clearly one reading wins: the signal's strength (more hits, surer) times
 * the best tag's share of all the scores. Nothing signalled: general chat by default, unsure.
 */
function confidenceOf(scores: Partial<Record<TaskTag, number>>, tags: readonly TaskTag[]): number {
  if (tags[0] === "general_chat") return 0.4;
  const values = Object.values(scores) as number[];
  const total = values.reduce((sum, value) => sum + value, 0);
  const best = scores[tags[0]]!;
  const strength = 1 - Math.exp(-best / 2);
  const share = best / total;
  return round(Math.min(0.99, Math.max(0.3, 0.5 * strength + 0.5 * share)));
}

/** About 4 characters a token, one per Chinese or Japanese character. */
export function estimateTokens(text: string): number {
  CJK_CHARACTER.lastIndex = 0;
  let cjk = 0;
  // Counting to a bound is enough to tell the tiers apart.
  while (cjk < 4000 && CJK_CHARACTER.exec(text) !== null) cjk++;
  CJK_CHARACTER.lastIndex = 0;
  return Math.ceil((text.length - cjk) / 4) + cjk;
}

function countQuestions(text: string): number {
  let questions = 0;
  for (let i = text.indexOf("?"); i !== -1 && questions < MAX_HITS; i = text.indexOf("?", i + 1)) questions++;
  for (let i = text.indexOf("？"); i !== -1 && questions < MAX_HITS; i = text.indexOf("？", i + 1)) questions++;
  return questions;
}

const round = (value: number) => Math.round(value * 100) / 100;
