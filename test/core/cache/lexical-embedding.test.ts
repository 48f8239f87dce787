// The built-in lexical embedding (core/cache/embedding/lexical.ts): unit
// vectors, the same bytes for the same text on every run and machine, and
// blind where it is designed to be (case, punctuation, accents, contractions,
// politeness) but not to what changes the question (the words, their
// direction).
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { cosine, createLexicalEmbedder, LEXICAL_DEFAULT_THRESHOLD, LEXICAL_DIMENSIONS, LEXICAL_EMBEDDER_ID, lexicalVector } from "../../../core/cache/embedding/lexical.ts";

const norm = (vector: Float32Array) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
const similarity = (a: string, b: string) => cosine(lexicalVector(a), lexicalVector(b));
const digest = (vector: Float32Array) => createHash("sha256").update(vector).digest("hex");

describe("the lexical embedder", () => {
  it("names its space and its measured threshold, and embeds texts in order", async () => {
    const embedder = createLexicalEmbedder();
    expect(embedder.id).toBe(LEXICAL_EMBEDDER_ID);
    expect(embedder.id).toBe("lexical-v1");
    expect(embedder.defaultThreshold).toBe(LEXICAL_DEFAULT_THRESHOLD);
    const texts = ["What is the capital of France?", "Write a haiku about rain.", "法国的首都是哪里？"];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(3);
    vectors.forEach((vector, i) => {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector).toHaveLength(LEXICAL_DIMENSIONS);
      expect(vector).toEqual(lexicalVector(texts[i]));
    });
  });

  it("gives unit vectors for any text: short, long, Chinese and Japanese, punctuation only, empty", () => {
    const texts = ["hi", "Who are you?", "?!", "", "   ", "富士山の高さを教えてください。", "Как приготовить борщ?", "word ".repeat(5000), "🙂🙂"];
    for (const text of texts) {
      const vector = lexicalVector(text);
      expect(vector.every(Number.isFinite), text).toBe(true);
      expect(norm(vector), JSON.stringify(text.slice(0, 20))).toBeCloseTo(1, 5);
    }
  });

  it("is deterministic: a fixed text's vector has pinned bytes", () => {
    // Changing these digests changes every stored vector: rename the space (lexical-v2) when they must change.
    expect(digest(lexicalVector("How do I reverse a list in Python? Don't use slicing, and keep it under 10 lines."))).toBe(
      "83568b35e9a4069c546fd206213a04ed81756e5a58c33db10b56c4498f57b7c5",
    );
    expect(digest(lexicalVector("请把这段代码改成异步的，不要用回调。"))).toBe("c420080c2a44cf035dea07c383d4f14e9bf9ce13c4c7ab2b8d574033641bb9b3");
  });

  it("ignores case, punctuation, accents, contractions and politeness", () => {
    const same = (a: string, b: string) => expect(lexicalVector(a), `${a} / ${b}`).toEqual(lexicalVector(b));
    same("What is the capital of France?", "what is the capital of france");
    same("HOW DO I DELETE A BRANCH IN GIT", "How do I delete a branch in Git?!");
    same("Quelle est la meilleure période pour visiter la Grèce ?", "Quelle est la meilleure periode pour visiter la Grece");
    same("My code doesn't compile.", "My code does not compile.");
    same("It\u2019s not working", "It's not working");
    same("Please, could you tell me the capital of Canada? Thanks!", "The capital of Canada");
    same("Which lists are sorted?", "Which list is sorted?");
  });

  it("keeps a reordered question close, above the default threshold", () => {
    expect(similarity("How do I rename a local branch with Git?", "With Git, how do I rename a local branch?")).toBeGreaterThanOrEqual(LEXICAL_DEFAULT_THRESHOLD);
  });

  it("tells apart a changed direction, entity or question word, below the default threshold", () => {
    expect(similarity("Convert Celsius to Fahrenheit.", "Convert Fahrenheit to Celsius.")).toBeLessThan(LEXICAL_DEFAULT_THRESHOLD);
    expect(similarity("摂氏を華氏に変換してください。", "華氏を摂氏に変換してください。")).toBeLessThan(LEXICAL_DEFAULT_THRESHOLD);
    expect(similarity("What is the capital of France?", "What is the capital of Spain?")).toBeLessThan(LEXICAL_DEFAULT_THRESHOLD);
    expect(similarity("Why is the sky blue?", "How is the sky blue?")).toBeLessThan(LEXICAL_DEFAULT_THRESHOLD);
    // A prompt of stop words only is made of those words, not of nothing.
    expect(similarity("Who are you?", "What is it?")).toBeLessThan(0.5);
  });

  it("keeps a typo close: most character n-grams survive it", () => {
    const typo = similarity("Can you explian how a hash map works internally?", "Can you explain how a hash map works internally?");
    const otherWord = similarity("Can you explain how a hash map works internally?", "Can you explain how a bloom filter works internally?");
    expect(typo).toBeGreaterThan(otherWord);
    expect(typo).toBeGreaterThan(0.8);
  });
});
