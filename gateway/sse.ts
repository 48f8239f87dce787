// Server-Sent Events on a raw Node response. Nothing is written until commit(),
// so a failure before the first event is still a real HTTP error.
import type { ServerResponse } from "node:http";
import { once } from "node:events";

export interface SseWriter {
  /** Sends the 200 and the event-stream headers. */
  commit(headers?: Record<string, string>): void;
  /** Writes one event; resolves when the socket can take more (backpressure). */
  send(data: string, event?: string): Promise<void>;
  end(): void;
  readonly committed: boolean;
}

export function createSseWriter(res: ServerResponse): SseWriter {
  let committed = false;
  return {
    get committed() {
      return committed;
    },
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
      committed = true;
    },
    async send(data, event) {
      if (res.destroyed) return;
      const frame = (event ? `event: ${event}\n` : "") + `data: ${data}\n\n`;
      if (!res.write(frame)) await Promise.race([once(res, "drain"), once(res, "close")]);
    },
    end() {
      if (!res.writableEnded) res.end();
    },
  };
}
