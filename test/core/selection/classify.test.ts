// The classifier: task tags from words in six languages and from notation, a
// difficulty tier from length and rigour, a confidence; the same text, the same answer.
import { describe, expect, it } from "vitest";
import { classifyPrompt } from "../../../core/selection/classify.ts";

describe("classifyPrompt", () => {
  it.each([
    ["Write a Python function that reverses a linked list", "coding"],
    ["このコードのバグを直してください", "coding"],
    ["Corrige cette fonction JavaScript qui plante", "coding"],
    ["Berechne das Integral von x^2 dx von 0 bis 1", "math"],
    ["求解方程 x^2 - 5x + 6 = 0", "math"],
    ["Traduis ce texte en anglais : bonjour le monde", "translation"],
    ["请把这段话翻译成英文", "translation"],
    ["Übersetze bitte ins Englische: Guten Morgen", "translation"],
    ["Résume cet article en trois points", "summarisation"],
    ["Fasse diesen Bericht kurz zusammen", "summarisation"],
    ["この記事を要約してください", "summarisation"],
    ["Escribe un poema sobre el mar", "creative_writing"],
    ["写一首关于秋天的诗", "creative_writing"],
    ["Classify the sentiment of this review: great product", "classification"],
    ["Extrae todas las fechas del texto siguiente", "extraction"],
    ["Describe what you see in this screenshot", "vision"],
    ["Why does the sky look blue? Explain the reasoning step by step.", "reasoning"],
    ["Escreva uma crônica sobre um dia de chuva", "creative_writing"],
    ["Classifique o sentimento desta avaliação", "classification"],
    ["用Python怎么读取一个文本文件？", "coding"],
    ["Combien font 17 multiplié par 23 ?", "math"],
    ["How do you say 'good night' in Italian?", "translation"],
    ["다음 문장을 영어로 번역해 주세요", "translation"],
    ["Ist diese Bewertung positiv oder negativ?", "classification"],
    ["Transcribe the text on this whiteboard", "extraction"],
  ])("%s -> %s", (text, tag) => {
    expect(classifyPrompt(text).tags[0]).toBe(tag);
  });

  it("falls back to general chat, unsure, when nothing signals a task", () => {
    expect(classifyPrompt("hello there, how are you?")).toEqual({ tags: ["general_chat"], difficulty: "easy", confidence: 0.4 });
  });

  it("reads code from notation alone (a fenced block)", () => {
    expect(classifyPrompt("```\nconst x = compute();\nif (x) { run(); }\n```").tags).toContain("coding");
  });

  it("rates a greeting easy and a long rigorous request hard", () => {
    expect(classifyPrompt("hi!").difficulty).toBe("easy");
    const long = "Prove, step by step and rigorously, the bound on the algorithm's complexity, with every edge case. " + "Consider the distributed case too. ".repeat(200);
    expect(classifyPrompt(long).difficulty).toBe("hard");
  });

  it("rates a proof or a hard design hard, short non-trivial math medium, short arithmetic easy", () => {
    expect(classifyPrompt("Prove that every finite group of order p^2 is abelian.").difficulty).toBe("hard");
    expect(classifyPrompt("Demuestra que √2 es irracional.").difficulty).toBe("hard");
    expect(classifyPrompt("Design and implement a lock-free queue in C++.").difficulty).toBe("hard");
    expect(classifyPrompt("Compute the derivative of x^2 sin(x).").difficulty).toBe("medium");
    expect(classifyPrompt("What is 15% of 240?")).toMatchObject({ tags: ["math"], difficulty: "easy" });
  });

  it("reads a long prompt's instruction above its document: a report to summarise stays a medium summary", () => {
    const report = "The rollout reasons about load. Our code calls pool.acquire() -> conn; 62 % of calls failed; x = 3. ".repeat(60);
    const result = classifyPrompt("Summarise this report in five bullet points.\n\n" + report);
    expect(result).toMatchObject({ tags: ["summarisation"], difficulty: "medium" });
    // The same words as the instruction do make the tags.
    expect(classifyPrompt(report).tags).toContain("coding");
  });

  it("is more confident when one task clearly dominates", () => {
    const clear = classifyPrompt("Translate into French, translate into German, translate into Spanish");
    const mixed = classifyPrompt("Translate this poem and summarise it");
    expect(clear.confidence).toBeGreaterThan(mixed.confidence);
  });

  it("gives the same answer for the same text", () => {
    const text = "Refactor this TypeScript function and explain why it is faster: ```ts\nfunction f() {}\n```";
    expect(classifyPrompt(text)).toEqual(classifyPrompt(text));
  });
});
