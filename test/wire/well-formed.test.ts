// mayHoldLoneSurrogate decides from a body's (or a record's) JSON text whether
// its parsed value must be walked for lone surrogates. It may raise a false
// alarm (a walk that changes nothing) but never miss one: a miss would let a
// lone surrogate into a Redis record that cannot be read back. Properties over
// any text, written with any mix of raw characters and escapes (fixed seed).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeWellFormed, mayHoldLoneSurrogate } from "../../wire/well-formed.ts";

const RUNS = { numRuns: 2_000, seed: 20261127 };

/** Units that make escapes and near-escapes: surrogate halves, backslashes, and the letters of `\ud800`. */
const unit = fc.oneof(
  fc.constantFrom("\ud800", "\udbff", "\udc00", "\udfff", "😀", "\\", "u", "d", "D", "8", "c", "0", '"', "a", "\n", "\u0001", "é"),
  fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
);
const text = fc.string({ unit, maxLength: 24 });

/**
 * `value` as a JSON string literal, each character written raw or as `\uXXXX`
 * (lower or upper case hex) as `escape` says, the way different clients'
 * encoders write it; a lone surrogate, which UTF-8 cannot carry raw, is always an escape.
 */
function jsonString(value: string, escape: boolean[], upper: boolean): string {
  let json = '"';
  let i = 0;
  for (const character of value) {
    const lone = character.length === 1 && !character.isWellFormed();
    if (lone || escape[i++ % escape.length]) {
      for (let j = 0; j < character.length; j++) {
        const hex = character.charCodeAt(j).toString(16).padStart(4, "0");
        json += `\\u${upper ? hex.toUpperCase() : hex}`;
      }
    } else json += JSON.stringify(character).slice(1, -1);
  }
  return `${json}"`;
}

describe("mayHoldLoneSurrogate", () => {
  it("never misses a lone surrogate, however the text was escaped", () => {
    fc.assert(
      fc.property(text, text, fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }), fc.boolean(), (key, value, escape, upper) => {
        const json = `{${jsonString(key, escape, upper)}:[${jsonString(value, escape, upper)}]}`;
        const parsed = JSON.parse(json) as Record<string, string[]>;
        const wellFormed = Object.entries(parsed).every(([name, [item]]) => name.isWellFormed() && item.isWellFormed());
        if (!wellFormed) expect(mayHoldLoneSurrogate(json), json).toBe(true);
      }),
      RUNS,
    );
  });

  it("is false for text with no lone surrogate in the common writings, so the walk is skipped", () => {
    const value = { model: "m", messages: [{ role: "user", content: "café 😀 a\\b \u0001" }] };
    // JavaScript's JSON.stringify: astral characters raw, only controls escaped.
    expect(mayHoldLoneSurrogate(JSON.stringify(value))).toBe(false);
    // Python's json.dumps (ensure_ascii): every non-ASCII character escaped, astral ones as pairs.
    const asciiOnly = JSON.stringify(value).replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    expect(asciiOnly).toContain("\\ud83d\\ude00");
    expect(mayHoldLoneSurrogate(asciiOnly)).toBe(false);
  });

  it.each([
    ['"\\ud800"', "a high surrogate alone"],
    ['"\\uDC00"', "a low surrogate alone"],
    ['"\\udc00\\ud800"', "a pair in the wrong order"],
    ['"\\\\ud800\\udc00"', "a low surrogate after an escaped backslash and the text ud800"],
    ['"\\ud800\\\\udc00"', "a high surrogate before an escaped backslash"],
  ])("is true for %s (%s)", (json) => {
    expect(mayHoldLoneSurrogate(json)).toBe(true);
    expect((JSON.parse(json) as string).isWellFormed()).toBe(false);
  });
});

describe("makeWellFormed", () => {
  it("replaces lone surrogates in values and keys by U+FFFD, keeping pairs", () => {
    expect(makeWellFormed({ "k\ud800": ["a\udc00", { b: "😀\udbff" }] })).toEqual({ "k\ufffd": ["a\ufffd", { b: "😀\ufffd" }] });
  });
});
