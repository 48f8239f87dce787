// The semantic cache's built-in embedding: deterministic and lexical, so the
// cache works offline with no key and no model weights (none can be downloaded
// here). A text becomes its content words (stop words dropped, light plural
// stemming, accents folded), their pairs in order, their character 3- and
// 4-grams, and each direction word with the word it governs ("to" fahrenheit);
// Chinese and Japanese, written without spaces, become characters and
// character pairs and triples. Each feature is hashed (FNV-1a 32) into one of
// LEXICAL_DIMENSIONS signed slots with a sublinear weight (1 + ln count), and
// the vector is L2-normalised.
//
// Not Intl.Segmenter for Chinese and Japanese: its words follow the ICU data of
// the Node build, and vectors stored by one instance must equal those another
// computes. Character pairs need no dictionary and cost less.
//
// It sees words, not meanings: a synonym it has never been told about is a
// different word to it. docs/cache-similarity.md measures what that costs and
// how the threshold below was chosen.
import type { Embedder } from "./embedder.ts";
import { CJK_STOP_CHARACTERS, STOP_WORDS, foldAccents } from "./stop-words.ts";
import { CJK, forEachToken } from "./tokens.ts";

export const LEXICAL_EMBEDDER_ID = "lexical-v1";
/**
 * The lowest cosine similarity at which the labelled pairs of
 * test/core/cache/similarity-pairs.jsonl reach a precision of 0.99
 * (npm run eval:cache; docs/cache-similarity.md).
 */
export const LEXICAL_DEFAULT_THRESHOLD = 0.93;
/**
 * 512 slots: 2 KB a vector in Redis. 1024 scored the same on the labelled set;
 * 256 lets unrelated prompts collide more (docs/cache-similarity.md).
 */
export const LEXICAL_DIMENSIONS = 512;

/** Weights of each kind of feature, before the word's sublinear term frequency. */
const WORD_WEIGHT = 1;
/** Two content words in order: tells "Celsius to Fahrenheit" from "Fahrenheit to Celsius". */
const PAIR_WEIGHT = 0.6;
/** All of a word's character n-grams together: a typo keeps most of them. */
const CHARACTER_GRAMS_WEIGHT = 0.8;
const CJK_CHARACTER_WEIGHT = 0.7;
const CJK_PAIR_WEIGHT = 1;
/** Three characters: tells "華氏を" from "摂氏を" where the pairs around a particle agree. */
const CJK_TRIPLE_WEIGHT = 0.5;
/** A direction word with the word it governs: "to" fahrenheit is not "to" celsius, whatever the order of the rest. */
const ROLE_WEIGHT = 0.6;
/** Prepositions that say which way a conversion, a translation or a copy goes (stop words all, kept for this feature only). */
const DIRECTION_WORDS: ReadonlySet<string> = new Set(["to", "into", "from", "vers", "en", "nach", "ins", "von", "vom", "zu", "a", "al", "desde", "para", "pra", "do", "da", "в", "из", "во"]);

const CJK_LETTER = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー々〆]$/u;
const DIGIT = /[0-9]/;
const CYRILLIC = /\p{Script=Cyrillic}/u;
const APOSTROPHES = /[\u2018\u2019\u02bc`\u00b4]/g;

/** The sums of one vector being made: reused (a vector is made synchronously, start to end), so no allocation a call. */
const SUMS = new Float64Array(LEXICAL_DIMENSIONS);

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** Seeds that keep the kinds of feature apart: the word "ab" is not the character pair "ab". */
const WORD_SEED = FNV_OFFSET;
const PAIR_SEED = 0x9e3779b9;
const GRAM_SEED = 0x85ebca6b;
const CJK_PAIR_SEED = 0xc2b2ae35;
const CJK_TRIPLE_SEED = 0x27d4eb2f;
const ROLE_SEED = 0x165667b1;

export function createLexicalEmbedder(): Embedder {
  return {
    id: LEXICAL_EMBEDDER_ID,
    defaultThreshold: LEXICAL_DEFAULT_THRESHOLD,
    embed: async (texts) => texts.map(lexicalVector),
  };
}

/** The unit vector of one text (synchronous: the embedder wraps it). */
export function lexicalVector(text: string): Float32Array {
  const normalised = text.normalize("NFKC").toLowerCase().replace(APOSTROPHES, "'");
  const content = contentFeatures(normalised, true);
  // A prompt of stop words only ("who are you?" / "what is it?") is told apart by those words.
  const features = content.words.size > 0 ? content : contentFeatures(normalised, false);
  const sums = SUMS.fill(0);
  for (const [word, count] of features.words) addWord(sums, word, sublinear(count));
  for (const [hash, count] of features.wordPairs) add(sums, hash, PAIR_WEIGHT * sublinear(count));
  for (const [hash, count] of features.characterPairs) add(sums, hash, CJK_PAIR_WEIGHT * sublinear(count));
  for (const [hash, count] of features.characterTriples) add(sums, hash, CJK_TRIPLE_WEIGHT * sublinear(count));
  for (const [hash, count] of features.roles) add(sums, hash, ROLE_WEIGHT * sublinear(count));
  // Punctuation only: its characters.
  if (features.words.size === 0) addGrams(sums, normalised.trim(), 1);
  return unit(sums);
}

interface Features {
  /** Each content word and how often it occurs (a Chinese or Japanese character is a word). */
  words: Map<string, number>;
  /** The hash of each pair of neighbouring content words, and how often it occurs. */
  wordPairs: Map<number, number>;
  /** The same for neighbouring Chinese or Japanese characters (stop characters included: they bind words). */
  characterPairs: Map<number, number>;
  characterTriples: Map<number, number>;
  /** A direction word and the content word it governs ("to" fahrenheit, "from" mysql). */
  roles: Map<number, number>;
}

function contentFeatures(text: string, dropStopWords: boolean): Features {
  const features: Features = { words: new Map(), wordPairs: new Map(), characterPairs: new Map(), characterTriples: new Map(), roles: new Map() };
  const count = <K>(map: Map<K, number>, key: K) => map.set(key, (map.get(key) ?? 0) + 1);
  let previous = 0;
  let role = "";
  const addPart = (part: string) => {
    if (DIRECTION_WORDS.has(part)) role = part;
    if (part.length < 2 || (dropStopWords && STOP_WORDS.has(part))) return;
    const word = stem(part);
    if (role !== "") count(features.roles, mix(mix(ROLE_SEED, role), word));
    role = "";
    count(features.words, word);
    const hash = mix(WORD_SEED, word);
    if (previous !== 0) count(features.wordPairs, Math.imul(previous ^ PAIR_SEED, FNV_PRIME) ^ hash);
    previous = hash;
  };
  forEachToken(text, (token, kind, _start, ascii) => {
    if (kind === CJK) {
      const characters = [...token];
      for (let i = 0; i < characters.length; i++) {
        if (!dropStopWords || !CJK_STOP_CHARACTERS.has(characters[i])) count(features.words, characters[i]);
        if (i > 0) count(features.characterPairs, mix(CJK_PAIR_SEED, characters[i - 1] + characters[i]));
        if (i > 1) count(features.characterTriples, mix(CJK_TRIPLE_SEED, characters[i - 2] + characters[i - 1] + characters[i]));
      }
    } else if (ascii && !token.includes("'")) addPart(token);
    else for (const part of wordParts(token, ascii)) addPart(part);
  });
  return features;
}

/** "don't" is "do" and "not", "l'eau" is "l" and "eau" (the "l" a stop word); accents folded. */
function wordParts(token: string, ascii: boolean): string[] {
  const folded = !ascii && !CYRILLIC.test(token) ? foldAccents(token) : token;
  if (!folded.includes("'")) return [folded];
  if (folded.endsWith("n't")) {
    const base = folded.slice(0, -3);
    return [base === "ca" ? "can" : base === "wo" ? "will" : base === "sha" ? "shall" : base, "not"];
  }
  return folded.split("'");
}

/** Plurals and third persons: "lists" as "list", "queries" as "query"; never "class" or "analysis". */
function stem(word: string): string {
  if (word.length < 4 || !word.endsWith("s") || DIGIT.test(word)) return word;
  if (word.endsWith("ies") && word.length > 4) return word.slice(0, -3) + "y";
  if (word.endsWith("ss") || word.endsWith("us") || word.endsWith("is")) return word;
  return word.slice(0, -1);
}

function addWord(sums: Float64Array, word: string, weight: number): void {
  const single = word.length === 1 && CJK_LETTER.test(word);
  add(sums, mix(WORD_SEED, word), weight * (single ? CJK_CHARACTER_WEIGHT : WORD_WEIGHT));
  if (!single) addGrams(sums, word, weight * CHARACTER_GRAMS_WEIGHT);
}

/** The 3- and 4-grams of the word between boundary marks, hashed from its code units without slicing. */
function addGrams(sums: Float64Array, word: string, totalWeight: number): void {
  const length = word.length + 2;
  if (length < 3) return;
  const code = (i: number) => (i === 0 ? 2 : i === length - 1 ? 3 : word.charCodeAt(i - 1));
  // Each gram weighs 1/sqrt(grams) of the total: a long word is not worth much more than a short one.
  const weight = totalWeight / Math.sqrt(2 * length - 5);
  for (let start = 0; start + 3 <= length; start++) {
    let hash = GRAM_SEED;
    for (let k = 0; k < 4 && start + k < length; k++) {
      hash = Math.imul(hash ^ code(start + k), FNV_PRIME);
      if (k >= 2) add(sums, hash ^ k, weight);
    }
  }
}

/** The sign from the hash's top bit, the slot from its low bits (DIMENSIONS is a power of two). */
function add(sums: Float64Array, hash: number, weight: number): void {
  const mixed = Math.imul(hash ^ (hash >>> 16), 0x45d9f3b);
  sums[mixed & (LEXICAL_DIMENSIONS - 1)] += mixed < 0 ? -weight : weight;
}

/** FNV-1a 32 over the string's UTF-16 code units, from a seed. */
function mix(seed: number, text: string): number {
  let hash = seed;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME);
  return hash | 0;
}

const sublinear = (count: number) => 1 + Math.log(count);

function unit(sums: Float64Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < LEXICAL_DIMENSIONS; i++) norm += sums[i] * sums[i];
  const vector = new Float32Array(LEXICAL_DIMENSIONS);
  if (norm === 0) {
    // The empty text: one fixed feature, so every vector has unit length.
    vector[0] = 1;
    return vector;
  }
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < LEXICAL_DIMENSIONS; i++) vector[i] = sums[i] * scale;
  return vector;
}

/** The cosine similarity of two unit vectors of one space. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i] * b[i];
  return dot;
}
