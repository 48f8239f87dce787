// The streaming answer of every format: the core's events written as SSE. The
// loop, the commit, backpressure and the client-disconnect rules live here; a
// format only says how its events look (a StreamEncoder).
import type { Context } from "koa";
import type { GenerateResponse } from "../gen/router/v1/inference_pb.js";
import { toPublicError, type PublicError } from "./errors/http-status.ts";
import { createSseWriter, type SseEvent, type SseWriter } from "./sse.ts";
import { routingHeaders, stopCall, type StartedCall } from "./start-call.ts";

/** What a format adds to the stream loop: its frames for each event, for the end, and for a failure. */
export interface StreamEncoder {
  /** The frames this core event produces (often one, sometimes none). */
  encode(event: GenerateResponse): SseEvent[];
  /** Frames after the last event (chat: `[DONE]`; a format whose last event closes it: none). */
  done(): SseEvent[];
  /** The format's in-band error, sent when the stream fails after it was committed. */
  error(error: PublicError): SseEvent[];
  /**
   * Frames that say the stream is alive while the model is silent (Messages:
   * Anthropic's `ping`), sent when nothing was written for KEEP_ALIVE_MS. A
   * format without them sends nothing in the gaps.
   */
  keepAlive?(): SseEvent[];
}

/** The longest silence on a stream whose format has keep-alive frames (a thinking model can be quiet for minutes). */
const KEEP_ALIVE_MS = 10_000;

/**
 * Commits the stream (200, headers and the start event's frames, in one
 * write), then writes every event as the encoder frames it. Each write waits
 * for the socket (backpressure). A failure before the commit (the start's
 * frames, the headers) stops the call and is thrown, to be answered as an
 * HTTP error; after it, it becomes the encoder's in-band error and is left in
 * `ctx.state.streamError` for the access log; a client that left needs nothing
 * (its abort is what ended the call).
 *
 * The route returns as soon as the stream is committed: the stream's end is
 * `ctx.state.eventStream`, a promise the app attaches its access-log line to
 * (it does not wait for it). A frame that waited for the stream instead (the
 * route's, each middleware's) would keep all it holds for the stream's whole life.
 */
export function writeEventStream(ctx: Context, call: StartedCall, encoder: StreamEncoder, { keepAliveMs = KEEP_ALIVE_MS } = {}): void {
  const { start } = call;
  const sse = createSseWriter(ctx.res);
  let committed: Promise<void> | undefined;
  try {
    committed = sse.commit({ "x-request-id": ctx.state.requestId, ...routingHeaders(start) }, encoder.encode(call.first));
  } catch (error) {
    // Nothing was sent, and no client close will come to end the call.
    stopCall(call.rest);
    throw error;
  }
  ctx.respond = false;
  // A failure from here on is logged with the provider that was serving.
  ctx.state.provider = start.provider;
  ctx.state.eventStream = relayEvents(ctx.state, committed, call.rest, call.signal, sse, encoder, keepAliveMs);
}

/** The stream's loop. Its frame lasts as long as the stream: it is given only what it uses. */
async function relayEvents(
  state: Context["state"],
  committed: Promise<void> | undefined,
  rest: AsyncIterator<GenerateResponse>,
  signal: AbortSignal,
  sse: SseWriter,
  encoder: StreamEncoder,
  keepAliveMs: number,
): Promise<void> {
  const keepAlive = encoder.keepAlive && new KeepAlive(sse, encoder.keepAlive.bind(encoder), keepAliveMs);
  let ended = false;
  try {
    if (committed) await committed;
    for (let step = await rest.next(); !step.done; step = await rest.next()) {
      keepAlive?.wrote();
      // `send` gives a promise only when the socket is full: most events cost no extra await.
      const full = sse.send(encoder.encode(step.value));
      if (full) await full;
    }
    ended = true;
    await sse.send(encoder.done());
  } catch (error) {
    if (!signal.aborted) {
      state.streamError = error;
      await sse.send(encoder.error(toPublicError(error)));
    }
  } finally {
    keepAlive?.stop();
    sse.end();
    // An encoder or a write that failed left the call running: the response ends normally, so no abort would stop it.
    if (!ended) stopCall(rest);
  }
}

/**
 * The keep-alive frames of a format that has them: one timer per stream, which
 * looks at the last write rather than being reset by each. An object rather
 * than a closure over the loop's variables, which would give every stream's
 * loop a context to keep, keep-alive frames or not.
 */
class KeepAlive {
  private written = performance.now();
  private readonly timer: NodeJS.Timeout;

  constructor(sse: SseWriter, frames: () => SseEvent[], keepAliveMs: number) {
    this.timer = setInterval(() => {
      if (performance.now() - this.written >= keepAliveMs) void sse.send(frames());
    }, keepAliveMs / 2);
    this.timer.unref();
  }

  wrote(): void {
    this.written = performance.now();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
