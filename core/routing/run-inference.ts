// Runs one inference, step by step, each in its own module: prepare (key,
// history, plan, admission: prepare-inference.ts), fallback (the attempts in
// order until one yields its first event: fallback.ts), relay (that provider's
// events as the hub's stream: relay.ts, driven by the loop here), settle (the
// outcome to the meter, off the answer's path: settle.ts). Fallback happens
// only before the first event (docs/contract.md, "Models and routing"); inference-errors.ts
// builds the errors each step ends with.
import type { GenerateRequest, GenerateResponse, ResponseStart } from "../../gen/router/v1/inference_pb.js";
import { callerWentAway, Code, ConnectError, errorDetailOf } from "../errors.ts";
import type { Answering } from "./inference-charge.ts";
import type { InferenceDeps } from "./inference-deps.ts";
import { brokeOff } from "./inference-errors.ts";
import { openAnswer } from "./fallback.ts";
import { prepareInference, type PreparedInference } from "./prepare-inference.ts";
import { Relay } from "./relay.ts";
import { finishRequest } from "./settle.ts";
import { measureAnswer } from "./measure-answer.ts";
import { rememberCachedProvider } from "./prefer-cached-provider.ts";
import { answerFromCache, markMiss } from "./cache-answer.ts";

// The services' entry points, from the steps that define them.
export type { InferenceDeps } from "./inference-deps.ts";
export { prepareInference, type PreparedInference } from "./prepare-inference.ts";
export { releasePrepared } from "./settle.ts";
export { traceEntry } from "./fallback.ts";
export { upstreamRejected } from "./inference-errors.ts";

export interface RunOptions {
  /**
   * Asked when the answer ended before its usage: whether what it produced is
   * charged (an estimate). Default: when streamed, as the caller saw it. A
   * background answer keeps nothing of a broken answer, so it says no then.
   */
  chargesCutAnswer?: () => boolean;
}

/** Runs one inference; `prepared` when the request was already prepared (background answers). */
export async function* runInference(
  request: GenerateRequest,
  signal: AbortSignal,
  deps: InferenceDeps,
  prepared?: PreparedInference,
  options: RunOptions = {},
): AsyncGenerator<GenerateResponse> {
  prepared ??= await prepareInference(request, deps);
  const { id, recorder, started, sticky, cache } = prepared;
  const found = cache && (await cache.lookup());
  if (found) return yield* answerFromCache(prepared, found, deps);
  // A miss's answer is gathered as relayed, and kept once it has finished well.
  const recording = cache?.recording();
  const { admission } = prepared.admitted;
  const { requestTags, stream } = prepared.request;
  const unansweredModelId = prepared.admitted.attempts[0].model.config.id;
  let answering: Answering | undefined;
  let timing: { sentAt: number; firstAt: number } | undefined;
  let outcome = "client_closed";
  try {
    let opened = await openAnswer(prepared, stream, signal, deps);
    // This frame lasts as long as the answer, and a suspended frame keeps every
    // variable it has held: once the answer has started it keeps nothing of
    // the request (which may be a long conversation), only what the end needs.
    request = prepared = undefined!;
    const { iterator } = opened;
    answering = opened.answering;
    timing = opened.timing;
    try {
      if (cache) markMiss(opened.start);
      recorder?.observe(opened.start);
      const start = opened.start.event.value as ResponseStart;
      yield opened.start;
      // The relay loop is here rather than in a generator of its own: one async step fewer per event.
      const relay = new Relay(id, answering, recorder, opened.excludeReasoning);
      // The routing trace (a few entries), for an answer that breaks off below.
      const trace = start.attempts;
      let step = opened.first;
      // Nor the start event once sent.
      opened = undefined!;
      try {
        for (; !step.done; step = await iterator.next()) {
          const response = relay.pass(step.value);
          if (!response) continue;
          recording?.observe(response);
          yield response;
        }
      } catch (error) {
        if (signal.aborted) throw callerWentAway();
        throw brokeOff(error, trace);
      }
      const usage = relay.usage();
      recording?.observe(usage);
      yield usage;
      const finish = relay.finish();
      if (recording) {
        // Complete now: kept before the finish goes out, so a caller that saw it can already hit.
        recording.observe(finish);
        const kept = recording.finished(start);
        if (kept) cache!.keep(kept);
      }
      yield finish;
    } finally {
      // Ends the upstream request too when our caller stops reading early.
      await iterator.return?.();
    }
    outcome = "ok";
  } catch (error) {
    outcome = error instanceof ConnectError ? (errorDetailOf(error)?.reason ?? Code[error.code]) : "internal_error";
    throw error;
  } finally {
    const chargesCut = options.chargesCutAnswer?.() ?? stream;
    const now = deps.now().getTime();
    finishRequest({ admission, answering, unansweredModelId, outcome, requestTags, streamed: stream, chargesCut, latencyMs: performance.now() - started, now });
    if (outcome === "ok") {
      measureAnswer(deps.measurements, answering, timing, now, stream);
      rememberCachedProvider(deps.cacheAffinity, sticky, answering);
    }
  }
}
