// The meter: what any paid or free-tier work goes through, whatever it is (a
// chat answer today, an image or video task next). `admit` checks the key and
// its limits and takes the charge (a credit hold or a free-quota unit) in the
// store's one atomic step; the `Admission` it returns ends the work exactly
// once, with `settle` (something was delivered: charge it) or `release`
// (nothing was: return the hold and the free unit). Both queue the settlement
// and the usage record off the caller's path (docs/accounts.md, "Credits").
//
// The meter knows money, tokens and keys, never requests or providers: the
// caller computes the hold and the usage (core/routing/inference-charge.ts for
// chat), so this folder imports nothing from routing or providers.
import type { UsageCounts } from "../billing/cost.ts";
import { create } from "@bufbuild/protobuf";
import { RateLimitWindowSchema, type RateLimitWindow } from "../../gen/router/v1/inference_pb.js";
import type { Accounts } from "../accounts/accounts.ts";
import { moneyFromNanos, nanosFromMoney } from "../accounts/ledger-units.ts";
import { refusalError, storeUnavailable } from "../accounts/refusals.ts";
import { StoreUnavailableError } from "../accounts/store-errors.ts";
import type { FreeCandidate, KeyOwner, WindowState } from "../accounts/store.ts";
import { nextUtcMidnight } from "../accounts/windows.ts";
import { formatMoney, type Money } from "../billing/money.ts";

/** What the meter needs of the core's accounts (a whole `Accounts` will do). */
export type MeterDeps = Pick<Accounts, "stores" | "settlements" | "usage">;

/** What the work may cost, decided by the caller before it starts. */
export type ChargeInput =
  /** Paid work: hold its worst-case cost (nano-dollars) until it settles. */
  | {
      kind: "credits";
      holdNanos: bigint;
      /** What the caller may lower to need less, after "Top up, or" in the 402 (`lower max_tokens` unless said). */
      lowerHint?: string;
    }
  /**
   * Free-tier work: one unit of today's quota of one candidate. Without `pick`
   * the first candidate with quota left is used; with it (a number in [0, 1)),
   * one drawn uniformly among those with quota left. `anyModel`: the caller
   * named no model (router/free), so none having quota left is refused as
   * `no_free_model_available` rather than as one model's exhausted quota.
   */
  | { kind: "free"; candidates: FreeCandidate[]; pick?: number; anyModel?: boolean };

export interface AdmitInput {
  /** The work's service id: its hold, its settlement and its usage record are kept under it. */
  requestId: string;
  /** SHA-256 hex of the caller's API key. */
  keyDigest: string;
  /** Catalogue ids (no suffix) the caller names; each must be on the key's allow-list, when it has one. */
  modelIds: string[];
  charge: ChargeInput;
  /** Unix milliseconds (injected clock). */
  now: number;
}

/** Token counts as the usage record keeps them: those a cost is made of (the hub's usage event has these fields). */
export type MeteredTokens = UsageCounts;

/** What delivered work used and cost. */
export interface MeteredUsage {
  tokens: MeteredTokens;
  /** Exact cost; charged rounded up to the nano-dollar. Free work is charged nothing whatever this says. */
  cost: Money;
  /** An estimate (the provider never reported usage): charged at most the hold, and the cost recorded is then the hold. */
  estimated?: boolean;
}

/** The rest of the usage record, which only the caller knows. */
export interface UsageDetails {
  /** Catalogue id of the model that served (or was meant to). */
  model: string;
  /** The provider that served; empty when none did. */
  provider: string;
  /** `ok`, or the reason the work failed (`upstream_error`, `client_closed`...). */
  outcome: string;
  requestTags: string[];
  latencyMs: number;
  streamed: boolean;
  /** Unix milliseconds. */
  now: number;
  /** Answered from the cache (issue 23): how close the entry was, 1 for an exact match; absent otherwise. */
  cacheSimilarity?: number;
}

export interface Admission {
  readonly requestId: string;
  /** Who pays. */
  readonly key: KeyOwner;
  /** The credits held (0 for free work). */
  readonly holdNanos: bigint;
  /** Free work: the model whose quota unit was taken, and that quota after this request. */
  readonly free?: { modelId: string; limit: number; used: number };
  /** The tighter request window (a free quota counts as one) and token window, for the caller's rate-limit headers. */
  readonly requestsWindow?: RateLimitWindow;
  readonly tokensWindow?: RateLimitWindow;
  /** Something reached the caller: charge it and record it. Only the first of settle and release counts. */
  settle(usage: MeteredUsage, details: UsageDetails): void;
  /** Nothing reached the caller: charge nothing, return a free unit, record it at cost 0. */
  release(details: UsageDetails): void;
}

export async function admit(deps: MeterDeps, input: AdmitInput): Promise<Admission> {
  const { requestId, now, charge } = input;
  const storeCharge =
    charge.kind === "credits" ? { kind: "credits" as const, holdNanos: charge.holdNanos } : { kind: "free" as const, candidates: charge.candidates, pick: charge.pick ?? 0 };
  let admission;
  try {
    admission = await deps.stores.admission.admit({ requestId, keyDigest: input.keyDigest, modelIds: input.modelIds, charge: storeCharge, now });
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    // A command that may have run before its reply was lost (connection dropped,
    // no answer in time): release whatever it took once the store is back
    // (settling an id never admitted does nothing). One never sent took nothing.
    if (error.mayHaveRun) deps.settlements.push({ requestId, chargeNanos: 0n, tokens: 0, refundFreeQuota: true, now });
    throw storeUnavailable(error);
  }
  if (!admission.admitted) {
    // router/free with one eligible model out of quota is still "no free model" (spec rule 2), not a quota 429.
    const anyModel = charge.kind === "free" && charge.anyModel === true;
    const refusal = anyModel && admission.refusal.reason === "free_quota_exhausted" ? { reason: "no_free_model_available" as const } : admission.refusal;
    throw refusalError(refusal, now, charge.kind === "credits" ? charge.lowerHint : undefined);
  }
  const { key, rateLimit, free } = admission.value;
  let requests = rateLimit.requests;
  if (free) {
    // A free request's daily quota is a request limit too: the tighter one is shown.
    const quota: WindowState = { limit: free.limit, remaining: free.limit - free.used, resetAt: nextUtcMidnight(now) };
    if (!requests || quota.remaining < requests.remaining) requests = quota;
  }
  const holdNanos = charge.kind === "credits" ? charge.holdNanos : 0n;
  return new MeteredAdmission(deps, { requestId, key, holdNanos, free, requestsWindow: requests && toWindow(requests), tokensWindow: rateLimit.tokens && toWindow(rateLimit.tokens) });
}

/** What an Admission is made of; kept with long-running work so that another instance can end it. */
export type AdmissionFacts = Pick<Admission, "requestId" | "key" | "holdNanos" | "free" | "requestsWindow" | "tokensWindow">;

/**
 * The Admission of work admitted earlier, perhaps on another instance (a media
 * task taken over after its instance died): ending it settles or releases the
 * hold kept under its request id, exactly as the original would have.
 */
export function resumeAdmission(deps: MeterDeps, facts: AdmissionFacts): Admission {
  return new MeteredAdmission(deps, facts);
}

/** One object per admitted request, no closures: a streamed answer keeps its admission as long as it lasts. */
class MeteredAdmission implements Admission {
  readonly requestId: Admission["requestId"];
  readonly key: Admission["key"];
  readonly holdNanos: Admission["holdNanos"];
  readonly free: Admission["free"];
  readonly requestsWindow: Admission["requestsWindow"];
  readonly tokensWindow: Admission["tokensWindow"];
  private readonly deps: MeterDeps;
  private ended = false;

  constructor(deps: MeterDeps, facts: AdmissionFacts) {
    this.deps = deps;
    this.requestId = facts.requestId;
    this.key = facts.key;
    this.holdNanos = facts.holdNanos;
    // The optional facts given are copied; a class field is an own property whether assigned or
    // not (target ES2024 defines fields), so one not given is present and undefined, not absent.
    if (facts.free !== undefined) this.free = facts.free;
    if (facts.requestsWindow !== undefined) this.requestsWindow = facts.requestsWindow;
    if (facts.tokensWindow !== undefined) this.tokensWindow = facts.tokensWindow;
  }

  settle(usage: MeteredUsage, details: UsageDetails): void {
    if (this.free) return this.end(0n, 0n, usage.tokens, details);
    const chargeNanos = nanosFromMoney(usage.cost);
    // An estimate is never charged beyond what was held; the record then shows the hold as the cost.
    if (usage.estimated && chargeNanos > this.holdNanos) return this.end(this.holdNanos, moneyFromNanos(this.holdNanos), usage.tokens, details);
    this.end(chargeNanos, usage.cost, usage.tokens, details);
  }

  release(details: UsageDetails): void {
    this.end(0n, 0n, undefined, details);
  }

  /** `tokens` undefined: nothing was delivered, so a free unit goes back. */
  private end(chargeNanos: bigint, cost: Money, tokens: MeteredTokens | undefined, details: UsageDetails): void {
    if (this.ended) return;
    this.ended = true;
    const { requestId, key, deps } = this;
    const delivered = tokens !== undefined;
    deps.settlements.push({
      requestId,
      chargeNanos,
      tokens: delivered ? tokens.inputTokens + tokens.outputTokens : 0,
      refundFreeQuota: !delivered,
      now: details.now,
    });
    deps.usage.record({
      id: requestId,
      organizationId: key.organizationId,
      keyId: key.keyId,
      model: details.model,
      provider: details.provider,
      promptTokens: tokens?.inputTokens ?? 0,
      completionTokens: tokens?.outputTokens ?? 0,
      reasoningTokens: tokens?.reasoningTokens ?? 0,
      cachedTokens: tokens?.cachedInputTokens ?? 0,
      cacheWriteTokens: tokens?.cacheWriteTokens ?? 0,
      cost: formatMoney(cost),
      requestTags: details.requestTags,
      latencyMs: Math.round(details.latencyMs),
      outcome: details.outcome,
      free: this.free !== undefined,
      streamed: details.streamed,
      createdAt: details.now,
      // Only a hit carries the marker, so every other record keeps its shape.
      ...(details.cacheSimilarity !== undefined && { cacheHit: true, cacheSimilarity: details.cacheSimilarity }),
    });
  }
}

function toWindow(state: WindowState): RateLimitWindow {
  return create(RateLimitWindowSchema, { limit: state.limit, remaining: state.remaining, resetAtMs: BigInt(state.resetAt) });
}
