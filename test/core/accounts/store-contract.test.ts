// One contract for both account store implementations (store.ts): the
// in-memory one and Redis on a private server. Time is injected (`now`), so
// minute windows and UTC days are crossed without waiting. Redis-only tests
// at the end: concurrency, expiry, key names, outages.
import { createHash } from "node:crypto";
import { ClientOfflineError, createClient } from "redis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createMemoryAccountStores } from "../../../core/accounts/memory-store.ts";
import { luaKeyBuilders, redisKeys } from "../../../core/accounts/redis-keys.ts";
import { createRedisAccountStores } from "../../../core/accounts/redis-store.ts";
import { StoreUnavailableError } from "../../../core/accounts/store-errors.ts";
import {
  ABANDONED_AFTER_MS,
  type AccountStores,
  type Admission,
  type AdmissionRequest,
  type Charge,
  type Refusal,
  type SeedKey,
  type SeedOrganization,
  type Settlement,
  type UsageRecord,
} from "../../../core/accounts/store.ts";
import { DAY_MS, MINUTE_MS } from "../../../core/accounts/windows.ts";
import { settlesBefore } from "../../support/hang-guard.ts";
import { outcomeAtTimeout } from "../../support/held-clock.ts";
import { freePort, startRedisServer, type RedisServer } from "../../support/redis-server.ts";

/** 2026-11-03T12:00:00Z: a minute boundary, twelve hours before midnight. */
const T0 = Date.UTC(2026, 10, 3, 12, 0, 0);
const NEXT_MINUTE = T0 + MINUTE_MS;
const MIDNIGHT = Date.UTC(2026, 10, 4);

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

// A fresh prefix per store keeps Redis tests apart without flushing.
let prefixes = 0;
const freshPrefix = () => `contract-${++prefixes}:`;
const createRedis = (prefix = freshPrefix()) => createRedisAccountStores({ url: server.url, prefix });

const digestOf = (clearKey: string) => createHash("sha256").update(clearKey).digest("hex");

/** A key as configuration declares it (`disabled` is for seeding; create ignores it). */
function key(clearKey: string, fields: Partial<SeedKey> = {}): SeedKey {
  return {
    keyId: `id-${clearKey}`,
    organizationId: "org-a",
    name: clearKey,
    allowedModels: [],
    createdAt: T0 - DAY_MS,
    digest: digestOf(clearKey),
    disabled: false,
    ...fields,
  };
}

function organization(organizationId: string, fields: Partial<SeedOrganization> = {}): SeedOrganization {
  return { organizationId, initialCreditsNanos: 0n, keys: [], ...fields };
}

const credits = (holdNanos: bigint): Charge => ({ kind: "credits", holdNanos });
const free = (pick: number, ...candidates: [modelId: string, dailyQuota: number][]): Charge => ({
  kind: "free",
  candidates: candidates.map(([modelId, dailyQuota]) => ({ modelId, dailyQuota })),
  pick,
});

let requestIds = 0;
function request(clearKey: string, fields: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return { requestId: `req-${++requestIds}`, keyDigest: digestOf(clearKey), modelIds: ["paid/model"], charge: credits(0n), now: T0, ...fields };
}

function settlement(requestId: string, fields: Partial<Settlement> = {}): Settlement {
  return { requestId, chargeNanos: 0n, tokens: 0, refundFreeQuota: false, now: T0, ...fields };
}

function usage(id: string, organizationId: string, createdAt: number): UsageRecord {
  return {
    id,
    organizationId,
    keyId: "id-sk-a",
    model: "paid/model",
    provider: "simulator",
    promptTokens: 10,
    completionTokens: 5,
    reasoningTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    cost: "0.000015",
    requestTags: ["tag"],
    latencyMs: 12,
    outcome: "ok",
    free: false,
    streamed: true,
    createdAt,
  };
}

function refusalOf(admission: Admission): Refusal | undefined {
  return admission.admitted ? undefined : admission.refusal;
}

function admittedOf(admission: Admission) {
  if (!admission.admitted) throw new Error(`refused: ${JSON.stringify(admission.refusal, (_, value) => (typeof value === "bigint" ? `${value}n` : value))}`);
  return admission.value;
}

const implementations = [
  { name: "memory", create: async () => createMemoryAccountStores() },
  { name: "redis", create: () => createRedis() },
];

describe.each(implementations)("account stores ($name)", ({ create }) => {
  let stores: AccountStores;
  beforeEach(async () => {
    stores = await create();
  });
  afterEach(async () => {
    await stores.close();
  });
  const admit = (admission: AdmissionRequest) => stores.admission.admit(admission);
  const settle = (requestId: string, fields: Partial<Settlement> = {}) => stores.admission.settle(settlement(requestId, fields));

  describe("keys", () => {
    it("creates a key once, finds it by digest and lists it by organisation", async () => {
      const created = await stores.keys.create(key("sk-one", { rpm: 5, allowedModels: ["m/one"] }));
      expect(created).toEqual({ keyId: "id-sk-one", organizationId: "org-a", name: "sk-one", disabled: false, rpm: 5, allowedModels: ["m/one"], createdAt: T0 - DAY_MS });
      expect(await stores.keys.create(key("sk-other", { keyId: "id-sk-one" }))).toBeUndefined();
      expect(await stores.keys.findByDigest(digestOf("sk-other"))).toBeUndefined();
      expect(await stores.keys.findByDigest(digestOf("sk-one"))).toEqual(created);

      await stores.keys.create(key("sk-two"));
      await stores.keys.create(key("sk-three", { organizationId: "org-b" }));
      expect((await stores.keys.list("org-a")).map((record) => record.keyId).sort()).toEqual(["id-sk-one", "id-sk-two"]);
      expect(await stores.keys.list("org-b")).toEqual([expect.objectContaining({ keyId: "id-sk-three", organizationId: "org-b" })]);
      expect(await stores.keys.list("org-none")).toEqual([]);
    });

    it("refuses an unknown key, and a disabled key until it is enabled again", async () => {
      await stores.seed([organization("org-a", { keys: [key("sk-a")] })]);
      expect(refusalOf(await admit(request("sk-unknown")))).toEqual({ reason: "invalid_api_key" });

      expect(await stores.keys.setDisabled("id-sk-a", true)).toEqual(expect.objectContaining({ keyId: "id-sk-a", disabled: true }));
      expect(refusalOf(await admit(request("sk-a")))).toEqual({ reason: "key_disabled" });
      expect((await stores.keys.findByDigest(digestOf("sk-a")))?.disabled).toBe(true);
      expect(await stores.keys.setDisabled("id-nobody", true)).toBeUndefined();

      expect(await stores.keys.setDisabled("id-sk-a", false)).toEqual(expect.objectContaining({ disabled: false }));
      expect((await admit(request("sk-a"))).admitted).toBe(true);
    });

    it("refuses a model off the key's allow-list; an empty list allows every model", async () => {
      await stores.seed([organization("org-a", { keys: [key("sk-a", { allowedModels: ["m/one", "m/two"] }), key("sk-b")] })]);
      expect((await admit(request("sk-a", { modelIds: ["m/one", "m/two"] }))).admitted).toBe(true);
      expect(refusalOf(await admit(request("sk-a", { modelIds: ["m/one", "m/three"] })))).toEqual({ reason: "model_not_allowed", modelId: "m/three" });
      expect((await admit(request("sk-b", { modelIds: ["any/model"] }))).admitted).toBe(true);
    });
  });

  describe("admission", () => {
    it("refuses in order: disabled, allow-list, duplicate id, rate window, then credits", async () => {
      await stores.seed([organization("org-a", { initialCreditsNanos: 100n, keys: [key("sk-a", { allowedModels: ["m/one"], rpm: 1 })] })]);
      admittedOf(await admit(request("sk-a", { requestId: "r-1", modelIds: ["m/one"], charge: credits(10n) })));
      // Every later request fails every check from here on; each step lifts one.
      const failing = (fields: Partial<AdmissionRequest>) => request("sk-a", { requestId: "r-1", modelIds: ["m/two"], charge: credits(1000n), ...fields });

      await stores.keys.setDisabled("id-sk-a", true);
      expect(refusalOf(await admit(failing({})))).toEqual({ reason: "key_disabled" });
      await stores.keys.setDisabled("id-sk-a", false);
      expect(refusalOf(await admit(failing({})))).toEqual({ reason: "model_not_allowed", modelId: "m/two" });
      expect(refusalOf(await admit(failing({ modelIds: ["m/one"] })))).toEqual({ reason: "duplicate_request" });
      expect(refusalOf(await admit(failing({ modelIds: ["m/one"], requestId: "r-2" })))).toEqual({
        reason: "rate_limited",
        scope: "key",
        unit: "requests",
        limit: 1,
        resetAt: NEXT_MINUTE,
      });
      expect(refusalOf(await admit(failing({ modelIds: ["m/one"], requestId: "r-2", now: NEXT_MINUTE })))).toEqual({
        reason: "insufficient_credits",
        balanceNanos: 90n,
        neededNanos: 1000n,
      });
      // None of the refusals wrote anything.
      expect(await stores.credits.balance("org-a")).toBe(90n);
      expect(admittedOf(await admit(failing({ modelIds: ["m/one"], requestId: "r-2", now: NEXT_MINUTE, charge: credits(90n) }))).rateLimit.requests?.remaining).toBe(0);
    });

    it("admits exactly rpm requests a minute, then refuses until the next minute", async () => {
      await stores.seed([organization("org-a", { keys: [key("sk-a", { rpm: 3 })] })]);
      for (const [offset, remaining] of [[0, 2], [1_000, 1], [2_000, 0]]) {
        expect(admittedOf(await admit(request("sk-a", { now: T0 + offset }))).rateLimit).toEqual({ requests: { limit: 3, remaining, resetAt: NEXT_MINUTE } });
      }
      const limited = { reason: "rate_limited", scope: "key", unit: "requests", limit: 3, resetAt: NEXT_MINUTE };
      expect(refusalOf(await admit(request("sk-a", { now: T0 + 3_000 })))).toEqual(limited);
      expect(refusalOf(await admit(request("sk-a", { now: NEXT_MINUTE - 1 })))).toEqual(limited);
      expect(admittedOf(await admit(request("sk-a", { now: NEXT_MINUTE }))).rateLimit).toEqual({
        requests: { limit: 3, remaining: 2, resetAt: NEXT_MINUTE + MINUTE_MS },
      });
    });

    it("refuses once the tokens settled in the minute reach tpm", async () => {
      await stores.seed([organization("org-a", { keys: [key("sk-a", { tpm: 100 })] })]);
      const tokens = (admission: Admission) => admittedOf(admission).rateLimit.tokens;
      expect(tokens(await admit(request("sk-a", { requestId: "r-1" })))).toEqual({ limit: 100, remaining: 100, resetAt: NEXT_MINUTE });
      await settle("r-1", { tokens: 60, now: T0 + 1_000 });
      expect(tokens(await admit(request("sk-a", { requestId: "r-2", now: T0 + 2_000 })))).toEqual({ limit: 100, remaining: 40, resetAt: NEXT_MINUTE });
      await settle("r-2", { tokens: 40, now: T0 + 3_000 });
      expect(refusalOf(await admit(request("sk-a", { now: T0 + 4_000 })))).toEqual({
        reason: "rate_limited",
        scope: "key",
        unit: "tokens",
        limit: 100,
        resetAt: NEXT_MINUTE,
      });
      expect(tokens(await admit(request("sk-a", { now: NEXT_MINUTE })))).toEqual({ limit: 100, remaining: 100, resetAt: NEXT_MINUTE + MINUTE_MS });
    });

    it("a settlement late from a minute already over leaves the new minute's windows alone", async () => {
      await stores.seed([organization("org-a", { keys: [key("sk-a", { rpm: 2, tpm: 100 })] })]);
      admittedOf(await admit(request("sk-a", { requestId: "old" })));
      const requests = async (requestId: string) => admittedOf(await admit(request("sk-a", { requestId, now: NEXT_MINUTE + 1_000 }))).rateLimit.requests;
      expect((await requests("new-1"))?.remaining).toBe(1);
      await settle("old", { tokens: 100, now: T0 + 59_000 });
      // Still one request counted in the new minute, and the old minute's tokens do not land in it.
      const snapshot = admittedOf(await admit(request("sk-a", { requestId: "new-2", now: NEXT_MINUTE + 2_000 }))).rateLimit;
      expect(snapshot.requests?.remaining).toBe(0);
      expect(snapshot.tokens?.remaining).toBe(100);
    });

    it("applies the organisation's limits across its keys, and only its own", async () => {
      await stores.seed([
        organization("org-a", { rpm: 2, tpm: 50, keys: [key("sk-a"), key("sk-b")] }),
        organization("org-b", { keys: [key("sk-c", { organizationId: "org-b" })] }),
      ]);
      expect(admittedOf(await admit(request("sk-a"))).rateLimit.requests).toEqual({ limit: 2, remaining: 1, resetAt: NEXT_MINUTE });
      expect(admittedOf(await admit(request("sk-b"))).rateLimit.requests).toEqual({ limit: 2, remaining: 0, resetAt: NEXT_MINUTE });
      expect(refusalOf(await admit(request("sk-a")))).toEqual({ reason: "rate_limited", scope: "organization", unit: "requests", limit: 2, resetAt: NEXT_MINUTE });
      expect(admittedOf(await admit(request("sk-c"))).rateLimit).toEqual({});

      admittedOf(await admit(request("sk-b", { requestId: "r-b", now: NEXT_MINUTE })));
      await settle("r-b", { tokens: 50, now: NEXT_MINUTE });
      expect(refusalOf(await admit(request("sk-a", { now: NEXT_MINUTE + 1 })))).toEqual({
        reason: "rate_limited",
        scope: "organization",
        unit: "tokens",
        limit: 50,
        resetAt: NEXT_MINUTE + MINUTE_MS,
      });
    });

    it("checks the key's window before the organisation's", async () => {
      await stores.seed([organization("org-a", { rpm: 1, keys: [key("sk-a", { rpm: 1 })] })]);
      admittedOf(await admit(request("sk-a")));
      expect(refusalOf(await admit(request("sk-a")))).toEqual(expect.objectContaining({ scope: "key", unit: "requests" }));
    });

    it("reports the tighter window per unit, the key's on a tie", async () => {
      await stores.seed([organization("org-a", { rpm: 3, tpm: 1000, keys: [key("sk-a", { rpm: 2, tpm: 5000 }), key("sk-b")] })]);
      admittedOf(await admit(request("sk-b")));
      // Requests: key 2-1 = 1 left, organisation 3-2 = 1 left (a tie); tokens: the organisation's 1000.
      expect(admittedOf(await admit(request("sk-a"))).rateLimit).toEqual({
        requests: { limit: 2, remaining: 1, resetAt: NEXT_MINUTE },
        tokens: { limit: 1000, remaining: 1000, resetAt: NEXT_MINUTE },
      });
    });
  });

  describe("credits", () => {
    it("admits a hold equal to the balance, and refuses one nano more without touching the balance", async () => {
      await stores.seed([
        organization("org-a", { initialCreditsNanos: 1000n, keys: [key("sk-a")] }),
        organization("org-b", { initialCreditsNanos: 1000n, keys: [key("sk-b", { organizationId: "org-b" })] }),
      ]);
      admittedOf(await admit(request("sk-a", { charge: credits(1000n) })));
      expect(await stores.credits.balance("org-a")).toBe(0n);
      expect(refusalOf(await admit(request("sk-b", { charge: credits(1001n) })))).toEqual({ reason: "insufficient_credits", balanceNanos: 1000n, neededNanos: 1001n });
      expect(await stores.credits.balance("org-b")).toBe(1000n);
      expect(await stores.credits.balance("org-none")).toBe(0n);
    });

    it("keeps money exact beyond a double's precision", async () => {
      const twoTo53 = 2n ** 53n;
      await stores.seed([organization("org-a", { initialCreditsNanos: twoTo53 + 3n, keys: [key("sk-a")] })]);
      // As doubles, 2^53 + 3 rounds to 2^53 + 4: this refusal needs exact integers.
      expect(refusalOf(await admit(request("sk-a", { charge: credits(twoTo53 + 4n) })))).toEqual({
        reason: "insufficient_credits",
        balanceNanos: twoTo53 + 3n,
        neededNanos: twoTo53 + 4n,
      });
      admittedOf(await admit(request("sk-a", { requestId: "r-1", charge: credits(1n) })));
      expect(await stores.credits.balance("org-a")).toBe(twoTo53 + 2n);
      expect(await stores.credits.topUp("org-a", 9_000_000_000_000_000_000n - twoTo53 - 2n)).toBe(9_000_000_000_000_000_000n);
      await settle("r-1", { chargeNanos: 0n });
      expect(await stores.credits.balance("org-a")).toBe(9_000_000_000_000_000_001n);
    });

    it("settles: the unused hold goes back, a charge above the hold never overdraws, a second settlement does nothing", async () => {
      await stores.seed([organization("org-a", { initialCreditsNanos: 1000n, keys: [key("sk-a", { tpm: 1000 })] })]);
      admittedOf(await admit(request("sk-a", { requestId: "r-1", charge: credits(400n) })));
      expect(await stores.credits.balance("org-a")).toBe(600n);
      await settle("r-1", { chargeNanos: 150n, tokens: 100 });
      expect(await stores.credits.balance("org-a")).toBe(850n);
      await settle("r-1", { chargeNanos: 850n, tokens: 100 });
      expect(await stores.credits.balance("org-a")).toBe(850n);

      // 300 beyond a 400 hold, with 450 left: taken in full.
      admittedOf(await admit(request("sk-a", { requestId: "r-2", charge: credits(400n) })));
      await settle("r-2", { chargeNanos: 700n });
      expect(await stores.credits.balance("org-a")).toBe(150n);

      // 900 beyond a 100 hold, with 50 left: only the 50.
      admittedOf(await admit(request("sk-a", { requestId: "r-3", charge: credits(100n) })));
      await settle("r-3", { chargeNanos: 1000n });
      expect(await stores.credits.balance("org-a")).toBe(0n);
      await settle("r-3", { chargeNanos: 0n });
      await settle("never-admitted", { chargeNanos: 0n });
      expect(await stores.credits.balance("org-a")).toBe(0n);

      // The tokens of r-1 were counted once.
      expect(admittedOf(await admit(request("sk-a"))).rateLimit.tokens?.remaining).toBe(900);
      expect(await stores.credits.topUp("org-a", 5n)).toBe(5n);
    });

    it("counts what each settlement took as spent, by organisation and by key: never a hold given back, never beyond the balance", async () => {
      await stores.seed([organization("org-a", { initialCreditsNanos: 1000n, keys: [key("sk-a"), key("sk-b")] }), organization("org-b", { keys: [key("sk-c", { organizationId: "org-b" })] })]);
      admittedOf(await admit(request("sk-a", { requestId: "r-1", charge: credits(400n) })));
      admittedOf(await admit(request("sk-b", { requestId: "r-2", charge: credits(100n) })));
      const spent = async (organizationId: string, keyId: string) => {
        const { organizationNanos, keyNanos } = await stores.credits.spent(organizationId, keyId, T0);
        return { organizationNanos, keyNanos };
      };
      expect(await spent("org-a", "id-sk-a")).toEqual({ organizationNanos: 0n, keyNanos: 0n });
      await settle("r-1", { chargeNanos: 150n });
      await settle("r-1", { chargeNanos: 150n });
      // 900 beyond a 100 hold, with 750 left: the hold and the 750.
      await settle("r-2", { chargeNanos: 1000n });
      expect(await stores.credits.balance("org-a")).toBe(0n);
      expect(await spent("org-a", "id-sk-a")).toEqual({ organizationNanos: 1000n, keyNanos: 150n });
      expect(await spent("org-a", "id-sk-b")).toEqual({ organizationNanos: 1000n, keyNanos: 850n });
      expect(await spent("org-b", "id-sk-c")).toEqual({ organizationNanos: 0n, keyNanos: 0n });
      // A release (charge 0) spends nothing.
      await stores.credits.topUp("org-a", 50n);
      admittedOf(await admit(request("sk-a", { requestId: "r-3", charge: credits(50n) })));
      await settle("r-3");
      expect(await spent("org-a", "id-sk-a")).toEqual({ organizationNanos: 1000n, keyNanos: 150n });
    });

    it("counts a key's spending in the UTC day, week (from Monday) and month of each settlement", async () => {
      // T0 is Tuesday 2026-11-03.
      const WEDNESDAY = Date.UTC(2026, 10, 4, 9, 0, 0);
      const NEXT_MONDAY = Date.UTC(2026, 10, 9, 0, 0, 0);
      const DECEMBER = Date.UTC(2026, 11, 1, 0, 0, 0);
      // A key id is any string: this one ends like sk-a's counter of Wednesday.
      const odd = key("sk-odd", { keyId: "id-sk-a:day:2026-11-04" });
      await stores.seed([organization("org-a", { initialCreditsNanos: 1000n, keys: [key("sk-a"), key("sk-b"), odd] })]);
      const charge = async (requestId: string, keyName: string, nanos: bigint, now: number) => {
        admittedOf(await admit(request(keyName, { requestId, charge: credits(nanos), now })));
        await settle(requestId, { chargeNanos: nanos, now });
        await settle(requestId, { chargeNanos: nanos, now });
      };
      const periods = async (keyId: string, now: number) => (await stores.credits.spent("org-a", keyId, now)).keyPeriodNanos;
      await charge("r-1", "sk-a", 100n, T0);
      await charge("r-2", "sk-b", 7n, T0);
      expect(await periods("id-sk-a", T0)).toEqual({ day: 100n, week: 100n, month: 100n });
      expect(await periods("id-sk-a", WEDNESDAY)).toEqual({ day: 0n, week: 100n, month: 100n });
      await charge("r-3", "sk-a", 20n, WEDNESDAY);
      expect(await periods("id-sk-a", WEDNESDAY)).toEqual({ day: 20n, week: 120n, month: 120n });
      expect(await periods("id-sk-a", NEXT_MONDAY)).toEqual({ day: 0n, week: 0n, month: 120n });
      expect(await periods("id-sk-a", DECEMBER)).toEqual({ day: 0n, week: 0n, month: 0n });
      expect(await periods("id-sk-b", T0)).toEqual({ day: 7n, week: 7n, month: 7n });
      await charge("r-4", "sk-odd", 5n, WEDNESDAY);
      expect(await periods("id-sk-a", WEDNESDAY)).toEqual({ day: 20n, week: 120n, month: 120n });
      expect((await stores.credits.spent("org-a", odd.keyId, WEDNESDAY)).keyNanos).toBe(5n);
      expect((await stores.credits.spent("org-a", "id-sk-a", DECEMBER)).keyNanos).toBe(120n);
    });

    it("releases the whole hold when the charge is zero", async () => {
      await stores.seed([organization("org-a", { initialCreditsNanos: 700n, keys: [key("sk-a")] })]);
      admittedOf(await admit(request("sk-a", { requestId: "r-1", charge: credits(700n) })));
      admittedOf(await admit(request("sk-a", { requestId: "r-2", charge: credits(0n) })));
      expect(refusalOf(await admit(request("sk-a", { charge: credits(1n) })))).toEqual({ reason: "insufficient_credits", balanceNanos: 0n, neededNanos: 1n });
      await settle("r-1");
      expect(await stores.credits.balance("org-a")).toBe(700n);
    });

    it("returns the hold and free unit of a request left unsettled ABANDONED_AFTER_MS, and only then", async () => {
      await stores.seed([organization("org-a", { initialCreditsNanos: 1000n, keys: [key("sk-a")] })]);
      admittedOf(await admit(request("sk-a", { requestId: "lost", charge: credits(400n) })));
      admittedOf(await admit(request("sk-a", { requestId: "lost-free", modelIds: ["free/m"], charge: free(0, ["free/m", 1]) })));
      admittedOf(await admit(request("sk-a", { requestId: "settled", charge: credits(100n) })));
      await settle("settled", { chargeNanos: 100n });
      expect(await stores.admission.releaseAbandoned(T0 + ABANDONED_AFTER_MS - 1)).toBe(0);
      expect(await stores.credits.balance("org-a")).toBe(500n);
      expect(await stores.admission.releaseAbandoned(T0 + ABANDONED_AFTER_MS)).toBe(2);
      expect(await stores.credits.balance("org-a")).toBe(900n);
      // The free unit is back, and a late settlement of a released request does nothing.
      admittedOf(await admit(request("sk-a", { requestId: "again", modelIds: ["free/m"], charge: free(0, ["free/m", 1]), now: T0 + ABANDONED_AFTER_MS })));
      await settle("lost", { chargeNanos: 400n });
      expect(await stores.credits.balance("org-a")).toBe(900n);
      expect(await stores.admission.releaseAbandoned(T0 + 2 * ABANDONED_AFTER_MS)).toBe(1);
    });

    it("settles a batch as each alone, the same id twice in it only once", async () => {
      await stores.seed([organization("org-a", { initialCreditsNanos: 1000n, keys: [key("sk-a")] })]);
      admittedOf(await admit(request("sk-a", { requestId: "r-1", charge: credits(400n) })));
      admittedOf(await admit(request("sk-a", { requestId: "r-2", charge: credits(600n) })));
      await stores.admission.settleAll([
        settlement("r-1", { chargeNanos: 100n }),
        settlement("r-2", { chargeNanos: 200n }),
        settlement("r-1", { chargeNanos: 100n }),
        settlement("unknown", { chargeNanos: 5n }),
      ]);
      expect(await stores.credits.balance("org-a")).toBe(700n);
    });
  });

  describe("free quotas", () => {
    const freeModel = (pick = 0) => free(pick, ["free/model", 10]);

    it("admits the daily quota, then refuses with what was used, until the next UTC day", async () => {
      await stores.seed([organization("org-a", { keys: [key("sk-a")] })]);
      for (let used = 1; used <= 10; used++) {
        const admitted = admittedOf(await admit(request("sk-a", { modelIds: ["free/model"], charge: freeModel(), now: T0 + used * MINUTE_MS })));
        expect(admitted.free).toEqual({ modelId: "free/model", limit: 10, used });
      }
      const exhausted = { reason: "free_quota_exhausted", modelId: "free/model", limit: 10, used: 10 };
      expect(refusalOf(await admit(request("sk-a", { modelIds: ["free/model"], charge: freeModel() })))).toEqual(exhausted);
      expect(refusalOf(await admit(request("sk-a", { modelIds: ["free/model"], charge: freeModel(), now: MIDNIGHT - 1 })))).toEqual(exhausted);
      expect(admittedOf(await admit(request("sk-a", { modelIds: ["free/model"], charge: freeModel(), now: MIDNIGHT }))).free).toEqual({
        modelId: "free/model",
        limit: 10,
        used: 1,
      });
    });

    it("reads today's free units used per model, for the organisation only", async () => {
      await stores.seed([organization("org-a", { keys: [key("sk-a")] }), organization("org-b", { keys: [key("sk-b", { organizationId: "org-b" })] })]);
      for (let i = 0; i < 3; i++) admittedOf(await admit(request("sk-a", { modelIds: ["free/model"], charge: freeModel() })));
      admittedOf(await admit(request("sk-b", { modelIds: ["free/model"], charge: freeModel() })));
      expect(await stores.admission.freeUsed("org-a", ["free/model", "other/model"], T0 + MINUTE_MS)).toEqual([3, 0]);
      expect(await stores.admission.freeUsed("org-b", ["free/model"], T0)).toEqual([1]);
      expect(await stores.admission.freeUsed("org-a", ["free/model"], MIDNIGHT)).toEqual([0]);
      expect(await stores.admission.freeUsed("org-a", [], T0)).toEqual([]);
    });

    it("gives a unit back when a failed free request asks for it", async () => {
      await stores.seed([organization("org-a", { keys: [key("sk-a")] })]);
      const quotaOfTwo = { modelIds: ["free/model"], charge: free(0, ["free/model", 2]) };
      admittedOf(await admit(request("sk-a", { ...quotaOfTwo, requestId: "r-1" })));
      admittedOf(await admit(request("sk-a", { ...quotaOfTwo, requestId: "r-2" })));
      expect(refusalOf(await admit(request("sk-a", quotaOfTwo)))?.reason).toBe("free_quota_exhausted");

      await settle("r-2", { refundFreeQuota: false });
      expect(refusalOf(await admit(request("sk-a", quotaOfTwo)))?.reason).toBe("free_quota_exhausted");
      await settle("r-1", { refundFreeQuota: true });
      await settle("r-1", { refundFreeQuota: true });
      expect(admittedOf(await admit(request("sk-a", quotaOfTwo))).free).toEqual({ modelId: "free/model", limit: 2, used: 2 });
      expect(refusalOf(await admit(request("sk-a", quotaOfTwo)))?.reason).toBe("free_quota_exhausted");
    });

    it("picks uniformly by `pick` among candidates with quota left, skipping exhausted and forbidden ones", async () => {
      await stores.seed([organization("org-a", { keys: [key("sk-a", { allowedModels: ["free/a", "free/b", "free/d"] })] })]);
      admittedOf(await admit(request("sk-a", { modelIds: ["free/a"], charge: free(0, ["free/a", 1]) })));
      // free/a is exhausted and free/c forbidden: free/b and free/d remain, half of [0, 1) each.
      const routerFree = (pick: number) => request("sk-a", { modelIds: [], charge: free(pick, ["free/a", 1], ["free/b", 5], ["free/c", 5], ["free/d", 5]) });
      const picked = async (pick: number) => admittedOf(await admit(routerFree(pick))).free;
      expect(await picked(0)).toEqual({ modelId: "free/b", limit: 5, used: 1 });
      expect(await picked(0.4999)).toEqual({ modelId: "free/b", limit: 5, used: 2 });
      expect(await picked(0.5)).toEqual({ modelId: "free/d", limit: 5, used: 1 });
      expect(await picked(0.9999)).toEqual({ modelId: "free/d", limit: 5, used: 2 });

      const none = { reason: "no_free_model_available" };
      // Every allowed candidate out of quota: the first one's quota is reported.
      expect(refusalOf(await admit(request("sk-a", { modelIds: [], charge: free(0, ["free/a", 1], ["free/c", 5]) })))).toEqual({
        reason: "free_quota_exhausted",
        modelId: "free/a",
        limit: 1,
        used: 1,
      });
      // One candidate, but forbidden: nothing to report the quota of.
      expect(refusalOf(await admit(request("sk-a", { modelIds: [], charge: free(0, ["free/c", 5]) })))).toEqual(none);
      expect(refusalOf(await admit(request("sk-a", { modelIds: [], charge: free(0.7, ["free/a", 1]) })))).toEqual({
        reason: "free_quota_exhausted",
        modelId: "free/a",
        limit: 1,
        used: 1,
      });
    });

    it("keeps each organisation's free quota apart", async () => {
      await stores.seed([
        organization("org-a", { keys: [key("sk-a")] }),
        organization("org-b", { keys: [key("sk-b", { organizationId: "org-b" })] }),
      ]);
      const one = { modelIds: ["free/model"], charge: free(0, ["free/model", 1]) };
      admittedOf(await admit(request("sk-a", one)));
      expect(refusalOf(await admit(request("sk-a", one)))?.reason).toBe("free_quota_exhausted");
      expect(admittedOf(await admit(request("sk-b", one))).free?.used).toBe(1);
    });
  });

  describe("seed", () => {
    it("is idempotent: the starting balance applies once, an operator's disable and the creation time stand", async () => {
      const first = organization("org-a", { rpm: 5, initialCreditsNanos: 1000n, keys: [key("sk-a", { name: "first" })] });
      await stores.seed([first]);
      admittedOf(await admit(request("sk-a", { charge: credits(300n) })));
      await stores.keys.setDisabled("id-sk-a", true);

      await stores.seed([first]);
      await stores.seed([organization("org-a", { rpm: 1, initialCreditsNanos: 5000n, keys: [key("sk-a", { name: "renamed", rpm: 7, createdAt: T0 })] })]);
      expect(await stores.credits.balance("org-a")).toBe(700n);
      expect(await stores.keys.findByDigest(digestOf("sk-a"))).toEqual({
        keyId: "id-sk-a",
        organizationId: "org-a",
        name: "renamed",
        disabled: true,
        rpm: 7,
        allowedModels: [],
        createdAt: T0 - DAY_MS,
      });
      expect(await stores.keys.list("org-a")).toHaveLength(1);
    });

    it("disables a key the configuration disables, new or existing, and never re-enables it", async () => {
      await stores.seed([organization("org-a", { keys: [key("sk-a", { disabled: true }), key("sk-b")] })]);
      expect(refusalOf(await admit(request("sk-a")))).toEqual({ reason: "key_disabled" });
      expect((await admit(request("sk-b"))).admitted).toBe(true);

      await stores.seed([organization("org-a", { keys: [key("sk-a"), key("sk-b", { disabled: true })] })]);
      expect(refusalOf(await admit(request("sk-a")))).toEqual({ reason: "key_disabled" });
      expect(refusalOf(await admit(request("sk-b")))).toEqual({ reason: "key_disabled" });
    });

    it("follows a rotated secret and a new organisation limit, keeping the key's state", async () => {
      await stores.seed([organization("org-a", { rpm: 5, keys: [key("sk-a")] })]);
      await stores.keys.setDisabled("id-sk-a", true);
      await stores.seed([organization("org-a", { rpm: 1, keys: [key("sk-a", { digest: digestOf("sk-rotated") })] })]);

      expect(await stores.keys.findByDigest(digestOf("sk-a"))).toBeUndefined();
      expect((await stores.keys.findByDigest(digestOf("sk-rotated")))?.disabled).toBe(true);
      await stores.keys.setDisabled("id-sk-a", false);
      expect(admittedOf(await admit(request("sk-rotated"))).rateLimit.requests).toEqual({ limit: 1, remaining: 0, resetAt: NEXT_MINUTE });
      expect(refusalOf(await admit(request("sk-a")))).toEqual({ reason: "invalid_api_key" });
    });

    it("keeps the digest a key id has when the seeded key was made up at start, and says so; a configured key replaces it", async () => {
      const made = (clearKey: string) => key(clearKey, { keyId: "id-dev", keepStoredDigest: true });
      // Nothing stored yet: the made-up key is written.
      expect(await stores.seed([organization("org-a", { keys: [made("sk-first")] })])).toEqual({ keptKeyIds: [] });
      // Another instance's made-up key: the first stays, the second is not written.
      expect(await stores.seed([organization("org-a", { keys: [made("sk-second")] })])).toEqual({ keptKeyIds: ["id-dev"] });
      expect((await admit(request("sk-first"))).admitted).toBe(true);
      expect(refusalOf(await admit(request("sk-second")))).toEqual({ reason: "invalid_api_key" });
      // The same key again is not "kept": it is the key asked for.
      expect(await stores.seed([organization("org-a", { keys: [made("sk-first")] })])).toEqual({ keptKeyIds: [] });
      // An operator's key (ROUTER_DEV_KEY set) replaces it.
      expect(await stores.seed([organization("org-a", { keys: [key("sk-chosen", { keyId: "id-dev" })] })])).toEqual({ keptKeyIds: [] });
      expect(refusalOf(await admit(request("sk-first")))).toEqual({ reason: "invalid_api_key" });
      expect((await admit(request("sk-chosen"))).admitted).toBe(true);
      expect(await stores.keys.list("org-a")).toHaveLength(1);
    });

    it("moves a key to the organisation the configuration names", async () => {
      await stores.seed([organization("org-a", { keys: [key("sk-a")] })]);
      await stores.seed([organization("org-b", { keys: [key("sk-a", { organizationId: "org-b" })] })]);
      expect(await stores.keys.list("org-a")).toEqual([]);
      expect((await stores.keys.list("org-b")).map((record) => record.keyId)).toEqual(["id-sk-a"]);
    });
  });

  describe("organisations", () => {
    it("knows those configured, topped up or given a key, and lists them by id with name, limits and balance", async () => {
      expect(await stores.organizations.list()).toEqual([]);
      await stores.seed([organization("org-b", { name: "Beta", rpm: 5, tpm: 50, initialCreditsNanos: 1000n }), organization("org-a", { name: "Alpha" })]);
      await stores.credits.topUp("org-c", 7n);
      await stores.keys.create({ keyId: "id-new", organizationId: "org-d", name: "new", allowedModels: [], digest: digestOf("sk-new"), createdAt: T0 });
      // A top-up of a configured organisation leaves its name.
      await stores.credits.topUp("org-a", 3n);
      expect(await stores.organizations.list()).toEqual([
        { organizationId: "org-a", name: "Alpha", balanceNanos: 3n },
        { organizationId: "org-b", name: "Beta", rpm: 5, tpm: 50, balanceNanos: 1000n },
        { organizationId: "org-c", name: "", balanceNanos: 7n },
        { organizationId: "org-d", name: "", balanceNanos: 0n },
      ]);
      for (const organizationId of ["org-a", "org-b", "org-c", "org-d"]) expect(await stores.organizations.exists(organizationId), organizationId).toBe(true);
      // Reading a balance or usage makes nothing known.
      await stores.credits.balance("org-e");
      await stores.usage.list("org-e", 10);
      expect(await stores.organizations.exists("org-e")).toBe(false);
    });
  });

  describe("usage", () => {
    it("gives a record only to its own organisation, and lists newest first", async () => {
      const [a1, b1, a2, a3] = [usage("u-a1", "org-a", T0), usage("u-b1", "org-b", T0 + 1), usage("u-a2", "org-a", T0 + 2), usage("u-a3", "org-a", T0 + 3)];
      await stores.usage.append([a1, b1, a2]);
      await stores.usage.append([a3]);
      await stores.usage.append([]);

      expect(await stores.usage.get("org-a", "u-a1")).toEqual(a1);
      expect(await stores.usage.get("org-b", "u-a1")).toBeUndefined();
      expect(await stores.usage.get("org-a", "u-missing")).toBeUndefined();
      expect(await stores.usage.list("org-a", 10)).toEqual([a3, a2, a1]);
      expect(await stores.usage.list("org-a", 2)).toEqual([a3, a2]);
      expect(await stores.usage.list("org-b", 10)).toEqual([b1]);
      expect(await stores.usage.list("org-c", 10)).toEqual([]);
    });

    it("keeps a record once per id: a batch appended again (a retry) adds nothing, the first record stays", async () => {
      const [a1, a2] = [usage("u-a1", "org-a", T0), usage("u-a2", "org-a", T0 + 1)];
      await stores.usage.append([a1]);
      await stores.usage.append([a1, a2]);
      await stores.usage.append([{ ...a1, cost: "9" }, a2]);

      expect(await stores.usage.list("org-a", 10)).toEqual([a2, a1]);
      expect(await stores.usage.get("org-a", "u-a1")).toEqual(a1);
    });
  });
});

describe("Redis account stores only", () => {
  let raw: ReturnType<typeof createClient>;
  beforeAll(async () => {
    raw = createClient({ url: server.url });
    await raw.connect();
  });
  afterAll(async () => {
    await raw?.close();
  });

  it("builds the same key names in TypeScript and in Lua", async () => {
    const keys = redisKeys("p:");
    const script = `local PREFIX = ARGV[1]\n${luaKeyBuilders()}\nreturn {
      keyRecord('d'), keyDigest('k'), organizationKeys('o'), organizationLimits('o'), balance('o'), admittedRequest('r'),
      keyWindow('k', '1762171200000'), organizationWindow('o', '1762171200000'), freeCounter('o', 'm/x', '2026-11-03'),
      usageRecord('u'), usageList('o'), organizations() }`;
    expect(await raw.eval(script, { arguments: ["p:"] })).toEqual([
      keys.keyRecord("d"),
      keys.keyDigest("k"),
      keys.organizationKeys("o"),
      keys.organizationLimits("o"),
      keys.balance("o"),
      keys.admittedRequest("r"),
      keys.keyWindow("k", 1762171200000),
      keys.organizationWindow("o", 1762171200000),
      keys.freeCounter("o", "m/x", "2026-11-03"),
      keys.usageRecord("u"),
      keys.usageList("o"),
      keys.organizations(),
    ]);
    expect(redisKeys().keyWindow("k", 1762171200000)).toBe("rtr:rl:key:k:1762171200000");
    expect(redisKeys().freeCounter("org", "m/x", "2026-11-03")).toBe("rtr:free:org:m/x:2026-11-03");
  });

  it("knows an organisation an earlier version made (a balance or keys, no entry in the organisations hash), and lists it once known", async () => {
    const prefix = freshPrefix();
    const keys = redisKeys(prefix);
    // What TopUp and CreateKey left before the hash existed.
    await raw.set(keys.balance("org-topped-up"), "5000");
    await raw.sAdd(keys.organizationKeys("org-with-key"), "id-old");
    const stores = await createRedis(prefix);
    try {
      expect(await stores.organizations.exists("org-topped-up")).toBe(true);
      expect(await stores.organizations.exists("org-with-key")).toBe(true);
      expect(await stores.organizations.exists("org-never")).toBe(false);
      expect(await stores.organizations.list()).toEqual([
        { organizationId: "org-topped-up", name: "", balanceNanos: 5000n },
        { organizationId: "org-with-key", name: "", balanceNanos: 0n },
      ]);
    } finally {
      await stores.close();
    }
  });

  it("seeds a kept digest again after a loss, so another instance's printed key still works", async () => {
    const prefix = freshPrefix();
    const [first, second] = [await createRedis(prefix), await createRedis(prefix)];
    try {
      const made = (clearKey: string) => organization("org-a", { keys: [key(clearKey, { keyId: "id-dev", keepStoredDigest: true })] });
      await first.seed([made("sk-first")]);
      expect(await second.seed([made("sk-second")])).toEqual({ keptKeyIds: ["id-dev"] });
      // Redis loses everything; the second instance is the one that notices and seeds again.
      await raw.del(await raw.keys(`${prefix}*`));
      expect((await second.admission.admit(request("sk-first"))).admitted).toBe(true);
      expect(refusalOf(await second.admission.admit(request("sk-second")))).toEqual({ reason: "invalid_api_key" });
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it("lets what it writes expire: windows after their minute, free counters after midnight, admitted requests after a day", async () => {
    const prefix = freshPrefix();
    const keys = redisKeys(prefix);
    const stores = await createRedis(prefix);
    try {
      await stores.seed([organization("org-a", { keys: [key("sk-a")] })]);
      const now = T0 + 30_000;
      admittedOf(await stores.admission.admit(request("sk-a", { requestId: "r-1", modelIds: ["free/model"], charge: free(0, ["free/model", 10]), now })));
      const expiresWithin = async (name: string, ms: number) => {
        const ttl = await raw.pTTL(name);
        expect(ttl, name).toBeGreaterThan(ms - 10_000);
        expect(ttl, name).toBeLessThanOrEqual(ms);
      };
      // The window of 12:00 lives until 12:03; the request came at 12:00:30.
      await expiresWithin(keys.keyWindow("id-sk-a", T0), 150_000);
      await expiresWithin(keys.organizationWindow("org-a", T0), 150_000);
      await expiresWithin(keys.freeCounter("org-a", "free/model", "2026-11-03"), MIDNIGHT + 60 * MINUTE_MS - now);
      await expiresWithin(keys.admittedRequest("r-1"), DAY_MS);

      await stores.admission.settle(settlement("r-1", { tokens: 5, now: NEXT_MINUTE }));
      expect(await raw.exists(keys.admittedRequest("r-1"))).toBe(0);
      await expiresWithin(keys.keyWindow("id-sk-a", NEXT_MINUTE), 3 * MINUTE_MS);

      await stores.usage.append([usage("u-1", "org-a", now)]);
      const usageTtl = await raw.ttl(keys.usageRecord("u-1"));
      expect(usageTtl).toBeGreaterThan(30 * 86_400 - 10);
      expect(usageTtl).toBeLessThanOrEqual(30 * 86_400);
    } finally {
      await stores.close();
    }
  });

  it("admits exactly the quota of 10 among 50 concurrent free requests from four instances", async () => {
    const prefix = freshPrefix();
    const instances = await Promise.all([1, 2, 3, 4].map(() => createRedis(prefix)));
    try {
      await instances[0].seed([organization("org-a", { keys: [key("sk-a")] })]);
      const admissions = await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          instances[index % 4].admission.admit(request("sk-a", { modelIds: ["free/model"], charge: free(0, ["free/model", 10]) })),
        ),
      );
      const admitted = admissions.filter((admission) => admission.admitted);
      expect(admitted.map((admission) => admittedOf(admission).free?.used).sort((a, b) => a! - b!)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(new Set(admissions.filter((admission) => !admission.admitted).map((admission) => refusalOf(admission)?.reason))).toEqual(
        new Set(["free_quota_exhausted"]),
      );
    } finally {
      await Promise.all(instances.map((instance) => instance.close()));
    }
  });

  it("admits exactly 100 of 200 concurrent holds when the balance covers 100, and ends at zero", async () => {
    const prefix = freshPrefix();
    const instances = await Promise.all([1, 2, 3, 4].map(() => createRedis(prefix)));
    try {
      await instances[0].seed([organization("org-a", { initialCreditsNanos: 100n * 7n, keys: [key("sk-a")] })]);
      const admissions = await Promise.all(Array.from({ length: 200 }, (_, index) => instances[index % 4].admission.admit(request("sk-a", { charge: credits(7n) }))));
      expect(admissions.filter((admission) => admission.admitted)).toHaveLength(100);
      expect(admissions.filter((admission) => refusalOf(admission)?.reason === "insufficient_credits")).toHaveLength(100);
      expect(await instances[1].credits.balance("org-a")).toBe(0n);
    } finally {
      await Promise.all(instances.map((instance) => instance.close()));
    }
  });

  it("rejects with StoreUnavailableError at once while Redis is down, and serves again once it is back", async () => {
    const faulty = await startRedisServer();
    const logged: string[] = [];
    const { promise: outageNoticed, resolve: noticeOutage } = Promise.withResolvers<void>();
    const logger = {
      warn: (_: object, message: string) => {
        logged.push(`warn: ${message}`);
        noticeOutage();
      },
      info: (_: object, message: string) => logged.push(`info: ${message}`),
    };
    // "At once" without a stopwatch: the command timeout is an hour and Redis
    // stays down until every call has settled, so each call must be refused by
    // the client itself (ClientOfflineError: never sent), neither queued until
    // Redis returns nor left to a timeout.
    const stores = await createRedisAccountStores({ url: faulty.url, logger, commandTimeoutMs: 60 * MINUTE_MS });
    try {
      const seed = [organization("org-a", { initialCreditsNanos: 100n, keys: [key("sk-a")] })];
      await stores.seed(seed);
      admittedOf(await stores.admission.admit(request("sk-a", { requestId: "r-1", charge: credits(10n) })));
      await faulty.stop();
      await settlesBefore(outageNoticed, "the store noticing Redis is gone");

      const calls: [string, () => Promise<unknown>][] = [
        ["admit", () => stores.admission.admit(request("sk-a"))],
        ["settle", () => stores.admission.settle(settlement("r-1"))],
        ["findByDigest", () => stores.keys.findByDigest(digestOf("sk-a"))],
        ["create", () => stores.keys.create(key("sk-new"))],
        ["list", () => stores.keys.list("org-a")],
        ["setDisabled", () => stores.keys.setDisabled("id-sk-a", true)],
        ["topUp", () => stores.credits.topUp("org-a", 1n)],
        ["balance", () => stores.credits.balance("org-a")],
        ["usage append", () => stores.usage.append([usage("u-1", "org-a", T0)])],
        ["usage get", () => stores.usage.get("org-a", "u-1")],
        ["usage list", () => stores.usage.list("org-a", 10)],
        ["seed", () => stores.seed(seed)],
      ];
      for (const [name, call] of calls) {
        const error = await settlesBefore(call(), `${name} while Redis is down`).then(
          () => expect.fail(`${name} succeeded while Redis was down`),
          (error: unknown) => error,
        );
        expect(error, name).toBeInstanceOf(StoreUnavailableError);
        const cause = (error as Error).cause;
        if (name === "seed") {
          // A transaction: node-redis 6 queues a MULTI even with disableOfflineQueue,
          // so it fails with the next reconnection attempt (refused, Redis being down).
          expect((cause as NodeJS.ErrnoException).code, name).toBe("ECONNREFUSED");
        } else {
          expect(cause, name).toBeInstanceOf(ClientOfflineError);
        }
      }

      await faulty.start();
      // The client reconnects by itself; the restarted server is empty (and has no scripts loaded).
      await vi.waitFor(() => stores.credits.balance("org-a"), { timeout: 10_000, interval: 50 });
      await stores.seed(seed);
      expect(admittedOf(await stores.admission.admit(request("sk-a", { charge: credits(100n) }))).key.keyId).toBe("id-sk-a");
      expect(await stores.credits.balance("org-a")).toBe(0n);
      // One outage, reported once, however many reconnection attempts it took.
      expect(logged).toEqual(["warn: Redis account store unreachable; reconnecting", "info: Redis account store reachable again"]);
    } finally {
      await stores.close();
      await faulty.stop();
    }
  });

  it("gives up on a frozen Redis (connected, never answering) after the command timeout, and serves again once it thaws", async () => {
    const frozen = await startRedisServer();
    const commandTimeoutMs = 200;
    const stores = await createRedisAccountStores({ url: frozen.url, commandTimeoutMs });
    try {
      await stores.seed([organization("org-a", { initialCreditsNanos: 100n, keys: [key("sk-a")] })]);
      frozen.freeze();
      // The store's clock is held: the call must end exactly at the command timeout.
      const outcome = await outcomeAtTimeout(() => stores.admission.admit(request("sk-a", { charge: credits(10n) })), commandTimeoutMs);
      expect(outcome).toBeInstanceOf(StoreUnavailableError);
      expect((outcome as Error).message).toContain(`got no answer in ${commandTimeoutMs} ms`);
      frozen.thaw();
      // The admission queued on the connection ran once Redis thawed: its hold is taken until released.
      await vi.waitFor(async () => expect(await stores.credits.balance("org-a")).toBe(90n), { timeout: 5_000, interval: 20 });
    } finally {
      frozen.thaw();
      await stores.close();
      await frozen.stop();
    }
  });

  it("fails to start with StoreUnavailableError when Redis cannot be reached", async () => {
    const port = await freePort();
    await expect(createRedisAccountStores({ url: `redis://127.0.0.1:${port}` })).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
