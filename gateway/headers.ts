// Response headers shared by answers and error answers: the routing trace and
// OpenAI's rate-limit headers. Every text that may carry a caller's words (a
// dropped tool's name in a warning) is made safe here: Node refuses a head with
// a character outside Latin-1 or a control character, and clients refuse a huge one.

/** One attempt of the routing trace, as answers and error metadata both give it. */
export interface TraceEntry {
  model: string;
  provider: string;
  outcome: string;
  reason: string;
}

/** The longest value of a header built from text (about 4 KB): proxies and clients refuse heads of 8 to 16 KB. */
export const MAX_HEADER_TEXT = 4096;

/** `x-router-trace`: `<model>@<provider>;<outcome>[;<reason>]`, comma separated, in order. */
export function traceHeader(entries: TraceEntry[]): string {
  return headerList(entries.map((e) => `${e.model}@${e.provider};${e.outcome}${e.reason ? `;${e.reason}` : ""}`), ", ");
}

/**
 * Any text as a header value: printable ASCII stays as it is; anything else
 * (controls, non-ASCII, a lone surrogate as U+FFFD) and `%` itself are
 * percent-encoded as UTF-8, so `decodeURIComponent` gives the text back.
 * Past MAX_HEADER_TEXT characters it is cut, between characters, ending "...".
 */
export function headerText(text: string): string {
  return headerTextWithin(text, MAX_HEADER_TEXT);
}

/**
 * Items joined into one header value, each encoded as headerText does. Past
 * MAX_HEADER_TEXT characters the remaining items are counted instead
 * (`; ... 37 more`), so 512 dropped tools still make a header a client can read.
 */
export function headerList(items: readonly string[], separator: string): string {
  // Room kept for the marker, so the value with it stays under the cap.
  const room = MAX_HEADER_TEXT - 32;
  // The first item is always there, cut when it alone is too long.
  let value = items.length === 0 ? "" : headerTextWithin(items[0], room);
  for (let i = 1; i < items.length; i++) {
    const item = encodedWithin(items[i], room - value.length - separator.length);
    if (item === undefined) return `${value}${separator}... ${items.length - i} more`;
    value += separator + item;
  }
  return value;
}

function headerTextWithin(text: string, room: number): string {
  return encodedWithin(text, room) ?? `${cutEncoded(text, room - 3)}...`;
}

/**
 * The text encoded, or undefined when that is longer than `room`. Every
 * character encodes to one or more, so a longer text is not encoded at all:
 * the work is bounded by the cap, never by the caller's text (megabytes of
 * non-ASCII in a tool's name took seconds of the event loop).
 */
function encodedWithin(text: string, room: number): string | undefined {
  if (text.length > room) return undefined;
  const encoded = encodeHeaderText(text);
  return encoded.length <= room ? encoded : undefined;
}

/** Printable ASCII but `%`; `/u` takes an astral character whole, so it encodes as one UTF-8 sequence. */
const UNSAFE_IN_HEADER = /[^\x20-\x24\x26-\x7e]/gu;

function encodeHeaderText(text: string): string {
  return text.toWellFormed().replace(UNSAFE_IN_HEADER, encodeURIComponent);
}

/**
 * The longest encoded start of `text` within `room` characters, never half of
 * an encoded character. The text is read a character at a time (a lone
 * surrogate alone, then U+FFFD) and only as far as fits.
 */
function cutEncoded(text: string, room: number): string {
  let value = "";
  for (const character of text) {
    const encoded = encodeHeaderText(character);
    if (value.length + encoded.length > room) break;
    value += encoded;
  }
  return value;
}

/**
 * OpenAI's rate-limit headers (docs/contract.md), so OpenAI-style clients can pace
 * themselves: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, the reset
 * as a duration ("12s").
 */
export function rateLimitHeaders(unit: "requests" | "tokens", limit: number, remaining: number, resetSeconds: number): Record<string, string> {
  return {
    [`x-ratelimit-limit-${unit}`]: String(limit),
    [`x-ratelimit-remaining-${unit}`]: String(remaining),
    [`x-ratelimit-reset-${unit}`]: `${Math.max(0, resetSeconds)}s`,
  };
}
