// An upstream answer read as it arrives, without a Node stream in between:
// undici hands each body chunk to a dispatch handler, which passes it to the
// reader waiting for it (or queues it, pausing the socket when the reader
// lags). A streamed answer relays every chunk, so the body stream, its async
// iterator and their per-chunk steps and per-request closures were paid a
// thousand times over with a thousand streams open.
import type { IncomingHttpHeaders } from "node:http";
import type { Dispatcher } from "undici";

export interface StreamedResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The body's chunks as they come; each chunk once (a second iteration gets what is left). */
  body: StreamedBody;
}

export interface StreamedBody extends AsyncIterable<Uint8Array> {
  /** The whole (rest of the) body as UTF-8 text. */
  text(): Promise<string>;
  /** Whether the body arrived whole. */
  readonly ended: boolean;
  /** Stops the request (a body not read to its end: the upstream stops generating). */
  cancel(): void;
}

/** Chunks queued before the socket is paused (a reader that lags, or a body nobody reads). */
const HIGH_WATER = 16;

/**
 * Sends the request; resolves with the status and headers (the body follows
 * through `body`), rejects with undici's error when no answer starts, or with
 * the signal's reason when it aborts first.
 */
export function dispatchStreamed(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, signal: AbortSignal): Promise<StreamedResponse> {
  return new Promise((resolve, reject) => {
    const body = new QueuedBody();
    let started = false;
    const onAbort = () => body.abort(signal.reason);
    const fail = (error: Error) => {
      signal.removeEventListener("abort", onAbort);
      if (started) body.fail(error);
      else reject(error);
    };
    body.onAbort = (reason) => (started ? body.fail(reason) : reject(reason));
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    signal.addEventListener("abort", onAbort, { once: true });
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(controller) {
        body.controller = controller;
        // Aborted while connecting: the controller is only known now.
        if (body.abortReason !== undefined) controller.abort(body.abortReason);
      },
      onResponseStart(controller, statusCode, headers) {
        // undici leaves the raw header buffers on the controller, which lives as long as the stream.
        controller.rawHeaders = null;
        started = true;
        resolve({ statusCode, headers, body });
      },
      onResponseData(_controller, chunk) {
        body.push(chunk);
      },
      onResponseEnd() {
        signal.removeEventListener("abort", onAbort);
        body.end();
      },
      onResponseError(_controller, error) {
        fail(error);
      },
    };
    try {
      dispatcher.dispatch(options, handler);
    } catch (error) {
      fail(error as Error);
    }
  });
}

type Waiter = { resolve: (result: IteratorResult<Uint8Array>) => void; reject: (error: unknown) => void };

class QueuedBody implements StreamedBody, AsyncIterator<Uint8Array> {
  controller: Dispatcher.DispatchController | undefined;
  abortReason: Error | undefined;
  onAbort: (reason: Error) => void = () => {};
  ended = false;
  private readonly chunks: Uint8Array[] = [];
  private error: unknown;
  private failed = false;
  private waiter: Waiter | undefined;

  push(chunk: Uint8Array): void {
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter.resolve({ value: chunk, done: false });
      return;
    }
    this.chunks.push(chunk);
    if (this.chunks.length >= HIGH_WATER) this.controller?.pause();
  }

  end(): void {
    this.ended = true;
    if (this.waiter && this.chunks.length === 0) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter.resolve({ value: undefined, done: true });
    }
  }

  fail(error: unknown): void {
    if (this.ended || this.failed) return;
    this.failed = true;
    this.error = error;
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter.reject(error);
    }
  }

  abort(reason: Error): void {
    if (this.ended || this.failed) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
    this.onAbort(reason);
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    if (this.chunks.length > 0) {
      const chunk = this.chunks.shift()!;
      if (this.controller?.paused && this.chunks.length < HIGH_WATER / 2) this.controller.resume();
      return Promise.resolve({ value: chunk, done: false });
    }
    if (this.failed) return Promise.reject(this.error);
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  /** Leaving a loop early cancels the request, as destroying undici's body does. */
  return(): Promise<IteratorResult<Uint8Array>> {
    this.cancel();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return this;
  }

  async text(): Promise<string> {
    const decoder = new TextDecoder();
    let text = "";
    for await (const chunk of this) text += decoder.decode(chunk, { stream: true });
    return text + decoder.decode();
  }

  cancel(): void {
    if (this.ended || this.failed) return;
    const reason = new Error("the body was not read to its end");
    this.abortReason = reason;
    this.controller?.abort(reason);
    this.fail(reason);
  }
}
