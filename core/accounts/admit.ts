// Admission of a planned request: its charge (a credit hold of the worst case,
// or a unit of a free quota), checked with the key and its limits in the
// store's one atomic step. Refusals become the core's errors here.
import { create } from "@bufbuild/protobuf";
import { RateLimitWindowSchema, type RateLimitWindow } from "../../gen/router/v1/inference_pb.js";
import type { Attempt, Plan } from "../routing/plan.ts";
import type { Accounts } from "./accounts.ts";
import { holdFor } from "./hold.ts";
import { nanosFromMoney } from "./ledger-units.ts";
import { fromStore, refusalError, storeUnavailable } from "./refusals.ts";
import { StoreUnavailableError } from "./store-errors.ts";
import type { Charge, KeyOwner, KeyRecord, WindowState } from "./store.ts";
import { nextUtcMidnight } from "./windows.ts";

export interface AdmittedRequest {
  key: KeyOwner;
  /** The plan's attempts; for a free request, those of the model whose quota it uses. */
  attempts: Attempt[];
  /** The credits held (0 for a free request). */
  holdNanos: bigint;
  requestsWindow?: RateLimitWindow;
  tokensWindow?: RateLimitWindow;
}

interface AdmissionInput {
  id: string;
  keyDigest: string;
  plan: Plan;
  now: number;
}

export async function admitRequest(deps: { accounts: Accounts; random: () => number }, input: AdmissionInput): Promise<AdmittedRequest> {
  const { plan, now } = input;
  const charge: Charge = plan.free
    ? { kind: "free", candidates: freeCandidates(plan.attempts), pick: plan.randomFree ? deps.random() : 0 }
    : { kind: "credits", holdNanos: nanosFromMoney(holdFor(plan.attempts)) };
  let admission;
  try {
    admission = await deps.accounts.stores.admission.admit({ requestId: input.id, keyDigest: input.keyDigest, modelIds: plan.namedModelIds, charge, now });
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    // A command that may have run before its reply was lost (connection dropped,
    // no answer in time): release whatever it took once the store is back
    // (settling an id never admitted does nothing). One never sent took nothing.
    if (error.mayHaveRun) deps.accounts.settlements.push({ requestId: input.id, chargeNanos: 0n, tokens: 0, refundFreeQuota: true, now });
    throw storeUnavailable(error);
  }
  if (!admission.admitted) {
    // router/free with one eligible model out of quota is still "no free model" (spec rule 2), not a quota 429.
    const refusal = plan.randomFree && admission.refusal.reason === "free_quota_exhausted" ? { reason: "no_free_model_available" as const } : admission.refusal;
    throw refusalError(refusal, now);
  }
  const { key, rateLimit, free } = admission.value;
  let requests = rateLimit.requests;
  if (free) {
    // A free request's daily quota is a request limit too: the tighter one is shown.
    const quota: WindowState = { limit: free.limit, remaining: free.limit - free.used, resetAt: nextUtcMidnight(now) };
    if (!requests || quota.remaining < requests.remaining) requests = quota;
  }
  return {
    key,
    holdNanos: charge.kind === "credits" ? charge.holdNanos : 0n,
    attempts: free ? plan.attempts.filter((attempt) => attempt.model.config.id === free.modelId) : plan.attempts,
    requestsWindow: requests && toWindow(requests),
    tokensWindow: rateLimit.tokens && toWindow(rateLimit.tokens),
  };
}

/** The key alone: for a request refused before admission, so a bad key still gets its 401 first. */
export async function checkKey(accounts: Accounts, keyDigest: string): Promise<KeyRecord> {
  const key = await fromStore(accounts.stores.keys.findByDigest(keyDigest));
  if (!key) throw refusalError({ reason: "invalid_api_key" }, 0);
  if (key.disabled) throw refusalError({ reason: "key_disabled" }, 0);
  return key;
}

/**
 * Each free model once, in attempt order, with its daily quota. The quota is
 * the model's, whatever providers the caller asks for: the smallest its free
 * routes set.
 */
function freeCandidates(attempts: Attempt[]) {
  const candidates = new Map<string, number>();
  for (const { model } of attempts) {
    if (candidates.has(model.config.id)) continue;
    const quotas = model.routes.flatMap((route) => (route.route.free?.enabled ? [route.route.free.daily_quota] : []));
    candidates.set(model.config.id, Math.min(...quotas));
  }
  return [...candidates].map(([modelId, dailyQuota]) => ({ modelId, dailyQuota }));
}

function toWindow(state: WindowState): RateLimitWindow {
  return create(RateLimitWindowSchema, { limit: state.limit, remaining: state.remaining, resetAtMs: BigInt(state.resetAt) });
}
