// What a chat inference puts to the meter (core/metering/meter.ts): its charge
// from the plan (the worst-case hold of its attempts, or a free-quota unit of
// one of its free models) at admission, and at the end what it delivered (the
// provider's usage, a cut stream's estimate, or nothing).
import type { CatalogueModel } from "../catalogue/catalogue.ts";
import type { Money } from "../billing/money.ts";
import { nanosFromMoney } from "../accounts/ledger-units.ts";
import { admit, type Admission, type ChargeInput, type MeterDeps, type MeteredTokens, type MeteredUsage } from "../metering/meter.ts";
import { cutStreamEstimate, holdFor, promptBytesOf, promptBytesOfAttempts } from "./hold.ts";
import type { Attempt, Plan } from "./plan.ts";

export interface AdmittedRequest {
  admission: Admission;
  /** The plan's attempts; for a free request, those of the model whose quota it uses. */
  attempts: Attempt[];
  /** A paid request's prompt size for each attempt, counted for its hold; a free request has none. */
  promptBytes: ReadonlyMap<Attempt, number> | undefined;
}

interface AdmissionInput {
  id: string;
  keyDigest: string;
  plan: Plan;
  now: number;
}

export async function admitRequest(deps: { accounts: MeterDeps; random: () => number }, input: AdmissionInput): Promise<AdmittedRequest> {
  const { plan } = input;
  const promptBytes = plan.free ? undefined : promptBytesOfAttempts(plan.attempts);
  const charge: ChargeInput = plan.free
    ? { kind: "free", candidates: freeCandidates(plan.attempts), pick: plan.randomFree ? deps.random() : 0, anyModel: plan.randomFree }
    : { kind: "credits", holdNanos: nanosFromMoney(holdFor(plan.attempts, promptBytes)) };
  const admission = await admit(deps.accounts, { requestId: input.id, keyDigest: input.keyDigest, modelIds: plan.namedModelIds, charge, now: input.now });
  const freeModel = admission.free?.modelId;
  return {
    admission,
    attempts: freeModel ? plan.attempts.filter((attempt) => attempt.model.config.id === freeModel) : plan.attempts,
    promptBytes,
  };
}

/**
 * The prompt's size for the answer of this attempt: only a cut stream is
 * estimated, so an answer not streamed needs none (0), and a paid request's
 * was counted for its hold. Walking a long conversation once is enough.
 */
export function answeringPromptBytes(admitted: AdmittedRequest, attempt: Attempt, streamed: boolean): number {
  if (!streamed) return 0;
  return admitted.promptBytes?.get(attempt) ?? promptBytesOf(attempt.request);
}

/**
 * The attempt whose answer was relayed: characters so far, and once its usage is known, what it cost.
 * Its model and route, not its request: an answer can last minutes, and the request may be a long conversation.
 */
export interface Answering {
  attempt: Pick<Attempt, "model" | "route" | "free">;
  /** The prompt's size (promptBytesOf), for the estimate of a cut stream; 0 when not streamed (answeringPromptBytes). */
  promptBytes: number;
  outputCharacters: number;
  served?: { tokens: MeteredTokens; cost: Money };
}

/**
 * What reached the caller, for the meter to settle; undefined when nothing
 * did, and the meter releases. A complete answer has its real usage (also when
 * the caller left after the usage event). A stream cut before its usage (the
 * provider failed, or the caller left) has an estimate of what was relayed.
 * Nothing reached the caller when no answer started, or when an answer that
 * did not complete is not charged as cut (`chargesCut` false: a non-streamed
 * answer gets an error, not a part of it; a failed background answer keeps none).
 */
export function deliveredUsage(answering: Answering | undefined, chargesCut: boolean): MeteredUsage | undefined {
  if (answering?.served) return answering.served;
  if (!answering || !chargesCut) return undefined;
  const estimate = cutStreamEstimate(answering.attempt.route, answering.promptBytes, answering.outputCharacters);
  return { tokens: estimate.usage, cost: estimate.cost, estimated: true };
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
    candidates.set(model.config.id, dailyFreeQuota(model)!);
  }
  return [...candidates].map(([modelId, dailyQuota]) => ({ modelId, dailyQuota }));
}

/** A model's daily free quota: the smallest its free routes set; undefined when none is free. */
export function dailyFreeQuota(model: CatalogueModel): number | undefined {
  const quotas = model.routes.flatMap((route) => (route.route.free?.enabled ? [route.route.free.daily_quota] : []));
  return quotas.length > 0 ? Math.min(...quotas) : undefined;
}
