// The first step of an inference: the caller's key, the stored conversation's
// history, the plan of attempts, and the admission (key, limits and the
// charge's hold, in one step of the account store). Every refusal is told here,
// before anything is answered.
import type { GenerateRequest } from "../../gen/router/v1/inference_pb.js";
import { callerKeyDigest, checkKey } from "../accounts/check-key.ts";
import { previousNotFound, referenceParam, type RecordOptions, type TurnRecorder } from "../conversations/conversations.ts";
import { newServiceId } from "../ids.ts";
import { admitRequest, type AdmittedRequest } from "./inference-charge.ts";
import type { InferenceDeps } from "./inference-deps.ts";
import { planAttempts, type Plan } from "./plan.ts";
import { preferCachedProvider, type StickyContext } from "./prefer-cached-provider.ts";
import { asksAutoRouter } from "./auto-router.ts";
import type { CacheRequest } from "../cache/semantic-cache.ts";

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
  /** For remembering the provider if its answer shows prompt-cache activity; absent when stickiness is off. */
  sticky?: StickyContext;
  /** The semantic cache's work for this request; absent when the request does not use it (no `cache_key`). */
  cache?: CacheRequest;
}

export async function prepareInference(request: GenerateRequest, deps: InferenceDeps, record?: RecordOptions): Promise<PreparedInference> {
  const started = performance.now();
  const keyDigest = callerKeyDigest(request.caller);
  const id = request.requestId || newServiceId(deps.catalogue.idPrefix);
  // A stored conversation's history goes first, so planning and the hold count it (docs/architecture.md, "Conversations").
  const received = request;
  if (request.conversation?.previousId) request = await withHistory(request, keyDigest, deps);
  // The cache's work starts now: a remote embedding runs while the account store is asked.
  const cacheStart = deps.semanticCache?.begin(request);
  if (cacheStart?.warnings.length) request = { ...request, warnings: [...request.warnings, ...cacheStart.warnings] };
  let plan: Plan;
  // router/auto selects among the models the key allows, with its organisation's preference: the key is needed first.
  const caller = asksAutoRouter(request) ? await checkKey(deps.accounts, keyDigest) : undefined;
  try {
    plan = planAttempts(request, deps.catalogue, { measurements: deps.measurements, caller });
  } catch (error) {
    // A bad key is told before anything about the request (401 first).
    await checkKey(deps.accounts, keyDigest);
    throw error;
  }
  let admitted = await admitRequest(deps, { id, keyDigest, plan, now: deps.now().getTime() });
  const organizationId = admitted.admission.key.organizationId;
  // Prompt-cache stickiness needs the organisation, known only now; the hold covers every attempt, whatever their order.
  const pending = preferCachedProvider(admitted.attempts, request, organizationId, deps.cacheAffinity);
  // Awaited only when a store was asked: an await per request is not free on the hot path.
  const preferred = pending instanceof Promise ? await pending : pending;
  if (preferred.attempts !== admitted.attempts) admitted = { ...admitted, attempts: preferred.attempts };
  // This turn's input is the request's own; it continues the stored turn the reference named (by either of its ids).
  const continued = request.conversation === received.conversation ? received : { ...received, conversation: request.conversation };
  const recorder = deps.conversations?.recorder(continued, organizationId, record);
  const cache = cacheStart?.pending?.scoped(organizationId, admitted.attempts.map((attempt) => attempt.route.provider.id));
  return { id, request, plan, admitted, recorder, started, sticky: preferred.sticky, cache };
}

/** The request with its stored conversation's history first; the key is told before anything about the conversation. */
async function withHistory(request: GenerateRequest, keyDigest: string, deps: InferenceDeps): Promise<GenerateRequest> {
  const { organizationId } = await checkKey(deps.accounts, keyDigest);
  if (!deps.conversations) throw previousNotFound(request.conversation!.previousId, referenceParam(request));
  return deps.conversations.expand(request, organizationId);
}
