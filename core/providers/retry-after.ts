// How long an upstream's error answer asks us to wait before trying again, in
// whole seconds, from its headers: `retry-after-ms` (OpenAI), `Retry-After` as
// seconds or as an HTTP date (RFC 9110; Anthropic and most others send it on
// 429 and 503), and failing those, OpenAI's `x-ratelimit-reset-*` of the window
// it reports exhausted. Undefined when the answer says nothing usable.

type Headers = Record<string, string | string[] | undefined>;

/** The longest wait passed on: a larger value is a misbehaving upstream (and the error detail's field is an int32). */
export const MAX_RETRY_AFTER_SECONDS = 86_400;

export function retryAfterSecondsOf(headers: Headers, nowMs: number): number | undefined {
  const milliseconds = decimalOf(header(headers, "retry-after-ms"));
  if (milliseconds !== undefined) return wholeSeconds(milliseconds / 1000);
  const retryAfter = header(headers, "retry-after");
  if (retryAfter !== undefined) {
    const seconds = decimalOf(retryAfter);
    if (seconds !== undefined) return wholeSeconds(seconds);
    // An HTTP date names its day and month ("Tue, 03 Nov 2026 12:01:30 GMT"); Date.parse alone would read "-5" as a year.
    const date = /[a-z]{3}/i.test(retryAfter) ? Date.parse(retryAfter) : Number.NaN;
    if (!Number.isNaN(date)) return wholeSeconds((date - nowMs) / 1000);
  }
  return exhaustedWindowReset(headers);
}

/** OpenAI's reset of each rate-limit window whose remaining count is 0; the later one when both are. */
function exhaustedWindowReset(headers: Headers): number | undefined {
  let longest: number | undefined;
  for (const unit of ["requests", "tokens"]) {
    if (header(headers, `x-ratelimit-remaining-${unit}`) !== "0") continue;
    const reset = durationSecondsOf(header(headers, `x-ratelimit-reset-${unit}`));
    if (reset !== undefined && (longest === undefined || reset > longest)) longest = reset;
  }
  return longest === undefined ? undefined : wholeSeconds(longest);
}

/** OpenAI's durations: "20ms", "1s", "6m0s", "1h2m3.5s". */
function durationSecondsOf(text: string | undefined): number | undefined {
  const match = text === undefined ? null : /^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$/.exec(text.trim());
  if (!match || match.slice(1).every((part) => part === undefined)) return undefined;
  const [, hours = "0", minutes = "0", seconds = "0", milliseconds = "0"] = match;
  return Number(hours) * 3600 + Number(minutes) * 60 + Number(seconds) + Number(milliseconds) / 1000;
}

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function decimalOf(text: string | undefined): number | undefined {
  return text !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(text) ? Number(text) : undefined;
}

/** Rounded up (waiting a little longer is safe), never negative (a date in the past means now), at most a day. */
export function wholeSeconds(seconds: number): number {
  return Math.min(Math.max(0, Math.ceil(seconds)), MAX_RETRY_AFTER_SECONDS);
}
