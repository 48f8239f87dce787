// Server-Sent Events on a raw Node response. Nothing is written until commit(),
// so a failure before the first event is still a real HTTP error.
import type { ServerResponse } from "node:http";

export interface SseWriter {
  /** Sends the 200 and the event-stream headers. */
  commit(headers?: Record<string, string>): void;
  /** Writes events in one socket write; resolves when the socket can take more (backpressure). */
  send(events: SseEvent[]): Promise<void>;
  end(): void;
}

export interface SseEvent {
  data: string;
  /** Named events (the messages format); chat streams use unnamed ones. */
  event?: string;
}

export function createSseWriter(res: ServerResponse): SseWriter {
  // One promise for the end of the response, shared by every wait for `drain`,
  // so waiting adds no listeners per write.
  const closed = new Promise<void>((resolve) => res.once("close", resolve));
  return {
    commit(headers = {}) {
      res.socket?.setNoDelay(true);
      res.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        connection: "keep-alive",
        // Proxies such as nginx must not buffer the stream.
        "x-accel-buffering": "no",
        ...headers,
      });
    },
    async send(events) {
      if (res.destroyed || events.length === 0) return;
      let frame = "";
      for (const { data, event } of events) frame += (event ? `event: ${event}\n` : "") + `data: ${data}\n\n`;
      if (!res.write(frame)) {
        let onDrain!: () => void;
        await Promise.race([new Promise<void>((resolve) => res.once("drain", (onDrain = resolve))), closed]);
        res.off("drain", onDrain);
      }
    },
    end() {
      if (!res.writableEnded) res.end();
    },
  };
}
