// The in-memory account stores: the embedded default (one process, nothing
// shared). Each operation runs to completion without awaiting, so it is atomic
// within the process, as the Redis scripts are across processes.
import {
  ABANDONED_AFTER_MS,
  type AccountStores,
  type Admission,
  type AdmissionRequest,
  type KeyRecord,
  type NewKey,
  type OrganizationLimits,
  type RateLimitSnapshot,
  type Refusal,
  type Settlement,
  type UsageRecord,
  type WindowState,
} from "./store.ts";
import { MINUTE_MS, minuteStart, SPENDING_PERIODS, spendingPeriod, utcDay, type SpendingPeriod } from "./windows.ts";

/** Usage records kept per organisation (the newest). */
export const USAGE_RECORDS_KEPT = 10_000;

interface Window {
  start: number;
  requests: number;
  tokens: number;
}

interface AdmittedRequest {
  organizationId: string;
  keyId: string;
  holdNanos: bigint;
  admittedAt: number;
  /** The quota unit taken: given back to the day it was taken from. */
  free?: { counter: string; day: string };
}

export function createMemoryAccountStores(): AccountStores {
  const keysByDigest = new Map<string, KeyRecord>();
  const digestByKeyId = new Map<string, string>();
  /** Every known organisation: configured, topped up or given a key. */
  const organizations = new Map<string, OrganizationLimits & { name: string }>();
  const know = (organizationId: string) => {
    if (!organizations.has(organizationId)) organizations.set(organizationId, { organizationId, name: "" });
  };
  const balances = new Map<string, bigint>();
  /** What settlements charged: `org:<id>` and `key:<id>`. */
  const spent = new Map<string, bigint>();
  const addSpent = (scope: string, nanos: bigint) => {
    if (nanos > 0n) spent.set(scope, (spent.get(scope) ?? 0n) + nanos);
  };
  /** `<keyId>|<period>` -> the latest such period charged in (as Redis, where older ones expire). */
  const spentIn = new Map<string, { name: string; nanos: bigint }>();
  const addKeySpentIn = (keyId: string, now: number, nanos: bigint) => {
    if (nanos <= 0n) return;
    for (const period of SPENDING_PERIODS) {
      const { name } = spendingPeriod(period, now);
      const counted = spentIn.get(`${keyId}|${period}`);
      // A settlement of an earlier period (batches settle late) counts in no current one.
      if (counted && counted.name > name) continue;
      spentIn.set(`${keyId}|${period}`, { name, nanos: (counted?.name === name ? counted.nanos : 0n) + nanos });
    }
  };
  const keySpentIn = (keyId: string, period: SpendingPeriod, now: number) => {
    const counted = spentIn.get(`${keyId}|${period}`);
    return counted?.name === spendingPeriod(period, now).name ? counted.nanos : 0n;
  };
  const windows = new Map<string, Window>();
  /** `org|model` -> today's count. */
  const freeUsed = new Map<string, { day: string; used: number }>();
  const inFlight = new Map<string, AdmittedRequest>();
  const usageById = new Map<string, UsageRecord>();
  const usageByOrg = new Map<string, UsageRecord[]>();

  const windowOf = (scope: string, now: number): Window => {
    const start = minuteStart(now);
    let window = windows.get(scope);
    if (!window || window.start !== start) {
      window = { start, requests: 0, tokens: 0 };
      windows.set(scope, window);
    }
    return window;
  };
  /** Tokens count in their own minute; a settlement late from a minute already over changes nothing. */
  const addTokens = (scope: string, now: number, tokens: number) => {
    const current = windows.get(scope);
    if (current && current.start > minuteStart(now)) return;
    windowOf(scope, now).tokens += tokens;
  };
  const freeCountOf = (counter: string, day: string) => {
    const entry = freeUsed.get(counter);
    return entry && entry.day === day ? entry.used : 0;
  };
  const addFree = (counter: string, day: string, delta: number) => {
    const entry = freeUsed.get(counter);
    // A unit given back to a day already over changes nothing: that day's count is gone.
    if (delta < 0 && entry?.day !== day) return;
    freeUsed.set(counter, { day, used: Math.max(0, freeCountOf(counter, day) + delta) });
  };

  /** Writes a key under its digest (replacing the record the id had, if any). */
  const putKey = ({ digest, ...fields }: NewKey, disabled: boolean, createdAt = fields.createdAt): KeyRecord => {
    const previous = digestByKeyId.get(fields.keyId);
    if (previous !== undefined) keysByDigest.delete(previous);
    const record: KeyRecord = { ...fields, disabled, createdAt, allowedModels: [...fields.allowedModels] };
    keysByDigest.set(digest, record);
    digestByKeyId.set(fields.keyId, digest);
    return { ...record };
  };
  const createKey = (key: NewKey): KeyRecord | undefined => {
    if (digestByKeyId.has(key.keyId)) return undefined;
    know(key.organizationId);
    return putKey(key, false);
  };

  function admit(request: AdmissionRequest): Admission {
    const refuse = (refusal: Refusal): Admission => ({ admitted: false, refusal });
    const key = keysByDigest.get(request.keyDigest);
    if (!key) return refuse({ reason: "invalid_api_key" });
    if (key.disabled) return refuse({ reason: "key_disabled" });
    const allowed = (modelId: string) => key.allowedModels.length === 0 || key.allowedModels.includes(modelId);
    const forbidden = request.modelIds.find((modelId) => !allowed(modelId));
    if (forbidden) return refuse({ reason: "model_not_allowed", modelId: forbidden });
    if (inFlight.has(request.requestId)) return refuse({ reason: "duplicate_request" });

    const organization: OrganizationLimits = organizations.get(key.organizationId) ?? { organizationId: key.organizationId };
    const scopes = [
      { scope: "key" as const, window: windowOf(`key:${key.keyId}`, request.now), rpm: key.rpm, tpm: key.tpm },
      { scope: "organization" as const, window: windowOf(`org:${key.organizationId}`, request.now), rpm: organization.rpm, tpm: organization.tpm },
    ];
    const resetAt = minuteStart(request.now) + MINUTE_MS;
    for (const { scope, window, rpm, tpm } of scopes) {
      if (rpm !== undefined && window.requests >= rpm) return refuse({ reason: "rate_limited", scope, unit: "requests", limit: rpm, resetAt });
      if (tpm !== undefined && window.tokens >= tpm) return refuse({ reason: "rate_limited", scope, unit: "tokens", limit: tpm, resetAt });
    }

    const admitted: AdmittedRequest = { organizationId: key.organizationId, keyId: key.keyId, holdNanos: 0n, admittedAt: request.now };
    let free: { modelId: string; limit: number; used: number } | undefined;
    const { charge } = request;
    if (charge.kind === "credits") {
      const balance = balances.get(key.organizationId) ?? 0n;
      if (balance < charge.holdNanos) return refuse({ reason: "insufficient_credits", balanceNanos: balance, neededNanos: charge.holdNanos });
      balances.set(key.organizationId, balance - charge.holdNanos);
      admitted.holdNanos = charge.holdNanos;
    } else {
      const day = utcDay(request.now);
      const counted = charge.candidates
        .filter((candidate) => allowed(candidate.modelId))
        .map((candidate) => ({ ...candidate, counter: `${key.organizationId}|${candidate.modelId}`, used: freeCountOf(`${key.organizationId}|${candidate.modelId}`, day) }));
      const eligible = counted.filter((candidate) => candidate.used < candidate.dailyQuota);
      if (eligible.length === 0) {
        // Whose quota ran out: the first counted (the core says "no free model" for router/free).
        if (counted.length > 0) {
          return refuse({ reason: "free_quota_exhausted", modelId: counted[0].modelId, limit: counted[0].dailyQuota, used: counted[0].used });
        }
        return refuse({ reason: "no_free_model_available" });
      }
      const chosen = eligible[Math.min(eligible.length - 1, Math.floor(charge.pick * eligible.length))];
      addFree(chosen.counter, day, 1);
      admitted.free = { counter: chosen.counter, day };
      free = { modelId: chosen.modelId, limit: chosen.dailyQuota, used: chosen.used + 1 };
    }
    for (const { window } of scopes) window.requests++;
    inFlight.set(request.requestId, admitted);
    return { admitted: true, value: { key: { ...key }, rateLimit: snapshotOf(scopes, resetAt), ...(free && { free }) } };
  }

  function settle(settlement: Settlement) {
    const admitted = inFlight.get(settlement.requestId);
    if (!admitted) return;
    inFlight.delete(settlement.requestId);
    const balance = balances.get(admitted.organizationId) ?? 0n;
    let taken = settlement.chargeNanos;
    if (settlement.chargeNanos <= admitted.holdNanos) {
      balances.set(admitted.organizationId, balance + admitted.holdNanos - settlement.chargeNanos);
    } else {
      // Beyond the hold only what the balance has is taken: it never goes below zero.
      const extra = settlement.chargeNanos - admitted.holdNanos;
      const extraTaken = extra < balance ? extra : balance > 0n ? balance : 0n;
      balances.set(admitted.organizationId, balance - extraTaken);
      taken = admitted.holdNanos + extraTaken;
    }
    addSpent(`org:${admitted.organizationId}`, taken);
    addSpent(`key:${admitted.keyId}`, taken);
    addKeySpentIn(admitted.keyId, settlement.now, taken);
    if (settlement.refundFreeQuota && admitted.free) addFree(admitted.free.counter, admitted.free.day, -1);
    addTokens(`key:${admitted.keyId}`, settlement.now, settlement.tokens);
    addTokens(`org:${admitted.organizationId}`, settlement.now, settlement.tokens);
  }

  return {
    keys: {
      findByDigest: async (digest) => {
        const key = keysByDigest.get(digest);
        return key && { ...key };
      },
      create: async (key) => createKey(key),
      list: async (organizationId) => [...keysByDigest.values()].filter((key) => key.organizationId === organizationId).map((key) => ({ ...key })),
      setDisabled: async (keyId, disabled) => {
        const key = keysByDigest.get(digestByKeyId.get(keyId) ?? "");
        if (!key) return undefined;
        key.disabled = disabled;
        return { ...key };
      },
    },
    organizations: {
      exists: async (organizationId) => organizations.has(organizationId),
      list: async () =>
        [...organizations.values()]
          .sort((a, b) => a.organizationId.localeCompare(b.organizationId))
          .map((organization) => ({ ...organization, balanceNanos: balances.get(organization.organizationId) ?? 0n })),
    },
    credits: {
      topUp: async (organizationId, nanos) => {
        know(organizationId);
        const balance = (balances.get(organizationId) ?? 0n) + nanos;
        balances.set(organizationId, balance);
        return balance;
      },
      balance: async (organizationId) => balances.get(organizationId) ?? 0n,
      spent: async (organizationId, keyId, now) => ({
        organizationNanos: spent.get(`org:${organizationId}`) ?? 0n,
        keyNanos: spent.get(`key:${keyId}`) ?? 0n,
        keyPeriodNanos: { day: keySpentIn(keyId, "day", now), week: keySpentIn(keyId, "week", now), month: keySpentIn(keyId, "month", now) },
      }),
    },
    admission: {
      admit: async (request) => admit(request),
      settle: async (settlement) => settle(settlement),
      settleAll: async (settlements) => settlements.forEach(settle),
      releaseAbandoned: async (now) => {
        const abandoned = [...inFlight].filter(([, admitted]) => admitted.admittedAt + ABANDONED_AFTER_MS <= now).map(([requestId]) => requestId);
        for (const requestId of abandoned) settle({ requestId, chargeNanos: 0n, tokens: 0, refundFreeQuota: true, now });
        return abandoned.length;
      },
      freeUsed: async (organizationId, modelIds, now) => modelIds.map((modelId) => freeCountOf(`${organizationId}|${modelId}`, utcDay(now))),
    },
    usage: {
      append: async (records) => {
        for (const record of records) {
          // Once per id, as on Redis.
          if (usageById.has(record.id)) continue;
          usageById.set(record.id, record);
          const list = usageByOrg.get(record.organizationId) ?? [];
          list.push(record);
          if (list.length > USAGE_RECORDS_KEPT) usageById.delete(list.shift()!.id);
          usageByOrg.set(record.organizationId, list);
        }
      },
      get: async (organizationId, id) => {
        const record = usageById.get(id);
        return record?.organizationId === organizationId ? record : undefined;
      },
      list: async (organizationId, limit) => (limit > 0 ? (usageByOrg.get(organizationId) ?? []).slice(-limit).reverse() : []),
    },
    seed: async (seeds) => {
      const keptKeyIds: string[] = [];
      for (const seed of seeds) {
        organizations.set(seed.organizationId, { organizationId: seed.organizationId, name: seed.name ?? "", rpm: seed.rpm, tpm: seed.tpm });
        if (!balances.has(seed.organizationId)) balances.set(seed.organizationId, seed.initialCreditsNanos);
        for (const { disabled, keepStoredDigest, ...key } of seed.keys) {
          // Configuration owns the key's settings; an operator's disable and the creation time stand.
          const storedDigest = digestByKeyId.get(key.keyId);
          const existing = keysByDigest.get(storedDigest ?? "");
          // A key made up at start never replaces one the id has.
          const keep = keepStoredDigest && storedDigest !== undefined && storedDigest !== key.digest;
          if (keep) keptKeyIds.push(key.keyId);
          putKey({ ...key, digest: keep ? storedDigest : key.digest }, disabled || (existing?.disabled ?? false), existing?.createdAt);
        }
      }
      return { keptKeyIds };
    },
    close: async () => {},
  };
}

/** The tighter window per unit (fewer remaining), once this request is counted. */
function snapshotOf(scopes: { window: Window; rpm?: number; tpm?: number }[], resetAt: number): RateLimitSnapshot {
  const snapshot: RateLimitSnapshot = {};
  const tighter = (current: WindowState | undefined, next: WindowState) => (!current || next.remaining < current.remaining ? next : current);
  for (const { window, rpm, tpm } of scopes) {
    if (rpm !== undefined) snapshot.requests = tighter(snapshot.requests, { limit: rpm, remaining: Math.max(0, rpm - window.requests), resetAt });
    if (tpm !== undefined) snapshot.tokens = tighter(snapshot.tokens, { limit: tpm, remaining: Math.max(0, tpm - window.tokens), resetAt });
  }
  return snapshot;
}
