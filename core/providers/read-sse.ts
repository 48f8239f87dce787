// Reads an upstream's Server-Sent Events body into events, as the event-stream
// grammar says (https://html.spec.whatwg.org/multipage/server-sent-events.html):
// lines end with CRLF, LF or CR (a CRLF may be split between chunks), a line
// starting with a colon is a comment, a field's value loses one leading space,
// data lines join with LF, an empty line ends the event (none without data).
// `id` and `retry` are for reconnecting, which a one-shot request never does:
// they are read and dropped. One object per stream, its state in fields: a
// thousand open streams keep a thousand of them, not a thousand sets of closures
// (nor a thousand TextDecoders: bytes are decoded by Buffer, a character cut
// between two chunks waiting for the next). A line or an event past
// MAX_EVENT_CHARACTERS fails the read, so an upstream that never ends one
// cannot grow the gateway's memory without bound.

import { UpstreamError } from "./types.ts";

export interface ServerSentEvent {
  data: string;
  /** The `event` field, when the event has one. */
  event?: string;
}

const NONE: readonly ServerSentEvent[] = [];
const BYTE_ORDER_MARK = 0xfeff;
const LF = 10;
const COLON = 58;
const SPACE = 32;
/**
 * The longest line, and the most data one event may carry, in characters:
 * 8 Mi, far above any real event (an image inline in base64 included).
 */
export const MAX_EVENT_CHARACTERS = 8 * 1024 * 1024;

/**
 * A push reader: the caller loops over the body itself and gets each chunk's
 * events back at once, so reading SSE adds no async step per chunk or event
 * (the stream's events cross every layer above it one by one already).
 */
export class ServerSentEventReader {
  /** The first bytes of a character the last chunk cut in two (rare), for the next chunk. */
  private carry: Buffer | undefined;
  /** Whether text has been read: a byte-order mark is dropped only first. */
  private started = false;
  /** The start of a line whose end has not arrived. */
  private partial = "";
  /** The last chunk ended with CR: a LF first in the next one ends no second line. */
  private afterCarriageReturn = false;
  /** The event being read: its data lines so far (undefined: none yet) and its name. */
  private data: string | undefined;
  private event: string | undefined;

  /** The events this body chunk completes, in order (often none). */
  feed(bytes: Uint8Array): readonly ServerSentEvent[] {
    let buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (this.carry) {
      buffer = Buffer.concat([this.carry, buffer]);
      this.carry = undefined;
    }
    const whole = wholeCharactersLength(buffer);
    // A copy, so that the chunk itself is not kept.
    if (whole < buffer.length) this.carry = Buffer.from(buffer.subarray(whole));
    return this.lines(this.text(buffer.toString("utf8", 0, whole)));
  }

  /** The events still to come at the body's end (a cut character is U+FFFD); an event without its empty line is dropped. */
  end(): readonly ServerSentEvent[] {
    const carry = this.carry;
    this.carry = undefined;
    return this.lines(carry ? this.text(carry.toString("utf8")) : "");
  }

  /** Decoded text, without the byte-order mark the grammar drops at the start. */
  private text(text: string): string {
    if (this.started || text.length === 0) return text;
    this.started = true;
    return text.charCodeAt(0) === BYTE_ORDER_MARK ? text.slice(1) : text;
  }

  private lines(text: string): readonly ServerSentEvent[] {
    let events: ServerSentEvent[] | undefined;
    let from = 0;
    if (this.afterCarriageReturn && text.length > 0) {
      this.afterCarriageReturn = false;
      if (text.charCodeAt(0) === LF) from = 1;
    }
    // Each terminator is searched for once per chunk, so a long line in many small chunks costs no rescans.
    let cr = text.indexOf("\r", from);
    let lf = text.indexOf("\n", from);
    while (cr !== -1 || lf !== -1) {
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      const line = this.partial === "" ? text.slice(from, end) : this.partial + text.slice(from, end);
      this.partial = "";
      const event = this.line(line);
      if (event) (events ??= []).push(event);
      from = end + 1;
      if (end === cr) {
        if (from === text.length) this.afterCarriageReturn = true;
        else if (text.charCodeAt(from) === LF) from += 1;
      }
      if (cr !== -1 && cr < from) cr = text.indexOf("\r", from);
      if (lf !== -1 && lf < from) lf = text.indexOf("\n", from);
    }
    if (from < text.length) {
      this.partial += text.slice(from);
      if (this.partial.length > MAX_EVENT_CHARACTERS) throw eventTooLong("a line");
    }
    return events ?? NONE;
  }

  /** One whole line; the event it ends, if any. */
  private line(line: string): ServerSentEvent | undefined {
    if (line === "") return this.dispatch();
    if (line.charCodeAt(0) === COLON) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(line.charCodeAt(colon + 1) === SPACE ? colon + 2 : colon + 1);
    if (field === "data") {
      this.data = this.data === undefined ? value : `${this.data}\n${value}`;
      if (this.data.length > MAX_EVENT_CHARACTERS) throw eventTooLong("an event's data");
    }
    // An empty name is the default one, as no name.
    else if (field === "event") this.event = value || undefined;
    return undefined;
  }

  private dispatch(): ServerSentEvent | undefined {
    const { data, event } = this;
    this.data = this.event = undefined;
    if (data === undefined) return undefined;
    return event === undefined ? { data } : { data, event };
  }
}

/** Retryable: another provider, or the same one again, may well answer properly. */
function eventTooLong(what: string): UpstreamError {
  return new UpstreamError(`upstream sent ${what} longer than ${MAX_EVENT_CHARACTERS} characters in its event stream`, { retryable: true, reason: "invalid_answer" });
}

/**
 * How many of the bytes end on a whole UTF-8 character: the chunk's length,
 * unless it ends inside one, whose first bytes then wait for the next chunk.
 * (A TextDecoder does the same, at the cost of an object and a buffer per stream.)
 */
function wholeCharactersLength(bytes: Uint8Array): number {
  const length = bytes.length;
  // The last character's first byte is at most 3 bytes back; continuation bytes are 10xxxxxx.
  for (let i = length - 1; i >= 0 && i >= length - 3; i--) {
    const byte = bytes[i];
    if (byte < 0x80) return length;
    if (byte >= 0xc0) return length - i >= (byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2) ? length : i;
  }
  return length;
}

export function createServerSentEventReader(): ServerSentEventReader {
  return new ServerSentEventReader();
}

/** Every event of a body, one at a time (tests, and callers off the hot path). */
export async function* readServerSentEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const reader = new ServerSentEventReader();
  for await (const bytes of body) for (const event of reader.feed(bytes)) yield event;
  for (const event of reader.end()) yield event;
}
