// Runs one inference: authenticate, plan the attempts, try them in order until
// one yields its first event, then relay that provider's events as the hub's
// stream. Fallback happens only before the first event (ARCHITECTURE.md rule 4).
import { create, type JsonObject } from "@bufbuild/protobuf";
import {
  BlockType,
  GenerateResponseSchema,
  RoutingAttemptSchema,
  type GenerateRequest,
  type GenerateResponse,
  type RoutingAttempt,
} from "../../gen/router/v1/inference_pb.js";
import { authenticate, type KeyStore } from "../auth/keys.ts";
import { costOf } from "../billing/cost.ts";
import { formatMoney } from "../billing/money.ts";
import type { Catalogue } from "../catalogue/catalogue.ts";
import { Code, ConnectError, routerError } from "../errors.ts";
import { newServiceId } from "../ids.ts";
import type { ProviderAdapter, TokenUsage, UpstreamCall, UpstreamEvent } from "../providers/types.ts";
import { UpstreamError } from "../providers/types.ts";
import { bareModelName } from "./model-id.ts";
import { planAttempts, type Attempt } from "./plan.ts";

export interface InferenceDeps {
  catalogue: Catalogue;
  keys: KeyStore;
  /** One adapter per wire protocol named in the configuration. */
  adapters: Record<string, ProviderAdapter>;
  now: () => Date;
}

export async function* runInference(request: GenerateRequest, signal: AbortSignal, deps: InferenceDeps): AsyncGenerator<GenerateResponse> {
  // The authenticated key and organisation are what accounting (issue 4) will charge.
  authenticate(deps.keys, request.caller?.apiKey ?? "");
  const id = request.requestId || newServiceId(deps.catalogue.idPrefix);
  const { attempts, skipped } = planAttempts(request, deps.catalogue);
  const trace: RoutingAttempt[] = skipped.map((s) =>
    create(RoutingAttemptSchema, { modelId: s.modelId, provider: s.provider, outcome: "skipped", reason: s.requirement.reason }),
  );
  for (const attempt of attempts) {
    const adapter = deps.adapters[attempt.route.provider.protocol];
    const call: UpstreamCall = {
      request: attempt.request,
      provider: attempt.route.provider,
      route: attempt.route.route,
      apiKey: attempt.route.apiKey,
      stream: request.stream,
      maxCompletionTokens: attempt.route.maxCompletionTokens,
      signal,
    };
    const warnings = [...attempt.warnings, ...(adapter.warningsFor?.(call) ?? [])];
    const events = adapter.stream(call);
    const iterator = events[Symbol.asyncIterator]();
    let first: IteratorResult<UpstreamEvent>;
    try {
      first = await iterator.next();
    } catch (error) {
      if (signal.aborted) throw callerWentAway();
      if (!(error instanceof UpstreamError)) throw error;
      trace.push(traceEntry(attempt, "error", error.reason));
      if (!error.retryable) throw upstreamRejected(error, trace);
      continue;
    }
    trace.push(traceEntry(attempt, "ok", ""));
    try {
      yield startEvent(id, attempt, trace, warnings, deps.now());
      yield* relay(first, iterator, attempt, signal);
    } finally {
      // Ends the upstream request too when our caller stops reading early.
      await iterator.return?.();
    }
    return;
  }
  throw allAttemptsFailed(trace);
}

/**
 * Relays one provider's events; usage gets its exact cost and comes right before
 * finish. With `reasoning.exclude` the reasoning blocks are withheld (their
 * tokens are still counted and billed, as the provider spent them).
 */
async function* relay(first: IteratorResult<UpstreamEvent>, rest: AsyncIterator<UpstreamEvent>, attempt: Attempt, signal: AbortSignal): AsyncGenerator<GenerateResponse> {
  let usage: TokenUsage | undefined;
  let finish: Extract<UpstreamEvent, { type: "finish" }> | undefined;
  const excludeReasoning = attempt.request.reasoning?.exclude === true;
  const withheld = new Set<number>();
  try {
    for (let step = first; !step.done; step = await rest.next()) {
      const event = step.value;
      if (event.type === "usage") usage = event.usage;
      else if (event.type === "finish") finish = event;
      else if (event.type === "annotation") yield create(GenerateResponseSchema, { event: { case: "annotation", value: event.annotation } });
      else if (excludeReasoning && event.type === "block_start" && event.blockType === BlockType.REASONING) withheld.add(event.index);
      else if (!withheld.has(event.index)) yield blockEvent(event);
    }
  } catch (error) {
    if (signal.aborted) throw callerWentAway();
    const reason = error instanceof UpstreamError ? error.message : String(error);
    throw routerError(Code.Unavailable, "upstream_error", `The provider failed mid-stream: ${reason}`, { cause: error });
  }
  const tokens = usage ?? { inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0, reasoningTokens: 0 };
  const cost = attempt.free ? 0n : costOf(tokens, attempt.route.prices);
  yield create(GenerateResponseSchema, { event: { case: "usage", value: { ...tokens, cost: formatMoney(cost) } } });
  yield create(GenerateResponseSchema, {
    event: { case: "finish", value: { reason: finish?.reason, rawReason: finish?.rawReason ?? "" } },
  });
}

const callerWentAway = () => new ConnectError("the caller went away", Code.Canceled);

function blockEvent(event: Exclude<UpstreamEvent, { type: "usage" | "finish" | "annotation" }>): GenerateResponse {
  switch (event.type) {
    case "block_start":
      return create(GenerateResponseSchema, {
        event: {
          case: "blockStart",
          value: { index: event.index, type: event.blockType, toolCallId: event.toolCallId ?? "", toolName: event.toolName ?? "", mimeType: event.mimeType ?? "" },
        },
      });
    case "block_delta":
      return create(GenerateResponseSchema, {
        event: {
          case: "blockDelta",
          value: { index: event.index, text: event.text, signature: event.signature ?? "", redactedData: event.redactedData ?? "", data: event.data },
        },
      });
    case "block_stop":
      return create(GenerateResponseSchema, { event: { case: "blockStop", value: { index: event.index } } });
  }
}

function startEvent(id: string, attempt: Attempt, trace: RoutingAttempt[], warnings: string[], now: Date): GenerateResponse {
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
      },
    },
  });
}

function traceEntry(attempt: Attempt, outcome: string, reason: string): RoutingAttempt {
  return create(RoutingAttemptSchema, { modelId: attempt.model.config.id, provider: attempt.route.provider.id, outcome, reason });
}

function traceJson(trace: RoutingAttempt[]): JsonObject {
  return { attempts: trace.map((t) => ({ model: t.modelId, provider: t.provider, outcome: t.outcome, reason: t.reason })) };
}

/** A 4xx from upstream is the caller's problem: surface it as a 400 with the upstream's words. */
function upstreamRejected(error: UpstreamError, trace: RoutingAttempt[]): ConnectError {
  return routerError(Code.InvalidArgument, "upstream_invalid_request", `The provider rejected the request: ${error.message}`, {
    metadata: traceJson(trace),
  });
}

/** decisions.md: 502 upstream_error after all fallbacks, 429 when every attempt was rate limited. */
function allAttemptsFailed(trace: RoutingAttempt[]): ConnectError {
  const failures = trace.filter((t) => t.outcome === "error");
  const allRateLimited = failures.length > 0 && failures.every((t) => t.reason === "http_429");
  return allRateLimited
    ? routerError(Code.ResourceExhausted, "upstream_rate_limited", "Every provider for this model is rate limiting; retry later.", { metadata: traceJson(trace) })
    : routerError(Code.Unavailable, "upstream_error", "Every provider for this model failed.", { metadata: traceJson(trace) });
}
