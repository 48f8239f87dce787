// An upstream answer read as it arrives, without a Node stream in between:
// undici hands each body chunk to a dispatch handler, which passes it to the
// reader waiting for it (or queues it, pausing the socket when the reader
// lags). A streamed answer relays every chunk, so the body stream, its async
// iterator and their per-chunk steps and per-request closures were paid a
// thousand times over with a thousand streams open.
import type { IncomingHttpHeaders } from "node:http";
import type { Dispatcher } from "undici";
import { answerTooLarge, MOST_ANSWER_BYTES } from "./answer-limits.ts";

export interface StreamedResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The body's chunks as they come; each chunk once (a second iteration gets what is left). */
  body: StreamedBody;
}

export interface StreamedBody extends AsyncIterable<Uint8Array> {
  /**
   * The whole (rest of the) body as UTF-8 text; past `limitBytes` (answer-limits.ts's
   * MOST_ANSWER_BYTES), an UpstreamError, or with `truncate` (an error body, quoted)
   * its first `limitBytes` and the rest not read.
   */
  text(limitBytes?: number, options?: { truncate: boolean }): Promise<string>;
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
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const request = new StreamedRequest(signal, resolve, reject);
    try {
      dispatcher.dispatch(options, request);
    } catch (error) {
      request.onResponseError(undefined, error as Error);
    }
  });
}

/**
 * One request, as undici's dispatch handler, the caller's abort listener and
 * the body its reader reads: one object per open stream, its state in fields,
 * instead of a set of closures and the promise of its start kept alive as long
 * as the stream.
 */
class StreamedRequest implements Dispatcher.DispatchHandler, StreamedBody, AsyncIterator<Uint8Array> {
  ended = false;
  private controller: Dispatcher.DispatchController | undefined;
  /** The call's promise until the answer starts; a failure after it goes to the reader. */
  private starting: { resolve: (response: StreamedResponse) => void; reject: (error: unknown) => void } | undefined;
  private readonly signal: AbortSignal;
  /** Chunks that came before the reader asked; made when one does. */
  private chunks: Uint8Array[] | undefined;
  private error: unknown;
  private failed = false;
  /** The reader waiting for the next chunk. */
  private resolveNext: ((result: IteratorResult<Uint8Array>) => void) | undefined;
  private rejectNext: ((error: unknown) => void) | undefined;

  constructor(signal: AbortSignal, resolve: (response: StreamedResponse) => void, reject: (error: unknown) => void) {
    this.signal = signal;
    this.starting = { resolve, reject };
    signal.addEventListener("abort", this, { once: true });
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
    this.abort(this.signal.reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Aborted while connecting (only the signal can abort before the body is handed out): the controller is only known now.
    if (this.signal.aborted) controller.abort(this.signal.reason);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // undici leaves the raw header buffers on the controller, which lives as long as the stream.
    (controller as { rawHeaders?: unknown }).rawHeaders = null;
    const starting = this.starting;
    this.starting = undefined;
    starting?.resolve({ statusCode, headers, body: this });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Uint8Array): void {
    const resolve = this.resolveNext;
    if (resolve) {
      this.resolveNext = this.rejectNext = undefined;
      resolve({ value: chunk, done: false });
      return;
    }
    const chunks = (this.chunks ??= []);
    chunks.push(chunk);
    if (chunks.length >= HIGH_WATER) this.controller?.pause();
  }

  onResponseEnd(): void {
    this.signal.removeEventListener("abort", this);
    this.ended = true;
    const resolve = this.resolveNext;
    if (resolve && !this.chunks?.length) {
      this.resolveNext = this.rejectNext = undefined;
      resolve({ value: undefined, done: true });
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.fail(error);
  }

  /** Before the answer starts, the call rejects; after, the reader's next read. */
  private fail(error: unknown): void {
    this.signal.removeEventListener("abort", this);
    const starting = this.starting;
    if (starting) {
      this.starting = undefined;
      starting.reject(error);
      return;
    }
    if (this.ended || this.failed) return;
    this.failed = true;
    this.error = error;
    const reject = this.rejectNext;
    if (reject) {
      this.resolveNext = this.rejectNext = undefined;
      reject(error);
    }
  }

  private abort(reason: Error): void {
    if (this.ended || this.failed) return;
    this.controller?.abort(reason);
    this.fail(reason);
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    const chunks = this.chunks;
    if (chunks?.length) {
      const chunk = chunks.shift()!;
      if (this.controller?.paused && chunks.length < HIGH_WATER / 2) this.controller.resume();
      return Promise.resolve({ value: chunk, done: false });
    }
    if (this.failed) return Promise.reject(this.error);
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.resolveNext = resolve;
      this.rejectNext = reject;
    });
  }

  /** Leaving a loop early cancels the request, as destroying undici's body does. */
  return(): Promise<IteratorResult<Uint8Array>> {
    this.cancel();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return this;
  }

  async text(limitBytes = MOST_ANSWER_BYTES, { truncate } = { truncate: false }): Promise<string> {
    const decoder = new TextDecoder();
    let text = "";
    let length = 0;
    // Leaving the loop (break or throw) cancels the rest of the body.
    for await (const chunk of this) {
      if (length + chunk.byteLength > limitBytes) {
        if (!truncate) throw answerTooLarge(limitBytes);
        text += decoder.decode(chunk.subarray(0, limitBytes - length), { stream: true });
        break;
      }
      length += chunk.byteLength;
      text += decoder.decode(chunk, { stream: true });
    }
    return text + decoder.decode();
  }

  cancel(): void {
    // Called after every answer, most of them read to the end: no error (and its stack) for those.
    if (!this.ended && !this.failed) this.abort(new Error("the body was not read to its end"));
  }
}
