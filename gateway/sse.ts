// Server-Sent Events on a raw Node response. Nothing is written until commit(),
// so a failure before the first event is still a real HTTP error.
import type { ServerResponse } from "node:http";

export interface SseWriter {
  /**
   * Sends the 200, the event-stream headers and the first events, in one socket
   * write. Like `send`, a promise only when the socket is full.
   */
  commit(headers?: Record<string, string>, events?: SseEvent[]): Promise<void> | undefined;
  /**
   * Writes events in one socket write. Undefined when the socket can take more at
   * once (the usual case: no promise per event), else a promise of `drain` (backpressure).
   */
  send(events: SseEvent[]): Promise<void> | undefined;
  end(): void;
}

export interface SseEvent {
  data: string;
  /** Named events (the messages format); chat streams use unnamed ones. */
  event?: string;
}

export function createSseWriter(res: ServerResponse): SseWriter {
  return new ResponseSseWriter(res);
}

/** One object per stream, no closures: a thousand open streams keep a thousand of them. */
class ResponseSseWriter implements SseWriter {
  private readonly res: ServerResponse;
  // One promise for the end of the response, made at the first wait for `drain`
  // and shared by the later ones, so waiting adds no listeners per write.
  private closed: Promise<void> | undefined;

  constructor(res: ServerResponse) {
    this.res = res;
  }

  commit(headers: Record<string, string> = {}, events: SseEvent[] = []): Promise<void> | undefined {
    const { res } = this;
    res.socket?.setNoDelay(true);
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      // Proxies such as nginx must not buffer the stream.
      "x-accel-buffering": "no",
      ...headers,
    });
    flattenHead(res);
    // Node sends the head with the first write: head and first events in one system call.
    if (events.length > 0) return this.send(events);
    res.flushHeaders();
    return undefined;
  }

  send(events: SseEvent[]): Promise<void> | undefined {
    const { res } = this;
    if (res.destroyed || events.length === 0) return undefined;
    let frame = "";
    for (const { data, event } of events) frame += (event ? `event: ${event}\n` : "") + `data: ${data}\n\n`;
    return res.write(frame) ? undefined : this.drained();
  }

  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }

  private async drained(): Promise<void> {
    const { res } = this;
    this.closed ??= new Promise<void>((resolve) => (res.destroyed ? resolve() : res.once("close", resolve)));
    let onDrain!: () => void;
    await Promise.race([new Promise<void>((resolve) => res.once("drain", (onDrain = resolve))), this.closed]);
    res.off("drain", onDrain);
  }
}

/**
 * Node builds the response head as a string of many pieces (one per header
 * line) and keeps it as `_header` for the life of the response; written with
 * the first events, it would stay in pieces (dozens of small strings per open
 * stream). Reading a character makes V8 join them in place, once.
 */
function flattenHead(res: ServerResponse): void {
  const head: unknown = (res as ServerResponse & { _header?: unknown })._header;
  if (typeof head === "string") head.charCodeAt(0);
}
