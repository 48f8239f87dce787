// The header encoder's work is bounded by the header's cap, not by the
// caller's text: a tool's name of megabytes of non-ASCII (a body under the
// 32 MB limit) was percent-encoded whole, a callback per character, before
// being cut to 4 KB: over a second of the gateway's event loop per request.
// Counted in calls of the encoder's per-character step, not in time.
import { afterEach, describe, expect, it, vi } from "vitest";
import { headerList, headerText, MAX_HEADER_TEXT } from "../../gateway/headers.ts";

const HUGE = 1_000_000;

describe("header text from a huge caller text", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** How many characters `build` percent-encodes. */
  function encodedCharacters(build: () => string): { value: string; calls: number } {
    const encode = vi.spyOn(globalThis, "encodeURIComponent");
    const value = build();
    return { value, calls: encode.mock.calls.length };
  }

  it.each([
    ["non-ASCII", "\u0100"],
    ["astral", "😀"],
    ["lone surrogate", "\ud800"],
  ])("one %s text: at most the cap's worth is encoded, and cut between characters", (_, unit) => {
    const { value, calls } = encodedCharacters(() => headerText(unit.repeat(HUGE)));
    expect(calls).toBeLessThanOrEqual(MAX_HEADER_TEXT);
    expect(value.length).toBeLessThanOrEqual(MAX_HEADER_TEXT);
    expect(decodeURIComponent(value)).toMatch(new RegExp(`^(${unit.toWellFormed()})+\\.\\.\\.$`, "u"));
  });

  it("a list whose later items are huge: they are counted, not encoded", () => {
    const items = ["first", ...Array.from({ length: 4 }, (_, i) => `tool ${i} ${"\u0100".repeat(HUGE)} left out`)];
    const { value, calls } = encodedCharacters(() => headerList(items, "; "));
    expect(calls).toBeLessThanOrEqual(MAX_HEADER_TEXT);
    expect(value).toBe("first; ... 4 more");
  });

  it("a list whose first item is huge: cut, the rest counted", () => {
    const { value, calls } = encodedCharacters(() => headerList([`tool ${"\u0100".repeat(HUGE)}`, "second"], "; "));
    expect(calls).toBeLessThanOrEqual(MAX_HEADER_TEXT);
    expect(value.length).toBeLessThanOrEqual(MAX_HEADER_TEXT);
    expect(decodeURIComponent(value)).toMatch(/^tool (\u0100)+\.\.\.; \.\.\. 1 more$/u);
  });
});
