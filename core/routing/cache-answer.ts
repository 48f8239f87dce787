// The semantic cache in an inference (docs/cache.md): a hit is answered from
// the stored events, as the hub's stream, and charged a tenth of the original
// price; a miss's answer is recorded as it is relayed and kept once it has
// finished well.
import { create } from "@bufbuild/protobuf";
import {
  CacheResultSchema,
  GenerateResponseSchema,
  RoutingAttemptSchema,
  type GenerateResponse,
  type ResponseStart,
  type Usage,
} from "../../gen/router/v1/inference_pb.js";
import { bareModelName } from "../../wire/model-name.ts";
import type { FoundAnswer } from "../cache/semantic-cache.ts";
import { formatMoney, parseMoney, type Money } from "../billing/money.ts";
import type { InferenceDeps } from "./inference-deps.ts";
import type { PreparedInference } from "./prepare-inference.ts";
import { selectionTraceEntry } from "./auto-router.ts";

/** A hit costs this share of the original answer's price (decisions.md, "Caching"). */
const HIT_PRICE_DIVISOR = 10n;

/** A tenth of the original's cost, rounded up to the smallest unit. */
export const hitCost = (original: Money): Money => (original + HIT_PRICE_DIVISOR - 1n) / HIT_PRICE_DIVISOR;

/**
 * Answers a prepared request from a stored answer: its start (the stored
 * model and provider, `cache.hit`), every stored event with this request's ids,
 * the usage at a tenth of its cost, and the settlement.
 */
export async function* answerFromCache(prepared: PreparedInference, found: FoundAnswer, deps: Pick<InferenceDeps, "now">): AsyncGenerator<GenerateResponse> {
  const { id, request, plan, admitted, recorder, started } = prepared;
  const { answer, similarity } = found;
  let served: { tokens: Usage; cost: Money } | undefined;
  try {
    const start = startOfHit(prepared, found, deps.now());
    recorder?.observe(start);
    yield start;
    for (const stored of answer.events) {
      const event = renamed(stored, answer.id, id);
      if (event.event.case === "usage") {
        const usage = event.event.value;
        const cost = plan.free ? 0n : hitCost(parseMoney(usage.cost || "0"));
        usage.cost = formatMoney(cost);
        served = { tokens: usage, cost };
      }
      recorder?.observe(event);
      yield event;
    }
  } finally {
    const details = {
      model: answer.modelId,
      provider: answer.provider,
      outcome: served ? "ok" : "client_closed",
      requestTags: request.requestTags,
      latencyMs: performance.now() - started,
      streamed: request.stream,
      now: deps.now().getTime(),
      cacheSimilarity: similarity,
    };
    if (served) admitted.admission.settle(served, details);
    else admitted.admission.release(details);
  }
}

function startOfHit({ id, plan, admitted, request }: PreparedInference, { answer, similarity, exact }: FoundAnswer, now: Date): GenerateResponse {
  const attempts = [
    ...(plan.selection ? [selectionTraceEntry(plan.selection)] : []),
    create(RoutingAttemptSchema, { modelId: answer.modelId, provider: answer.provider, outcome: "cache_hit", reason: exact ? "exact" : "similar" }),
  ];
  const { admission } = admitted;
  return create(GenerateResponseSchema, {
    event: {
      case: "start",
      value: {
        id,
        modelId: answer.modelId,
        model: bareModelName(answer.modelId),
        provider: answer.provider,
        created: BigInt(Math.floor(now.getTime() / 1000)),
        attempts,
        warnings: request.warnings,
        free: plan.free,
        protocol: answer.protocol,
        nativeFormat: answer.nativeFormat,
        requestsWindow: admission.requestsWindow,
        tokensWindow: admission.tokensWindow,
        cache: { hit: true, similarity, originalId: answer.id },
      },
    },
  });
}

/**
 * A stored event as this request's: block ids the relay made from the
 * original's id (`<id>_<index>`) are made from this one's (an item id must
 * not name two answers); the provider's own ids stay. A provider-kept copy
 * (Finish.upstream_id) is the original's alone.
 */
function renamed(stored: GenerateResponse, originalId: string, id: string): GenerateResponse {
  const event = stored.event;
  if (event.case === "blockStart" && event.value.id === `${originalId}_${event.value.index}`) {
    return create(GenerateResponseSchema, { event: { case: "blockStart", value: { ...event.value, id: `${id}_${event.value.index}` } } });
  }
  if (event.case === "finish" && event.value.upstreamId) {
    return create(GenerateResponseSchema, { event: { case: "finish", value: { ...event.value, upstreamId: "" } } });
  }
  return stored;
}

/** Marks a miss's start: the cache was asked and had nothing. */
export function markMiss(start: GenerateResponse) {
  (start.event.value as ResponseStart).cache = create(CacheResultSchema, { hit: false });
}
