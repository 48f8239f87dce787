// Reads an upstream's Server-Sent Events body into parsed events with a real
// event-stream parser (field folding, multi-line data, comments, CRLF handled).
import { createParser, type EventSourceMessage } from "eventsource-parser";

export interface ServerSentEventReader {
  /** The events this body chunk completes, in order (often none). */
  feed(bytes: Uint8Array): readonly EventSourceMessage[];
  /** The events still to come at the body's end (the decoder's last bytes). */
  end(): readonly EventSourceMessage[];
}

const NONE: readonly EventSourceMessage[] = [];
/** A chunk may end inside a character: the decoder keeps its first bytes for the next one. */
const STREAMING = { stream: true };

/**
 * A push reader: the caller loops over the body itself and gets each chunk's
 * events back at once, so reading SSE adds no async step per chunk or event
 * (the stream's events cross every layer above it one by one already).
 */
export function createServerSentEventReader(): ServerSentEventReader {
  let pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  const decoder = new TextDecoder();
  const take = () => {
    if (pending.length === 0) return NONE;
    const events = pending;
    pending = [];
    return events;
  };
  return {
    feed(bytes) {
      parser.feed(decoder.decode(bytes, STREAMING));
      return take();
    },
    end() {
      parser.feed(decoder.decode());
      return take();
    },
  };
}

/** Every event of a body, one at a time (tests, and callers off the hot path). */
export async function* readServerSentEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<EventSourceMessage> {
  const reader = createServerSentEventReader();
  for await (const bytes of body) yield* reader.feed(bytes);
  yield* reader.end();
}
