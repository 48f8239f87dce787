// The wait an upstream's error answer asks for, read from its headers.
import { describe, expect, it } from "vitest";
import { MAX_RETRY_AFTER_SECONDS, retryAfterSecondsOf } from "../../../core/providers/retry-after.ts";

/** 2026-11-03T12:00:00.000Z */
const NOW = Date.UTC(2026, 10, 3, 12, 0, 0);

describe("retryAfterSecondsOf", () => {
  it("reads Retry-After in seconds, rounding a fraction up", () => {
    expect(retryAfterSecondsOf({ "retry-after": "7" }, NOW)).toBe(7);
    expect(retryAfterSecondsOf({ "retry-after": "0.2" }, NOW)).toBe(1);
    expect(retryAfterSecondsOf({ "retry-after": "0" }, NOW)).toBe(0);
  });

  it("reads Retry-After as an HTTP date, counted from now; a date already past is 0", () => {
    expect(retryAfterSecondsOf({ "retry-after": "Tue, 03 Nov 2026 12:01:30 GMT" }, NOW)).toBe(90);
    expect(retryAfterSecondsOf({ "retry-after": "Tue, 03 Nov 2026 12:01:30 GMT" }, NOW + 89_500)).toBe(1);
    expect(retryAfterSecondsOf({ "retry-after": "Tue, 03 Nov 2026 11:00:00 GMT" }, NOW)).toBe(0);
  });

  it("prefers OpenAI's retry-after-ms (finer), in whole seconds rounded up", () => {
    expect(retryAfterSecondsOf({ "retry-after-ms": "1500", "retry-after": "1" }, NOW)).toBe(2);
  });

  it("without Retry-After, takes OpenAI's reset of the window it reports exhausted (the later when both are)", () => {
    const headers = {
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "6m0s",
      "x-ratelimit-remaining-tokens": "1200",
      "x-ratelimit-reset-tokens": "1h2m3.5s",
    };
    expect(retryAfterSecondsOf(headers, NOW)).toBe(360);
    expect(retryAfterSecondsOf({ ...headers, "x-ratelimit-remaining-tokens": "0" }, NOW)).toBe(3724);
    expect(retryAfterSecondsOf({ "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "20ms" }, NOW)).toBe(1);
    // A window with room left says nothing about this refusal.
    expect(retryAfterSecondsOf({ "x-ratelimit-remaining-requests": "3", "x-ratelimit-reset-requests": "6m0s" }, NOW)).toBeUndefined();
  });

  it("says nothing for absent or unreadable values", () => {
    expect(retryAfterSecondsOf({}, NOW)).toBeUndefined();
    expect(retryAfterSecondsOf({ "retry-after": "soon" }, NOW)).toBeUndefined();
    expect(retryAfterSecondsOf({ "retry-after": "-5" }, NOW)).toBeUndefined();
    expect(retryAfterSecondsOf({ "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "later" }, NOW)).toBeUndefined();
  });

  it("caps a wait longer than a day (it must fit the error detail's int32)", () => {
    expect(retryAfterSecondsOf({ "retry-after": "99999999999" }, NOW)).toBe(MAX_RETRY_AFTER_SECONDS);
  });
});
