// Reads an upstream's Server-Sent Events body into parsed events with a real
// event-stream parser (field folding, multi-line data, comments, CRLF handled).
import { createParser, type EventSourceMessage } from "eventsource-parser";

export async function* readServerSentEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<EventSourceMessage> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  const decoder = new TextDecoder();
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    while (pending.length > 0) yield pending.shift()!;
  }
  parser.feed(decoder.decode());
  while (pending.length > 0) yield pending.shift()!;
}
