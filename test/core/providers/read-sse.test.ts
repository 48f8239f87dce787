// The SSE reader: the event-stream grammar whatever the chunking. Its events
// are checked against eventsource-parser (the parser it replaced) on the same
// bytes cut at every place, and against hand-written expectations.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import { MAX_EVENT_CHARACTERS, ServerSentEventReader, type ServerSentEvent } from "../../../core/providers/read-sse.ts";
import { UpstreamError } from "../../../core/providers/types.ts";

/** Our reader's events for these chunks. */
function read(chunks: Uint8Array[]): ServerSentEvent[] {
  const reader = new ServerSentEventReader();
  const events: ServerSentEvent[] = [];
  for (const chunk of chunks) events.push(...reader.feed(chunk));
  events.push(...reader.end());
  return events;
}

/** eventsource-parser's events for the whole text, as our reader spells them (data, and event when named). */
function oracle(text: string): ServerSentEvent[] {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  parser.feed(text);
  return events.map(({ data, event }) => (event === undefined ? { data } : { data, event }));
}

/** The bytes cut into pieces at the given offsets. */
function cut(bytes: Uint8Array, at: number[]): Uint8Array[] {
  const points = [0, ...at, bytes.length];
  return points.slice(1).map((end, i) => bytes.subarray(points[i], end));
}

const STREAM = [
  "\uFEFF: a comment first\n",
  "event: message_start\r\n",
  'data: {"type":"message_start","text":"héllo 🌍 ✓"}\r\n',
  "\r\n",
  "data: first line\n",
  "data:second line without its space\n",
  "data\n",
  "id: 7\n",
  "retry: 1000\n",
  "\n",
  "event:\r",
  "data: a CR line end, and an empty event name\r",
  "\r",
  "event: only a name, no data\n",
  "\n",
  "data: 日本語のテキスト\n\n",
  "data: [DONE]\n\n",
  "data: never ended",
].join("");

describe("ServerSentEventReader", () => {
  it("reads what eventsource-parser reads, cut at every byte and in two at every place", () => {
    const bytes = new TextEncoder().encode(STREAM);
    const expected = oracle(STREAM);
    expect(read([bytes])).toEqual(expected);
    expect(read(Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)))).toEqual(expected);
    for (let at = 1; at < bytes.length; at++) expect(read(cut(bytes, [at]))).toEqual(expected);
    for (let at = 1; at + 7 < bytes.length; at += 3) expect(read(cut(bytes, [at, at + 2, at + 7]))).toEqual(expected);
  });

  it("follows the grammar's rules", () => {
    const bytes = new TextEncoder().encode(STREAM);
    expect(read([bytes])).toEqual([
      { data: '{"type":"message_start","text":"héllo 🌍 ✓"}', event: "message_start" },
      { data: "first line\nsecond line without its space\n" },
      { data: "a CR line end, and an empty event name" },
      { data: "日本語のテキスト" },
      { data: "[DONE]" },
    ]);
  });

  it("keeps a character cut between chunks whole, and gives a character cut by the body's end as U+FFFD", () => {
    const bytes = new TextEncoder().encode("data: 🌍\n\n");
    const emoji = bytes.indexOf(0xf0);
    expect(read(cut(bytes, [emoji + 1, emoji + 3]))).toEqual([{ data: "🌍" }]);
    const reader = new ServerSentEventReader();
    expect(reader.feed(bytes.subarray(0, emoji + 2))).toEqual([]);
    expect(reader.end()).toEqual([]);
    const truncated = new ServerSentEventReader();
    truncated.feed(new TextEncoder().encode("data: x"));
    truncated.feed(bytes.subarray(emoji, emoji + 2));
    expect(truncated.feed(new TextEncoder().encode("\n\n"))).toEqual([{ data: "x\uFFFD" }]);
  });

  it("drops only a leading byte-order mark", () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
    const rest = new TextEncoder().encode("data: \uFEFFkept\n\n");
    expect(read([bom.subarray(0, 1), bom.subarray(1), rest])).toEqual([{ data: "\uFEFFkept" }]);
  });
});

describe("ServerSentEventReader's bound on a line and an event", () => {
  const MiB = 1024 * 1024;
  const chunk = (text: string) => new TextEncoder().encode(text);
  const failure = (read: () => unknown) => {
    try {
      read();
    } catch (error) {
      return error;
    }
    return undefined;
  };

  it("reads a line and an event of the longest length", () => {
    const reader = new ServerSentEventReader();
    const value = "x".repeat(MAX_EVENT_CHARACTERS - "data: ".length);
    expect(reader.feed(chunk("data: "))).toEqual([]);
    for (let at = 0; at < value.length; at += MiB) expect(reader.feed(chunk(value.slice(at, at + MiB)))).toEqual([]);
    expect(reader.feed(chunk("\n\n"))).toEqual([{ data: value }]);
  });

  it("fails, retryable, on a line that never ends", () => {
    const reader = new ServerSentEventReader();
    const piece = chunk("x".repeat(MiB));
    for (let i = 0; i < MAX_EVENT_CHARACTERS / MiB; i++) reader.feed(piece);
    const error = failure(() => reader.feed(chunk("x")));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ retryable: true, reason: "invalid_answer" });
    expect((error as Error).message).toContain("a line longer than");
  });

  it("fails on an event whose data lines never end it", () => {
    const reader = new ServerSentEventReader();
    const line = chunk(`data: ${"x".repeat(MiB)}\n`);
    let error: unknown;
    for (let i = 0; i <= MAX_EVENT_CHARACTERS / MiB && error === undefined; i++) error = failure(() => reader.feed(line));
    expect(error).toMatchObject({ retryable: true, reason: "invalid_answer" });
    expect((error as Error).message).toContain("an event's data longer than");
  });
});
