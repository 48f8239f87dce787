// Fallback: try the planned attempts in order until one provider yields its
// first event, tracing each (skipped, error, ok). It happens only here, before
// anything reached the caller (docs/contract.md, "Models and routing").
import { create } from "@bufbuild/protobuf";
import { GenerateResponseSchema, RoutingAttemptSchema, type GenerateResponse, type RoutingAttempt, type Warning } from "../../gen/router/v1/inference_pb.js";
import { callerWentAway } from "../errors.ts";
import type { UpstreamCall } from "../providers/types.ts";
import { UpstreamError } from "../providers/types.ts";
import { answeringPromptBytes, type AdmittedRequest, type Answering } from "./inference-charge.ts";
import type { InferenceDeps } from "./inference-deps.ts";
import { allAttemptsFailed, upstreamRejected } from "./inference-errors.ts";
import { bareModelName } from "../../wire/model-name.ts";
import type { Attempt } from "./plan.ts";
import type { PreparedInference } from "./prepare-inference.ts";
import { selectionTraceEntry } from "./auto-router.ts";

/** The answer of the first attempt whose provider gave its first event: its events, that first event, the start event to send. */
export interface OpenedAnswer {
  iterator: AsyncIterator<GenerateResponse>;
  first: IteratorResult<GenerateResponse>;
  start: GenerateResponse;
  answering: Answering;
  excludeReasoning: boolean;
  /** When the serving attempt was sent and when its first event came (deps.now, ms): its route's measurements. */
  timing: { sentAt: number; firstAt: number };
}

/**
 * Tries the attempts in order until one yields its first event; throws when
 * none did (a provider's 4xx at once, else once every attempt failed).
 */
export async function openAnswer({ id, plan, admitted }: PreparedInference, stream: boolean, signal: AbortSignal, deps: InferenceDeps): Promise<OpenedAnswer> {
  const trace: RoutingAttempt[] = [
    ...(plan.selection ? [selectionTraceEntry(plan.selection)] : []),
    ...plan.skipped.map((s) => create(RoutingAttemptSchema, { modelId: s.modelId, provider: s.provider, outcome: "skipped", reason: s.requirement.reason })),
  ];
  // The longest wait a failed attempt's provider asked for, passed on when every attempt failed.
  let longestRetryAfter = 0;
  for (const attempt of admitted.attempts) {
    const adapter = deps.adapters[attempt.route.provider.protocol];
    const call: UpstreamCall = {
      request: attempt.request,
      provider: attempt.route.provider,
      route: attempt.route.route,
      apiKey: attempt.route.apiKey,
      stream,
      maxCompletionTokens: attempt.route.maxCompletionTokens,
      signal,
    };
    const sentAt = deps.now().getTime();
    const events = adapter.stream(call);
    const warnings = [...attempt.warnings, ...(events.warnings ?? [])];
    const iterator = events[Symbol.asyncIterator]();
    let first: IteratorResult<GenerateResponse>;
    try {
      first = await iterator.next();
    } catch (error) {
      if (signal.aborted) throw callerWentAway();
      if (!(error instanceof UpstreamError)) throw error;
      trace.push(traceEntry(attempt, "error", error.reason));
      if (!error.retryable) throw upstreamRejected(error, trace);
      longestRetryAfter = Math.max(longestRetryAfter, error.retryAfterSeconds ?? 0);
      continue;
    }
    trace.push(traceEntry(attempt, "ok", attempt.rule ?? ""));
    try {
      const { model, route, free } = attempt;
      return {
        iterator,
        first,
        start: startEvent(id, attempt, trace, warnings, admitted.admission, deps.now()),
        answering: { attempt: { model, route, free }, promptBytes: answeringPromptBytes(admitted, attempt, stream), outputCharacters: 0 },
        excludeReasoning: attempt.request.reasoning?.exclude === true,
        timing: { sentAt, firstAt: deps.now().getTime() },
      };
    } catch (error) {
      // Nothing relays this answer yet, so nothing else would end its upstream request.
      await iterator.return?.();
      throw error;
    }
  }
  throw allAttemptsFailed(trace, longestRetryAfter);
}

export function traceEntry(attempt: Attempt, outcome: string, reason: string): RoutingAttempt {
  return create(RoutingAttemptSchema, { modelId: attempt.model.config.id, provider: attempt.route.provider.id, outcome, reason });
}

/** The answer's first event: which attempt serves it, the routing trace, the warnings and the rate-limit windows. */
function startEvent(id: string, attempt: Attempt, trace: RoutingAttempt[], warnings: Warning[], admission: AdmittedRequest["admission"], now: Date): GenerateResponse {
  return create(GenerateResponseSchema, {
    event: {
      case: "start",
      value: {
        id,
        modelId: attempt.model.config.id,
        model: bareModelName(attempt.model.config.id),
        provider: attempt.route.provider.id,
        created: BigInt(Math.floor(now.getTime() / 1000)),
        attempts: trace,
        warnings,
        free: attempt.free,
        protocol: attempt.route.provider.protocol,
        nativeFormat: attempt.route.capabilities.nativeFormat === attempt.request.format,
        requestsWindow: admission.requestsWindow,
        tokensWindow: admission.tokensWindow,
      },
    },
  });
}
