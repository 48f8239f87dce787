// Reads an upstream's Server-Sent Events body into parsed events with a real
// event-stream parser (field folding, multi-line data, comments, CRLF handled).
import { createParser, type EventSourceMessage } from "eventsource-parser";

/**
 * The events of each body chunk together (an upstream often sends several in
 * one packet): one async step per chunk rather than one per event. Batches are
 * never empty.
 */
export async function* readServerSentEventBatches(body: AsyncIterable<Uint8Array>): AsyncGenerator<EventSourceMessage[]> {
  let pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  const decoder = new TextDecoder();
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    if (pending.length > 0) {
      const batch = pending;
      pending = [];
      yield batch;
    }
  }
  parser.feed(decoder.decode());
  if (pending.length > 0) yield pending;
}

export async function* readServerSentEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<EventSourceMessage> {
  for await (const batch of readServerSentEventBatches(body)) yield* batch;
}
