// Recorded upstream bodies (test/fixtures/upstreams/<protocol>/<what-it-shows>.sse|json),
// read byte for byte: a test replays what a provider sent without writing it inline.
import { readFileSync } from "node:fs";
import { createServerSentEventReader } from "../../core/providers/read-sse.ts";

const UPSTREAMS = new URL("../fixtures/upstreams/", import.meta.url);

/** A recorded body as text, e.g. `upstreamRecording("gemini/thoughts-then-signed-text.sse")`. */
export function upstreamRecording(path: string): string {
  return readFileSync(new URL(path, UPSTREAMS), "utf8");
}

/** The JSON payloads of a recorded SSE body's events, in order. */
export function recordedEvents(path: string): unknown[] {
  const reader = createServerSentEventReader();
  return reader.feed(readFileSync(new URL(path, UPSTREAMS))).map((event) => JSON.parse(event.data));
}
