// Runs one inference: plan the attempts, admit the request (key, limits and
// its charge, in one step of the account store), try the attempts in order
// until one yields its first event, then relay that provider's events as the
// hub's stream. Fallback happens only before the first event (ARCHITECTURE.md
// rule 4). The settlement and the usage record follow, off the answer's path.
import { create, type JsonObject } from "@bufbuild/protobuf";
import {
  BlockType,
  GenerateResponseSchema,
  RoutingAttemptSchema,
  type GenerateRequest,
  type GenerateResponse,
  type ResponseStart,
  type RoutingAttempt,
  type Usage,
  type Warning,
} from "../../gen/router/v1/inference_pb.js";
import type { Accounts } from "../accounts/accounts.ts";
import { checkKey } from "../accounts/check-key.ts";
import { previousNotFound, referenceParam, type Conversations, type RecordOptions, type TurnRecorder } from "../conversations/conversations.ts";
import { costOf } from "../billing/cost.ts";
import { formatMoney } from "../billing/money.ts";
import type { Catalogue } from "../catalogue/catalogue.ts";
import { callerWentAway, Code, ConnectError, errorDetailOf, missingApiKey, routerError } from "../errors.ts";
import { newServiceId } from "../ids.ts";
import type { ProviderAdapter, UpstreamCall } from "../providers/types.ts";
import { UpstreamError } from "../providers/types.ts";
import { sha256Hex } from "../auth/keys.ts";
import { admitRequest, answeringPromptBytes, deliveredUsage, type AdmittedRequest, type Answering } from "./inference-charge.ts";
import { bareModelName } from "./model-id.ts";
import { planAttempts, type Attempt, type Plan } from "./plan.ts";

export interface InferenceDeps {
  catalogue: Catalogue;
  accounts: Accounts;
  /** One adapter per wire protocol named in the configuration. */
  adapters: Record<string, ProviderAdapter>;
  /** Stored conversations; absent: none is kept, so none can be continued. */
  conversations?: Conversations;
  now: () => Date;
  /** Draws router/free's model (a number in [0, 1)); injected so tests can fix it. */
  random: () => number;
}

/**
 * A request admitted and ready to answer: its history prepended, its attempts
 * planned, its charge held. GenerateInBackground prepares before it answers
 * the caller, so a refusal (key, credits, limits, model) is told at once.
 */
export interface PreparedInference {
  id: string;
  /** The request with its stored conversation's history first. */
  request: GenerateRequest;
  plan: Plan;
  admitted: AdmittedRequest;
  recorder: TurnRecorder | undefined;
  started: number;
}

export async function prepareInference(request: GenerateRequest, deps: InferenceDeps, record?: RecordOptions): Promise<PreparedInference> {
  const started = performance.now();
  const apiKey = request.caller?.apiKey ?? "";
  if (!apiKey) throw missingApiKey();
  const keyDigest = sha256Hex(apiKey);
  const id = request.requestId || newServiceId(deps.catalogue.idPrefix);
  // A stored conversation's history goes first, so planning and the hold count it (docs/architecture.md, "Conversations").
  const received = request;
  if (request.conversation?.previousId) request = await withHistory(request, keyDigest, deps);
  let plan: Plan;
  try {
    plan = planAttempts(request, deps.catalogue);
  } catch (error) {
    // A bad key is told before anything about the request (401 first).
    await checkKey(deps.accounts, keyDigest);
    throw error;
  }
  const admitted = await admitRequest(deps, { id, keyDigest, plan, now: deps.now().getTime() });
  const recorder = deps.conversations?.recorder(received, admitted.admission.key.organizationId, record);
  return { id, request, plan, admitted, recorder, started };
}

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
  const { id, recorder, started } = prepared;
  const { admission } = prepared.admitted;
  const { requestTags, stream } = prepared.request;
  const unansweredModelId = prepared.admitted.attempts[0].model.config.id;
  let answering: Answering | undefined;
  let outcome = "client_closed";
  try {
    let opened = await openAnswer(prepared, stream, signal, deps);
    // This frame lasts as long as the answer, and a suspended frame keeps every
    // variable it has held: once the answer has started it keeps nothing of
    // the request (which may be a long conversation), only what the end needs.
    request = prepared = undefined!;
    const { iterator } = opened;
    answering = opened.answering;
    try {
      recorder?.observe(opened.start);
      yield opened.start;
      // The relay loop is here rather than in a generator of its own: one async step fewer per event.
      const relay = new Relay(id, answering, recorder, opened.excludeReasoning);
      // The routing trace (a few entries), for an answer that breaks off below.
      const trace = (opened.start.event.value as ResponseStart).attempts;
      let step = opened.first;
      // Nor the start event once sent.
      opened = undefined!;
      try {
        for (; !step.done; step = await iterator.next()) {
          const response = relay.pass(step.value);
          if (response) yield response;
        }
      } catch (error) {
        if (signal.aborted) throw callerWentAway();
        throw brokeOff(error, trace);
      }
      yield relay.usage();
      yield relay.finish();
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
    finishRequest({ admission, answering, unansweredModelId, outcome, requestTags, streamed: stream, chargesCut, latencyMs: performance.now() - started, now: deps.now().getTime() });
  }
}

/** The answer of the first attempt whose provider gave its first event: its events, that first event, the start event to send. */
interface OpenedAnswer {
  iterator: AsyncIterator<GenerateResponse>;
  first: IteratorResult<GenerateResponse>;
  start: GenerateResponse;
  answering: Answering;
  excludeReasoning: boolean;
}

/**
 * Tries the attempts in order until one yields its first event: fallback
 * happens only here, before anything reached the caller (ARCHITECTURE.md rule 4).
 */
async function openAnswer({ id, plan, admitted }: PreparedInference, stream: boolean, signal: AbortSignal, deps: InferenceDeps): Promise<OpenedAnswer> {
  const trace: RoutingAttempt[] = plan.skipped.map((s) =>
    create(RoutingAttemptSchema, { modelId: s.modelId, provider: s.provider, outcome: "skipped", reason: s.requirement.reason }),
  );
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
    trace.push(traceEntry(attempt, "ok", ""));
    try {
      const { model, route, free } = attempt;
      return {
        iterator,
        first,
        start: startEvent(id, attempt, trace, warnings, admitted.admission, deps.now()),
        answering: { attempt: { model, route, free }, promptBytes: answeringPromptBytes(admitted, attempt, stream), outputCharacters: 0 },
        excludeReasoning: attempt.request.reasoning?.exclude === true,
      };
    } catch (error) {
      // Nothing relays this answer yet, so nothing else would end its upstream request.
      await iterator.return?.();
      throw error;
    }
  }
  throw allAttemptsFailed(trace, longestRetryAfter);
}

/** The request with its stored conversation's history first; the key is told before anything about the conversation. */
async function withHistory(request: GenerateRequest, keyDigest: string, deps: InferenceDeps): Promise<GenerateRequest> {
  const { organizationId } = await checkKey(deps.accounts, keyDigest);
  if (!deps.conversations) throw previousNotFound(request.conversation!.previousId, referenceParam(request));
  return deps.conversations.expand(request, organizationId);
}

/** Gives back the hold of a prepared request that will not be answered (its background turn could not be stored). */
export function releasePrepared(prepared: PreparedInference, outcome: string, deps: Pick<InferenceDeps, "now">) {
  const { admitted, request, started } = prepared;
  finishRequest({
    admission: admitted.admission,
    answering: undefined,
    unansweredModelId: admitted.attempts[0].model.config.id,
    outcome,
    requestTags: request.requestTags,
    streamed: request.stream,
    chargesCut: false,
    latencyMs: performance.now() - started,
    now: deps.now().getTime(),
  });
}

interface FinishedRequest {
  admission: AdmittedRequest["admission"];
  answering: Answering | undefined;
  /** The model recorded when no answer started: the first attempt's. */
  unansweredModelId: string;
  outcome: string;
  requestTags: GenerateRequest["requestTags"];
  streamed: boolean;
  /** An answer cut before its usage is charged the estimate of what it produced. */
  chargesCut: boolean;
  latencyMs: number;
  now: number;
}

/** Hands the outcome to the meter, which settles the charge and records the usage in the background (docs/accounts.md, "Credits"). */
function finishRequest({ admission, answering, unansweredModelId, outcome, requestTags, streamed, chargesCut, latencyMs, now }: FinishedRequest) {
  const details = {
    model: answering?.attempt.model.config.id ?? unansweredModelId,
    provider: answering?.attempt.route.provider.id ?? "",
    outcome,
    requestTags,
    latencyMs,
    streamed,
    now,
  };
  const usage = deliveredUsage(answering, chargesCut);
  if (usage) admission.settle(usage, details);
  else admission.release(details);
}

/**
 * Relays one provider's events, which are the hub's own: block starts get
 * their stable id when the provider gave none, usage gets its exact cost and
 * comes right before finish. With `reasoning.exclude` the reasoning blocks are
 * withheld (their tokens are still counted and billed, as the provider spent them).
 * The recorder sees every event as relayed (ids filled, cost set), withheld
 * reasoning included: a stored turn keeps it for the next turn's provider.
 */
class Relay {
  private usageEvent: GenerateResponse | undefined;
  private finishEvent: GenerateResponse | undefined;
  /** Indexes of withheld blocks; made only when reasoning is excluded. */
  private readonly withheld: Set<number> | undefined;
  private readonly id: string;
  private readonly progress: Answering;
  private readonly recorder: TurnRecorder | undefined;

  constructor(id: string, progress: Answering, recorder: TurnRecorder | undefined, excludeReasoning: boolean) {
    this.id = id;
    this.progress = progress;
    this.recorder = recorder;
    this.withheld = excludeReasoning ? new Set() : undefined;
  }

  /** The event to pass on now, if any (usage and finish wait for the end; withheld blocks never go). */
  pass(response: GenerateResponse): GenerateResponse | undefined {
    const event = response.event;
    // Unique across requests, stable within this one (the Responses format's item ids).
    if (event.case === "blockStart" && !event.value.id) event.value.id = `${this.id}_${event.value.index}`;
    if (event.case !== "usage" && event.case !== "finish") this.recorder?.observe(response);
    switch (event.case) {
      case "blockStart":
        if (this.withheld && event.value.type === BlockType.REASONING) {
          this.withheld.add(event.value.index);
          return undefined;
        }
        return response;
      case "blockDelta":
        // Withheld reasoning was generated all the same.
        this.progress.outputCharacters += event.value.text.length;
        return this.withheld?.has(event.value.index) ? undefined : response;
      case "blockStop":
        return this.withheld?.has(event.value.index) ? undefined : response;
      case "usage":
        this.usageEvent = response;
        return undefined;
      case "finish":
        this.finishEvent = response;
        return undefined;
      default:
        return response;
    }
  }

  /** After the last event: the usage with its exact cost; from here on the answer counts as served. */
  usage(): GenerateResponse {
    const usageEvent = (this.usageEvent ??= create(GenerateResponseSchema, { event: { case: "usage", value: {} } }));
    const { attempt } = this.progress;
    const usage = usageEvent.event.value as Usage;
    const cost = attempt.free ? 0n : costOf(usage, attempt.route.prices);
    usage.cost = formatMoney(cost);
    // Served from here on: a caller leaving after the usage event still pays the real cost.
    this.progress.served = { tokens: usage, cost };
    this.recorder?.observe(usageEvent);
    return usageEvent;
  }

  /** The finish, last. */
  finish(): GenerateResponse {
    const finishEvent = (this.finishEvent ??= create(GenerateResponseSchema, { event: { case: "finish", value: {} } }));
    this.recorder?.observe(finishEvent);
    return finishEvent;
  }
}

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

export function traceEntry(attempt: Attempt, outcome: string, reason: string): RoutingAttempt {
  return create(RoutingAttemptSchema, { modelId: attempt.model.config.id, provider: attempt.route.provider.id, outcome, reason });
}

function traceJson(trace: RoutingAttempt[]): JsonObject {
  return { attempts: trace.map((t) => ({ model: t.modelId, provider: t.provider, outcome: t.outcome, reason: t.reason })) };
}

/**
 * An answer that broke off after its first event: 502 upstream_error, whose trace says the
 * serving attempt (the start's last, traced `ok` when it began) failed, and why.
 */
function brokeOff(error: unknown, trace: readonly RoutingAttempt[]): ConnectError {
  const why = error instanceof UpstreamError ? error.message : String(error);
  const reason = error instanceof UpstreamError ? error.reason : "internal_error";
  const failed = trace.map((entry, index) => (index === trace.length - 1 ? { ...entry, outcome: "error", reason } : entry));
  return routerError(Code.Unavailable, "upstream_error", `The provider's answer broke off before it was complete: ${why}`, {
    metadata: traceJson(failed),
    cause: error,
  });
}

/** A 4xx from upstream is the caller's problem: surface it as a 400 with the upstream's words. */
export function upstreamRejected(error: UpstreamError, trace: RoutingAttempt[]): ConnectError {
  return routerError(Code.InvalidArgument, "upstream_invalid_request", `The provider rejected the request: ${error.message}`, {
    metadata: traceJson(trace),
  });
}

/**
 * decisions.md: 502 upstream_error after all fallbacks, 429 when every attempt
 * was rate limited; either says Retry-After when a provider asked for a wait.
 */
function allAttemptsFailed(trace: RoutingAttempt[], retryAfterSeconds: number): ConnectError {
  const failures = trace.filter((t) => t.outcome === "error");
  const allRateLimited = failures.length > 0 && failures.every((t) => t.reason === "http_429");
  const options = { metadata: traceJson(trace), retryAfterSeconds };
  return allRateLimited
    ? routerError(Code.ResourceExhausted, "upstream_rate_limited", "Every provider for this model is rate limiting; retry later.", options)
    : routerError(Code.Unavailable, "upstream_error", "Every provider for this model failed.", options);
}
