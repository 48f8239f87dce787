// HttpClient.stream: the body read chunk by chunk from undici's dispatch
// handler, without a Node stream. What undici's own body gave must hold: every
// chunk in order, the socket paused while the reader lags, an abort or an early
// exit that ends the upstream request, a cut connection or a silent upstream
// that fails the read, and errors before the answer that reject the call.
// Each step waits on an explicit signal (the upstream got the request, the
// socket was paused, a chunk was read), never on a sleep.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, type Dispatcher } from "undici";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createHttpClient } from "../../../core/providers/http-client.ts";
import { dispatchStreamed } from "../../../core/providers/streamed-response.ts";
import { UpstreamError } from "../../../core/providers/types.ts";

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A local upstream answering with `handle`; `closed` counts the requests whose connection or response closed. */
async function upstream(handle: Handler) {
  const state = { closed: 0 };
  const server = http.createServer((req, res) => {
    res.on("close", () => state.closed++);
    req.resume();
    req.on("end", () => handle(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const client = createHttpClient();
  cleanups.push(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`);
  const stream = (signal = new AbortController().signal, timeouts = { headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000 }) =>
    client.stream(url, {}, "{}", { signal, ...timeouts });
  return { state, stream, url };
}

/**
 * A dispatcher that sends through `agent` and logs each pause() and resume()
 * the request's handler calls on its controller: how a test sees the socket
 * paused without timing it.
 */
function pauseWatching(agent: Agent, log: string[]): Dispatcher {
  const watched = (controller: Dispatcher.DispatchController) =>
    new Proxy(controller, {
      get(target, property) {
        if (property === "pause" || property === "resume") {
          return () => {
            log.push(property);
            target[property]();
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  const watching = (handler: Dispatcher.DispatchHandler): Dispatcher.DispatchHandler =>
    new Proxy(handler, {
      get(target, property) {
        if (property === "onRequestStart") return (controller: Dispatcher.DispatchController, context: unknown) => target.onRequestStart?.(watched(controller), context);
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  return { dispatch: (options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) => agent.dispatch(options, watching(handler)) } as unknown as Dispatcher;
}

const text = (chunks: Uint8Array[]) => Buffer.concat(chunks).toString("utf8");

describe("HttpClient.stream", () => {
  it("gives every chunk in order, the status and the headers", async () => {
    const pieces = Array.from({ length: 50 }, (_, i) => `data: ${i}\n\n`);
    const { stream } = await upstream(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "x-extra": "1" });
      for (const piece of pieces) {
        res.write(piece);
        await new Promise((resolve) => setImmediate(resolve));
      }
      res.end();
    });
    const response = await stream();
    expect(response.statusCode).toBe(200);
    expect(response.headers["x-extra"]).toBe("1");
    const chunks: Uint8Array[] = [];
    for await (const chunk of response.body) chunks.push(chunk);
    expect(text(chunks)).toBe(pieces.join(""));
    expect(response.body.ended).toBe(true);
  });

  it("reads a body nobody reads at once: the socket pauses and resumes, nothing is lost", async () => {
    const big = "x".repeat(64 * 1024);
    const { url } = await upstream((_req, res) => {
      res.writeHead(200);
      for (let i = 0; i < 64; i++) res.write(big);
      res.end("end");
    });
    const agent = new Agent();
    cleanups.push(() => agent.close());
    const calls: string[] = [];
    const request = { origin: url.origin, path: url.pathname, method: "POST" as const, body: "{}" };
    const response = await dispatchStreamed(pauseWatching(agent, calls), request, new AbortController().signal);
    // Nobody reads: chunks queue until the socket is paused.
    await vi.waitFor(() => expect(calls).toEqual(["pause"]));
    expect(await response.body.text()).toBe(big.repeat(64) + "end");
    // Reading caught up: the socket went on (as often as it filled up again).
    expect(calls[1]).toBe("resume");
  });

  it("ends the upstream request when the reader leaves early", async () => {
    const { state, stream } = await upstream((_req, res) => {
      res.writeHead(200);
      res.write("first");
      // Never ends on its own.
    });
    const response = await stream();
    for await (const chunk of response.body) {
      expect(Buffer.from(chunk).toString()).toBe("first");
      break;
    }
    await vi.waitFor(() => expect(state.closed).toBe(1));
  });

  it("fails the read and ends the request when the caller aborts mid-body", async () => {
    const { state, stream } = await upstream((_req, res) => {
      res.writeHead(200);
      res.write("first");
    });
    const controller = new AbortController();
    const response = await stream(controller.signal);
    const iterator = response.body[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    const pending = iterator.next();
    controller.abort(new Error("caller left"));
    await expect(pending).rejects.toThrow("caller left");
    await vi.waitFor(() => expect(state.closed).toBe(1));
  });

  it("rejects with the caller's abort before the answer starts", async () => {
    let received!: () => void;
    const requestReceived = new Promise<void>((resolve) => (received = resolve));
    const { stream } = await upstream(() => {
      // Holds the request: no answer.
      received();
    });
    const controller = new AbortController();
    const pending = stream(controller.signal);
    await requestReceived;
    controller.abort(new Error("caller left"));
    await expect(pending).rejects.toThrow("caller left");
  });

  it("fails the read when the connection is cut mid-body", async () => {
    let cut!: () => void;
    const { stream } = await upstream((_req, res) => {
      res.writeHead(200);
      res.write("first");
      cut = () => res.socket?.destroy();
    });
    const response = await stream();
    const iterator = response.body[Symbol.asyncIterator]();
    expect(Buffer.from((await iterator.next()).value!).toString()).toBe("first");
    const pending = iterator.next();
    cut();
    // undici's own error: the exchange maps it, as it did the body stream's.
    await expect(pending).rejects.toThrow();
  });

  it("refuses a body held whole past its limit, and ends the upstream request", async () => {
    const { state, stream } = await upstream((_req, res) => {
      res.writeHead(200);
      // Without end: only the limit stops the read.
      const more = () => res.write("x".repeat(64 * 1024), () => setImmediate(more));
      more();
    });
    const response = await stream();
    const error = await response.body.text(1024 * 1024).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).reason).toBe("answer_too_large");
    expect((error as UpstreamError).message).toBe("upstream answer larger than 1 MiB");
    await vi.waitFor(() => expect(state.closed).toBe(1));
  });

  it("reads a body at its limit whole", async () => {
    const { stream } = await upstream((_req, res) => res.end("y".repeat(1024 * 1024)));
    expect(await (await stream()).body.text(1024 * 1024)).toHaveLength(1024 * 1024);
  });

  it("turns an upstream that stays silent into a retryable timeout", async () => {
    const { stream } = await upstream(() => {});
    const error = await stream(undefined, { headersTimeoutMs: 100, bodyTimeoutMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).reason).toBe("timeout");
  });

  it("turns a refused connection into a retryable upstream error", async () => {
    const client = createHttpClient();
    cleanups.push(() => client.close());
    const error = await client
      .stream(new URL("http://127.0.0.1:1/v1"), {}, "{}", { signal: new AbortController().signal, headersTimeoutMs: 1_000, bodyTimeoutMs: 1_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).reason).toBe("connection_refused");
  });
});
