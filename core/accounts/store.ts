// The account state the core keeps: API keys, credit balances and holds, free
// quotas, rate-limit windows and the usage log. Each narrow interface has two
// implementations, in memory (the embedded default) and Redis (REDIS_URL,
// shared by every instance). Whatever must be exact under concurrency is one
// atomic step of the store (a Lua script on Redis), never read-then-write.
//
// Money in the stores is integer nano-dollars (1e-9 USD): Redis counts in
// signed 64-bit integers, which hold balances up to about 9.2e9 USD at that
// scale. Costs are computed exactly in femto-dollars and charged rounded up to
// the next nano-dollar (core/accounts/ledger-units.ts).
import type { SpendingPeriod } from "./windows.ts";

export interface KeyRecord {
  keyId: string;
  organizationId: string;
  /** Operator's label for the key. */
  name: string;
  disabled: boolean;
  /** Requests and tokens per minute for this key; undefined: no limit. */
  rpm?: number;
  tpm?: number;
  /** Catalogue model ids the key may use; empty: every model. */
  allowedModels: string[];
  /** Unix milliseconds. */
  createdAt: number;
}

export interface NewKey extends Omit<KeyRecord, "disabled" | "createdAt"> {
  /** SHA-256 hex of the key: the clear key is never stored. */
  digest: string;
  createdAt: number;
}

export interface OrganizationLimits {
  organizationId: string;
  rpm?: number;
  tpm?: number;
}

/** A configured key as seeded. */
export interface SeedKey extends NewKey {
  /** A key disabled here is disabled; one enabled here keeps an operator's disable. */
  disabled: boolean;
  /**
   * The key was made up at start (no ROUTER_DEV_KEY): when the store already
   * has a digest for the key id (another instance's key, or an earlier
   * start's), that digest stays and this one is dropped.
   */
  keepStoredDigest?: boolean;
}

/** What the configuration declares; seeding is idempotent and never re-enables a key an operator disabled. */
export interface SeedOrganization extends OrganizationLimits {
  /** The configuration's name for it. */
  name?: string;
  /** Starting balance, applied once (when the organisation has none yet). */
  initialCreditsNanos: bigint;
  keys: SeedKey[];
}

/** What a seed did not write as asked. */
export interface SeedResult {
  /** Ids of keepStoredDigest keys whose stored digest was kept. */
  keptKeyIds: string[];
}

/** An organisation the store knows: configured, topped up, or given a key. */
export interface OrganizationRecord extends OrganizationLimits {
  /** The configuration's name; empty for one made through the account service. */
  name: string;
  balanceNanos: bigint;
}

export interface OrganizationStore {
  exists(organizationId: string): Promise<boolean>;
  /** Every known organisation, by id. */
  list(): Promise<OrganizationRecord[]>;
}

export interface KeyStore {
  findByDigest(digest: string): Promise<KeyRecord | undefined>;
  /** Refuses (returns undefined) when the key id is taken. Its organisation becomes known. */
  create(key: NewKey): Promise<KeyRecord | undefined>;
  list(organizationId: string): Promise<KeyRecord[]>;
  /** Returns the updated key, or undefined when there is no such key. */
  setDisabled(keyId: string, disabled: boolean): Promise<KeyRecord | undefined>;
}

/** Integer nano-dollars charged by settlements. */
export interface Spent {
  organizationNanos: bigint;
  keyNanos: bigint;
  keyPeriodNanos: Record<SpendingPeriod, bigint>;
}

export interface CreditStore {
  /** Adds credits and returns the new balance. The organisation becomes known. */
  topUp(organizationId: string, nanos: bigint): Promise<bigint>;
  /** The spendable balance (holds of requests in flight already taken off). */
  balance(organizationId: string): Promise<bigint>;
  /**
   * What settlements have charged so far: to the organisation, and to one of its keys, in all
   * and in the UTC day, week (from Monday) and month of `now` (windows.ts spendingPeriod).
   */
  spent(organizationId: string, keyId: string, now: number): Promise<Spent>;
}

/** Fixed one-minute windows (UTC minute boundaries). */
export interface WindowState {
  limit: number;
  remaining: number;
  /** Unix milliseconds when the window resets. */
  resetAt: number;
}

export interface RateLimitSnapshot {
  requests?: WindowState;
  tokens?: WindowState;
}

export interface FreeCandidate {
  /** Catalogue model id (no suffix). */
  modelId: string;
  dailyQuota: number;
}

export type Charge =
  /** A paid request: hold its worst-case cost until it settles. */
  | { kind: "credits"; holdNanos: bigint }
  /**
   * A free request: one unit of today's quota of one candidate. `:free` names
   * one candidate; `router/free` names every eligible one and the store picks
   * among those with quota left, uniformly, using `pick` (a number in [0, 1)
   * drawn by the caller, so a test can fix it).
   */
  | { kind: "free"; candidates: FreeCandidate[]; pick: number };

export interface AdmissionRequest {
  /** The service id of the request: holds and quota units are kept under it (idempotency). */
  requestId: string;
  keyDigest: string;
  /** Catalogue ids (no suffix) the request names; each must be on the key's allow-list, when it has one. */
  modelIds: string[];
  charge: Charge;
  /** Unix milliseconds (injected clock). */
  now: number;
}

export type Refusal =
  | { reason: "invalid_api_key" }
  | { reason: "key_disabled" }
  | { reason: "model_not_allowed"; modelId: string }
  | { reason: "rate_limited"; scope: "key" | "organization"; unit: "requests" | "tokens"; limit: number; resetAt: number }
  | { reason: "insufficient_credits"; balanceNanos: bigint; neededNanos: bigint }
  | { reason: "free_quota_exhausted"; modelId: string; limit: number; used: number }
  | { reason: "no_free_model_available" }
  | { reason: "duplicate_request" };

/** Who an admitted request is charged to. */
export type KeyOwner = Pick<KeyRecord, "keyId" | "organizationId">;

export interface Admitted {
  key: KeyOwner;
  /** The tighter of the key's and the organisation's windows, per unit. */
  rateLimit: RateLimitSnapshot;
  /** Free requests: the model whose quota was used, and that quota after this request. */
  free?: { modelId: string; limit: number; used: number };
}

export type Admission = { admitted: true; value: Admitted } | { admitted: false; refusal: Refusal };

export interface Settlement {
  requestId: string;
  /** The real cost; 0 releases the hold (error, client abort). Never more than balance plus hold is taken. */
  chargeNanos: bigint;
  /** Tokens the request used, added to the key's and organisation's token windows. */
  tokens: number;
  /** A free request that failed gives its quota unit back (docs/accounts.md). */
  refundFreeQuota: boolean;
  now: number;
}

/**
 * An admitted request unsettled this long is taken as abandoned (its instance
 * died) and its hold returned. Far beyond any request's timeout, so a live
 * request is never released under it.
 */
export const ABANDONED_AFTER_MS = 6 * 3_600_000;

export interface AdmissionStore {
  /**
   * One atomic step: the key (exists, enabled), the allow-list, the key's and
   * organisation's request and token windows (a request counts against its
   * window when admitted), then the charge. Nothing is written when anything
   * refuses. On Redis this is the request's one round trip before dispatch.
   * An admitted request is recorded under its id (organisation, key, hold, free
   * unit) for its settlement, for at most a day.
   */
  admit(request: AdmissionRequest): Promise<Admission>;
  /** Ends an admitted request. Idempotent: a second settlement of the same id does nothing. */
  settle(settlement: Settlement): Promise<void>;
  /** Settles a batch, each as `settle` would (on Redis, one script call). */
  settleAll(settlements: Settlement[]): Promise<void>;
  /**
   * Releases the holds (and free units) of requests admitted more than
   * ABANDONED_AFTER_MS before `now` and never settled: their instance died.
   * Returns how many were released.
   */
  releaseAbandoned(now: number): Promise<number>;
  /** Free units the organisation has used today (the UTC day of `now`), per model, in the order given. */
  freeUsed(organizationId: string, modelIds: string[], now: number): Promise<number[]>;
}

export interface UsageRecord {
  /** The chat id. */
  id: string;
  organizationId: string;
  keyId: string;
  model: string;
  provider: string;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  /** Exact decimal USD. */
  cost: string;
  requestTags: string[];
  latencyMs: number;
  /** `ok`, or the reason the request failed (`upstream_error`, `client_closed`...). */
  outcome: string;
  free: boolean;
  streamed: boolean;
  /** Unix milliseconds. */
  createdAt: number;
  /** Answered from the cache (issue 23), charged a tenth; absent on any other record. */
  cacheHit?: boolean;
  /** How close the cached entry was, 0 to 1 (1: exact); with cacheHit. */
  cacheSimilarity?: number;
}

export interface UsageStore {
  /** Keeps each record once per id: a record whose id is already kept is skipped, so a retried batch adds nothing twice. */
  append(records: UsageRecord[]): Promise<void>;
  /** One record, only to its own organisation. */
  get(organizationId: string, id: string): Promise<UsageRecord | undefined>;
  /** The organisation's latest records, newest first. */
  list(organizationId: string, limit: number): Promise<UsageRecord[]>;
}

export interface AccountStores {
  keys: KeyStore;
  organizations: OrganizationStore;
  credits: CreditStore;
  admission: AdmissionStore;
  usage: UsageStore;
  /**
   * Writes the configuration's organisations and keys. The Redis store
   * remembers them and writes them again whenever Redis turns out to have
   * lost them (docs/accounts.md, "Known limits").
   */
  seed(organizations: SeedOrganization[]): Promise<SeedResult>;
  close(): Promise<void>;
}
