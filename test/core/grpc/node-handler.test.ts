// A caller that cancels a server stream while the core waits to write the next
// message (the gateway's client left mid-download of an asset, or mid-way
// through a streamed answer, in split mode) made connect-node log "handler for
// rpc ... failed ConnectError: write ECANCELED". The core's handler
// (core/grpc/node-handler.ts) logs that at debug level, and still logs a
// failure the caller did not cause as an error.
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { ConnectRouter } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import { coreRequestHandler, type HandlerLog } from "../../../core/grpc/node-handler.ts";

/** Watch calls whose stream has ended (the handler let go of it: its failure is being settled). */
let watchesEnded = 0;

/** An endless server stream (grpc.health.v1.Health/Watch answering SERVING again and again), as a large asset is for a client that stops reading. */
const endlessWatch = (router: ConnectRouter) =>
  router.service(Health, {
    check: () => ({}),
    async *watch() {
      try {
        for (;;) yield { status: 1 };
      } finally {
        watchesEnded += 1;
      }
    },
  });

interface Stack {
  lines: { level: "debug" | "error"; message: string }[];
  /** The server's side of the last call. */
  response(): http2.Http2ServerResponse;
  /** A Watch call that reads nothing: the server's writes soon wait for the caller. */
  call(): http2.ClientHttp2Stream;
  close(): Promise<void>;
}

async function start(log?: "console"): Promise<Stack> {
  const lines: Stack["lines"] = [];
  const handlerLog: HandlerLog = { debug: (_, message) => lines.push({ level: "debug", message }), error: (_, message) => lines.push({ level: "error", message }) };
  const handler = coreRequestHandler(endlessWatch, log === "console" ? undefined : handlerLog);
  let last: http2.Http2ServerResponse | undefined;
  const server = http2.createServer((request, response) => {
    last = response;
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return {
    lines,
    response: () => last!,
    call() {
      const stream = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Watch", "content-type": "application/grpc", te: "trailers" });
      // One empty HealthCheckRequest, gRPC-framed; then nothing is read.
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
      stream.pause();
      stream.on("error", () => {});
      return stream;
    },
    async close() {
      session.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Until the server's write waits for the caller to read (its buffer is past the high-water mark). */
const writeWaiting = (stack: Stack) => vi.waitFor(() => expect(stack.response()?.writableNeedDrain).toBe(true), { timeout: 5_000 });

let stack: Stack;
let consoleErrors: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  consoleErrors = vi.spyOn(console, "error");
});
afterEach(async () => {
  consoleErrors.mockRestore();
  await stack?.close();
});

describe("the core's request handler", () => {
  it("logs a caller's cancellation during a waiting write at debug level, not as a failed handler", async () => {
    stack = await start();
    const call = stack.call();
    await writeWaiting(stack);
    call.close(http2.constants.NGHTTP2_CANCEL);
    await vi.waitFor(() => expect(stack.lines).toEqual([{ level: "debug", message: "the caller cancelled the call while it was answered" }]));
    expect(consoleErrors).not.toHaveBeenCalled();
  });

  it("without a logger, says nothing of a cancellation", async () => {
    stack = await start("console");
    const call = stack.call();
    await writeWaiting(stack);
    const ended = watchesEnded;
    call.close(http2.constants.NGHTTP2_CANCEL);
    // The handler has let go of the answer's stream: what is left of its failure (the log line, if any) runs in the microtasks after.
    await vi.waitFor(() => expect(watchesEnded).toBe(ended + 1));
    await new Promise((resolve) => setImmediate(resolve));
    expect(consoleErrors).not.toHaveBeenCalled();
  });

  it("still logs a failure the caller did not cause (the stream reset by the server) as an error", async () => {
    stack = await start();
    stack.call();
    await writeWaiting(stack);
    stack.response().stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    await vi.waitFor(() => expect(stack.lines.map((line) => line.level)).toEqual(["error"]));
    expect(stack.lines[0].message).toBe("handler for rpc grpc.health.v1.Health/Watch failed");
  });
});
