// The prompt guard (core/cache/embedding/prompt-guard.ts): two prompts that
// differ in one number or one negation never share a guard, in any language
// it covers; two ways of writing the same number or negation do.
import { describe, expect, it } from "vitest";
import { canonicalNumber, promptGuard } from "../../../core/cache/embedding/prompt-guard.ts";

const differ = (a: string, b: string) => expect(promptGuard(a), `${a} / ${b}`).not.toBe(promptGuard(b));
const agree = (a: string, b: string) => expect(promptGuard(a), `${a} / ${b}`).toBe(promptGuard(b));

describe("the prompt guard's numbers", () => {
  it("changes with any one number, in digits or in words, in every language", () => {
    differ("Convert 5 kilometers to miles.", "Convert 6 kilometers to miles.");
    differ("What is 15% of 80?", "What is 15% of 90?");
    differ("Convert 2.5 hours to minutes.", "Convert 2.25 hours to minutes.");
    differ("What's new in Python 3.12?", "What's new in Python 3.11?");
    differ("Give me two examples.", "Give me three examples.");
    differ("Give me 2 examples.", "Give me three examples.");
    differ("What is -5 degrees Celsius in Fahrenheit?", "What is 5 degrees Celsius in Fahrenheit?");
    differ("Écris un poème de trois strophes.", "Écris un poème de quatre strophes.");
    differ("Combien font 2,5 fois 4 ?", "Combien font 3,5 fois 4 ?");
    differ("Schreib ein Gedicht mit drei Strophen.", "Schreib ein Gedicht mit vier Strophen.");
    differ("Escribe un poema de tres estrofas.", "Escribe un poema de cinco estrofas.");
    differ("Переведи 5 миль в километры.", "Переведи 9 миль в километры.");
    differ("写一首三段的诗。", "写一首四段的诗。");
    differ("把5公里换算成英里。", "把8公里换算成英里。");
    differ("秋についての三行の詩を書いてください。", "秋についての五行の詩を書いてください。");
    differ("５キロメートルをマイルに換算してください。", "７キロメートルをマイルに換算してください。");
  });

  it("keeps the numbers' order: 10 divided by 2 is not 2 divided by 10", () => {
    differ("What is 10 divided by 2?", "What is 2 divided by 10?");
    differ("Give me 3 examples in two sentences.", "Give me two examples in 3 sentences.");
  });

  it("writes one number one way: decimal commas, grouping, full-width digits, leading and trailing zeros", () => {
    agree("Combien font 2,5 fois 4 ?", "Combien font 2.5 fois 4 ?");
    agree("Invest $10,000 for a year", "Invest $10000 for a year");
    agree("1,000,000 rows", "1000000 rows");
    agree("Calcule sur 1\u202f000 €", "Calcule sur 1000 €");
    agree("２０２４年", "2024年");
    agree("二〇二四年", "2024年");
    agree("price 2.50", "price 2.5");
    agree("chapter 07", "chapter 7");
    agree("Give me one example.", "Give me an example.");
    expect(canonicalNumber("1.234,5")).toBe("1234.5");
    expect(canonicalNumber("1,234.5")).toBe("1234.5");
    expect(canonicalNumber("2.500")).toBe("2.500");
    expect(canonicalNumber("3.11.2")).toBe("3.11.2");
    expect(canonicalNumber("-0")).toBe("0");
  });

  it("reads Chinese and Japanese numerals, not the 一 of 一个 or 一下", () => {
    expect(promptGuard("十二个苹果")).toBe("12|0");
    expect(promptGuard("两百块")).toBe("200|0");
    expect(promptGuard("三万五千人")).toBe("35000|0");
    agree("写一个函数", "写个函数");
  });

  it("stays short for a long text full of numbers (a digest of itself)", () => {
    const long = Array.from({ length: 200 }, (_, i) => `step ${i}`).join(", ");
    expect(promptGuard(long)).toMatch(/^#[\w-]{43}$/);
    expect(promptGuard(long)).toBe(promptGuard(long));
    expect(promptGuard(long)).not.toBe(promptGuard(long.replace("step 150", "step 151")));
  });
});

describe("the prompt guard's negations", () => {
  it("changes when one negation is added, in every language", () => {
    differ("Write a function that uses recursion.", "Write a function that doesn't use recursion.");
    differ("Give me a recipe with onions.", "Give me a recipe without onions.");
    differ("Which animals can see in color?", "Which animals cannot see in color?");
    differ("Which fruits have seeds?", "Which fruits have no seeds?");
    differ("Mention my salary.", "Never mention my salary.");
    differ("Écris une fonction qui utilise la récursivité.", "Écris une fonction qui n'utilise pas la récursivité.");
    differ("Donne-moi une recette avec du gluten.", "Donne-moi une recette sans gluten.");
    differ("Schreib eine Funktion, die Rekursion verwendet.", "Schreib eine Funktion, die keine Rekursion verwendet.");
    differ("Warum funktioniert mein WLAN?", "Warum funktioniert mein WLAN nicht?");
    differ("Dame una receta con cebolla.", "Dame una receta sin cebolla.");
    differ("Traduza: eu gosto de café.", "Traduza: eu não gosto de café.");
    differ("Perché il mio cane abbaia?", "Perché il mio cane non abbaia mai?");
    differ("Напиши функцию, которая использует рекурсию.", "Напиши функцию, которая не использует рекурсию.");
    differ("我的猫为什么吃草？", "我的猫为什么不吃草？");
    differ("翻译成英文：我有时间。", "翻译成英文：我没有时间。");
    differ("再帰を使うPython関数を書いてください。", "再帰を使わないPython関数を書いてください。");
    differ("時間があります。", "時間がありません。");
  });

  it("counts a negation once however it is written: contractions, curly apostrophes, no apostrophe", () => {
    agree("I don't know why", "I do not know why");
    agree("I don\u2019t know why", "I do not know why");
    agree("it dont work", "it does not work");
    agree("Why can't I import it?", "Why cannot I import it?");
    agree("Use no recursion", "Never use recursion");
  });

  it("does not count words that hold a negation's character without negating", () => {
    expect(promptGuard("这两个有什么不同？特别是性能")).toBe("2|0");
    expect(promptGuard("非常に難しい")).toBe("|0");
    expect(promptGuard("未来的计划")).toBe("|0");
  });
});
