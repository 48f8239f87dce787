// The streams suite's load: `count` SSE streams opened at an even pace over
// `rampMs` (so that, with streams longer than the ramp, all are open at once),
// each timed from its send to its first token and to its end. Bounded: every
// stream is aborted after `maxMs`.
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client, Target } from "./load.ts";

/** The first token of every stream-upstream.ts answer: the moment it reaches the client is the time to first token. */
export const FIRST_TOKEN = "Hello";

export interface StreamResult {
  /** Time to the first token, ms, per stream that completed. */
  firstToken: number[];
  /** Time to the stream's end ([DONE]), ms. */
  duration: number[];
  /** Streams that failed: not 200, cut before [DONE], or over time. */
  errors: number;
  /** Most streams open at once, as the client saw them. */
  peakOpen: number;
  /** Time to the first token by the stream's place in the ramp (NaN where it failed). */
  firstTokenByPlace: number[];
  /** When the ramp began, ms since the epoch. */
  startedAt: number;
}

export async function streamRun(client: Client, target: Target, firstToken: string, count: number, rampMs: number, maxMs: number): Promise<StreamResult> {
  const started = performance.now();
  const result: StreamResult = {
    firstToken: [],
    duration: [],
    errors: 0,
    peakOpen: 0,
    firstTokenByPlace: new Array<number>(count).fill(Number.NaN),
    startedAt: performance.timeOrigin + started,
  };
  const signal = AbortSignal.timeout(maxMs);
  let open = 0;
  const streams: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const wait = started + (i * rampMs) / count - performance.now();
    if (wait >= 1) await sleep(wait);
    open++;
    result.peakOpen = Math.max(result.peakOpen, open);
    streams.push(
      oneStream(client, target, firstToken, signal)
        .then(
          (timing) => {
            result.firstTokenByPlace[i] = timing.firstToken;
            result.firstToken.push(timing.firstToken);
            result.duration.push(timing.duration);
          },
          () => void result.errors++,
        )
        .finally(() => open--),
    );
  }
  await Promise.all(streams);
  return result;
}

/** One stream, read to its end; rejects unless it is a 200 that carried the first token and ended with [DONE]. */
async function oneStream(client: Client, target: Target, firstToken: string, signal: AbortSignal): Promise<{ firstToken: number; duration: number }> {
  client.sent++;
  const sent = performance.now();
  const response = await client.pool.request({ path: target.path, method: "POST", headers: target.headers, body: target.body, signal });
  if (response.statusCode !== 200) {
    await response.body.dump({ limit: Number.MAX_SAFE_INTEGER });
    throw new Error(`HTTP ${response.statusCode}`);
  }
  let tokenAt = Number.NaN;
  // The last few characters read, so that a token split between two chunks is still found.
  let tail = "";
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    const text = tail + chunk.toString("latin1");
    if (Number.isNaN(tokenAt) && text.includes(firstToken)) tokenAt = performance.now() - sent;
    tail = text.slice(-16);
  }
  if (Number.isNaN(tokenAt) || !tail.includes("[DONE]")) throw new Error("stream ended without its first token or [DONE]");
  return { firstToken: tokenAt, duration: performance.now() - sent };
}
