// The Redis account stores: shared by every instance of the core (REDIS_URL).
// Same behaviour as memory-store.ts; what must be exact under concurrency is
// one Lua script (redis-scripts.ts), so admission is one round trip.
//
// Availability: a command while Redis is unreachable fails at once (no offline
// queue) with StoreUnavailableError, which the core answers with 503; the
// client keeps reconnecting in the background and service resumes by itself.
// A Redis that comes back empty is seeded again with the configuration (see
// reseedIfLost), so configured keys are never refused as unknown for it.
import { connectRedisStore } from "./redis-connect.ts";
import { USAGE_RECORDS_KEPT } from "./memory-store.ts";
import { createRedisGuard } from "./redis-guard.ts";
import { redisKeys } from "./redis-keys.ts";
import { accountScripts, type AdmitPayload, type AdmitReply, type PutKeyPayload, type ScriptRefusal, type ScriptWindow } from "./redis-scripts.ts";
import { StoreUnavailableError } from "./store-errors.ts";
import { ABANDONED_AFTER_MS, type AccountStores, type Admission, type KeyRecord, type NewKey, type RateLimitSnapshot, type Refusal, type SeedOrganization, type SeedResult, type Settlement, type UsageRecord, type WindowState } from "./store.ts";
import { DAY_MS, MINUTE_MS, minuteStart, nextUtcMidnight, SPENDING_PERIODS, spendingPeriod, utcDay } from "./windows.ts";

/** Minimal logger (pino's fits). */
export interface StoreLogger {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
  /** Redis lost its data (the configuration is seeded again); pino's logger has it. */
  error?(details: object, message: string): void;
}

export interface RedisAccountStoreOptions {
  url: string;
  /** Put before every key name; default "rtr:". */
  prefix?: string;
  /** Where connection loss and recovery are reported; default: nowhere. */
  logger?: StoreLogger;
  /** How long a store call waits for Redis before it is unavailable (503); default 2 s. */
  commandTimeoutMs?: number;
}

/** A window's counts live until two minutes after it ends. */
const WINDOW_KEPT_AFTER_END_MS = 2 * MINUTE_MS;
/** Today's free counters live until an hour after the next UTC midnight. */
const FREE_KEPT_AFTER_MIDNIGHT_MS = 60 * MINUTE_MS;
/** An admitted request waits at most a day for its settlement. */
const ADMITTED_REQUEST_KEPT_MS = DAY_MS;
const USAGE_RECORD_KEPT_SECONDS = 30 * 24 * 60 * 60;

export async function createRedisAccountStores(options: RedisAccountStoreOptions): Promise<AccountStores> {
  const keys = redisKeys(options.prefix);
  const commandTimeoutMs = options.commandTimeoutMs ?? 2_000;
  const logger = options.logger;
  const client = await connectRedisStore({
    url: options.url,
    store: "account store",
    scripts: accountScripts,
    logger,
    // A Redis that comes back may have come back empty: seed it again before requests find it so.
    onReconnect: () => void reseedIfLost().catch(() => {}), // admissions try again
  });

  // What this instance seeded last (its configuration), written again whenever
  // Redis is found to have lost it: the seed marker is gone.
  let seeded: SeedOrganization[] | undefined;
  let reseeding: Promise<boolean> | undefined;

  /** Writes the seed; answers it as written (a kept digest in place of the one asked for) and what was kept. */
  async function writeSeed(organizations: SeedOrganization[]): Promise<{ written: SeedOrganization[]; result: SeedResult }> {
    const keptKeyIds: string[] = [];
    const written: SeedOrganization[] = [];
    for (const organization of organizations) {
      // One transaction per organisation: its name, limits, starting balance (once), keys.
      const batch = client.multi();
      batch.hSet(keys.organizations(), organization.organizationId, organization.name ?? "");
      const limitsName = keys.organizationLimits(organization.organizationId);
      batch.del(limitsName);
      const limits: Record<string, string> = {};
      if (organization.rpm !== undefined) limits.rpm = String(organization.rpm);
      if (organization.tpm !== undefined) limits.tpm = String(organization.tpm);
      if (Object.keys(limits).length > 0) batch.hSet(limitsName, limits);
      batch.set(keys.balance(organization.organizationId), organization.initialCreditsNanos.toString(), { condition: "NX" });
      for (const key of organization.keys) batch.putKey(keys.prefix, putKey("seed", key, key.disabled, key.keepStoredDigest));
      const replies = await batch.exec();
      // Each key's script answers the digest its id has now.
      const digests = replies.slice(replies.length - organization.keys.length).map(String);
      const seededKeys = organization.keys.map((key, index) => {
        if (digests[index] === key.digest) return key;
        keptKeyIds.push(key.keyId);
        return { ...key, digest: digests[index] };
      });
      written.push({ ...organization, keys: seededKeys });
    }
    // Last: a seed cut short leaves no marker, so it is done again.
    await client.set(keys.seedMarker(), "1");
    return { written, result: { keptKeyIds } };
  }

  /**
   * Seeds this instance's configuration again if the marker is gone; one
   * re-seed at a time. True when it re-seeded (or waited for one that did).
   * Seeding is idempotent and sets a starting balance only where there is none,
   * so an organisation that kept its balance keeps it.
   */
  function reseedIfLost(): Promise<boolean> {
    reseeding ??= (async () => {
      try {
        if (!seeded || (await client.exists(keys.seedMarker())) === 1) return false;
        await writeSeed(seeded);
        logger?.error?.({ organizations: seeded.length }, "Redis account store had lost its data; the configured organisations and keys are seeded again");
        return true;
      } finally {
        reseeding = undefined;
      }
    })();
    return reseeding;
  }

  const guarded = createRedisGuard("account store", commandTimeoutMs);


  const readKey = async (digest: string): Promise<KeyRecord | undefined> => {
    const hash = await client.hGetAll(keys.keyRecord(digest));
    return Object.keys(hash).length === 0 ? undefined : keyFromHash(hash);
  };

  const putKey = (mode: "create" | "seed", key: NewKey, disabled: boolean, keep = false): PutKeyPayload => {
    const { digest, keyId, organizationId, name, rpm, tpm, allowedModels, createdAt } = key;
    const fields = ["keyId", keyId, "organizationId", organizationId, "name", name, "allowedModels", JSON.stringify(allowedModels)];
    if (rpm !== undefined) fields.push("rpm", String(rpm));
    if (tpm !== undefined) fields.push("tpm", String(tpm));
    return { mode, ...(keep && { keep }), digest, keyId, organizationId, disabled: disabled ? "1" : "0", createdAt: String(createdAt), fields };
  };

  /** One script call for the batch. */
  const settleAll = (settlements: Settlement[]) =>
    guarded("settle", async () => {
      if (settlements.length === 0) return;
      await client.settle(
        keys.prefix,
        settlements.map((settlement) => {
          const windowStart = minuteStart(settlement.now);
          return {
            requestId: settlement.requestId,
            chargeNanos: settlement.chargeNanos.toString(),
            tokens: String(settlement.tokens),
            refundFreeQuota: settlement.refundFreeQuota,
            minuteStart: String(windowStart),
            windowTtlMs: String(windowStart + MINUTE_MS + WINDOW_KEPT_AFTER_END_MS - settlement.now),
            // The key's spending in today, this week and this month, kept a day past each one's end.
            spendingPeriods: SPENDING_PERIODS.map((period) => {
              const { name, endsAt } = spendingPeriod(period, settlement.now);
              return { name, ttlMs: String(endsAt + DAY_MS - settlement.now) };
            }),
          };
        }),
      );
    });

  return {
    keys: {
      findByDigest: (digest) =>
        guarded("findByDigest", async () => {
          const key = await readKey(digest);
          // Unknown, or lost with the rest of Redis's data? Only a store that still has its seed may say "unknown".
          if (key || !(await reseedIfLost())) return key;
          return readKey(digest);
        }),
      create: (key) =>
        guarded("create", async () => ((await client.putKey(keys.prefix, putKey("create", key, false))) ? readKey(key.digest) : undefined)),
      list: (organizationId) =>
        guarded("list", async () => {
          const keyIds = await client.sMembers(keys.organizationKeys(organizationId));
          if (keyIds.length === 0) return [];
          const digests = await client.mGet(keyIds.map((keyId) => keys.keyDigest(keyId)));
          const records = await Promise.all(digests.map((digest) => (digest === null ? undefined : readKey(digest))));
          return records
            .filter((record, index): record is KeyRecord => record?.keyId === keyIds[index] && record.organizationId === organizationId)
            .sort((a, b) => a.createdAt - b.createdAt || a.keyId.localeCompare(b.keyId));
        }),
      setDisabled: (keyId, disabled) =>
        guarded("setDisabled", async () => {
          const fields = await client.setDisabled(keys.prefix, { keyId, disabled: disabled ? "1" : "0" });
          return fields === null ? undefined : keyFromHash(hashOf(fields));
        }),
    },

    organizations: {
      exists: (organizationId) =>
        guarded("organization exists", async () => {
          if ((await client.hExists(keys.organizations(), organizationId)) === 1) return true;
          // Made by TopUp or CreateKey before the hash existed (an earlier version): known by its balance or keys, and listed from now on.
          const earlier = (await client.exists([keys.balance(organizationId), keys.organizationKeys(organizationId)])) > 0;
          if (earlier) await client.hSetNX(keys.organizations(), organizationId, "");
          return earlier;
        }),
      list: () =>
        guarded("organization list", async () => {
          const names = Object.entries(await client.hGetAll(keys.organizations())).sort(([a], [b]) => a.localeCompare(b));
          if (names.length === 0) return [];
          const balances = await client.mGet(names.map(([organizationId]) => keys.balance(organizationId)));
          const limits = await Promise.all(names.map(([organizationId]) => client.hGetAll(keys.organizationLimits(organizationId))));
          return names.map(([organizationId, name], index) => ({
            organizationId,
            name,
            ...(limits[index].rpm !== undefined && { rpm: Number(limits[index].rpm) }),
            ...(limits[index].tpm !== undefined && { tpm: Number(limits[index].tpm) }),
            balanceNanos: BigInt(balances[index] ?? "0"),
          }));
        }),
    },

    credits: {
      topUp: (organizationId, nanos) =>
        guarded("topUp", async () => BigInt(await client.topUp(keys.balance(organizationId), keys.organizations(), nanos.toString(), organizationId))),
      balance: (organizationId) => guarded("balance", async () => BigInt((await client.get(keys.balance(organizationId))) ?? "0")),
      spent: (organizationId, keyId, now) =>
        guarded("spent", async () => {
          const periods = SPENDING_PERIODS.map((period) => keys.keySpentIn(spendingPeriod(period, now).name, keyId));
          const [organization, key, day, week, month] = (await client.mGet([keys.organizationSpent(organizationId), keys.keySpent(keyId), ...periods])).map(
            (nanos) => BigInt(nanos ?? "0"),
          );
          return { organizationNanos: organization, keyNanos: key, keyPeriodNanos: { day, week, month } };
        }),
    },

    admission: {
      admit: (request) =>
        guarded("admit", async () => {
          const { now, charge } = request;
          const windowStart = minuteStart(now);
          const payload: AdmitPayload = {
            digest: request.keyDigest,
            requestId: request.requestId,
            modelIds: request.modelIds,
            minuteStart: String(windowStart),
            // Only free requests count by day.
            day: charge.kind === "free" ? utcDay(now) : "",
            // Expiry is relative: the injected clock need not agree with Redis's.
            windowTtlMs: String(windowStart + MINUTE_MS + WINDOW_KEPT_AFTER_END_MS - now),
            freeTtlMs: String(nextUtcMidnight(now) + FREE_KEPT_AFTER_MIDNIGHT_MS - now),
            requestTtlMs: String(ADMITTED_REQUEST_KEPT_MS),
            abandonAt: String(now + ABANDONED_AFTER_MS),
            charge:
              charge.kind === "credits"
                ? { kind: "credits", holdNanos: charge.holdNanos.toString() }
                : { kind: "free", candidates: charge.candidates.map(({ modelId, dailyQuota }) => ({ modelId, dailyQuota })), pick: charge.pick },
          };
          let reply = await client.admit(keys.prefix, payload);
          if (isNotSeeded(reply)) {
            // Redis lost its data: seed it again and ask again (a refusal wrote nothing).
            await reseedIfLost();
            reply = await client.admit(keys.prefix, payload);
          }
          if (isNotSeeded(reply)) {
            // Never told a seed (a store used without configuration): the key is simply unknown.
            if (!seeded) return { admitted: false, refusal: { reason: "invalid_api_key" } };
            // Lost again at once: a valid key must not be called invalid for it.
            throw new StoreUnavailableError("Redis account store: account state was lost and is being restored");
          }
          return admissionOf(reply, windowStart + MINUTE_MS);
        }),
      settle: (settlement) => settleAll([settlement]),
      settleAll,
      releaseAbandoned: (now) =>
        guarded("release abandoned", async () => {
          // Batches of 100 keep each script short: Redis runs nothing else during one.
          let released = 0;
          for (;;) {
            const batch = await client.releaseAbandoned(keys.prefix, { now: String(now), limit: 100 });
            released += batch;
            if (batch < 100) return released;
          }
        }),
      freeUsed: (organizationId, modelIds, now) =>
        guarded("free used", async () => {
          if (modelIds.length === 0) return [];
          const day = utcDay(now);
          const counts = await client.mGet(modelIds.map((modelId) => keys.freeCounter(organizationId, modelId, day)));
          return counts.map((count) => Number(count ?? 0));
        }),
    },

    usage: {
      append: (records) =>
        guarded("usage append", async () => {
          if (records.length === 0) return;
          // One script for the batch, each record once (idempotent per id, as settling is): a retry adds nothing twice.
          const payload = records.map((record) => ({ id: record.id, organizationId: record.organizationId, json: JSON.stringify(record) }));
          await client.appendUsage(keys.prefix, { records: payload, ttlSeconds: USAGE_RECORD_KEPT_SECONDS, kept: USAGE_RECORDS_KEPT });
        }),
      get: (organizationId, id) =>
        guarded("usage get", async () => {
          const json = await client.get(keys.usageRecord(id));
          const record = json === null ? undefined : (JSON.parse(json) as UsageRecord);
          return record?.organizationId === organizationId ? record : undefined;
        }),
      list: (organizationId, limit) =>
        guarded("usage list", async () => {
          if (limit <= 0) return [];
          const ids = await client.lRange(keys.usageList(organizationId), 0, limit - 1);
          if (ids.length === 0) return [];
          // Records expire after 30 days; their ids may outlive them in the list.
          const jsons = await client.mGet(ids.map((id) => keys.usageRecord(id)));
          return jsons
            .filter((json): json is string => json !== null)
            .map((json) => JSON.parse(json) as UsageRecord)
            .filter((record) => record.organizationId === organizationId);
        }),
    },

    seed: (organizations) =>
      guarded("seed", async () => {
        const { written, result } = await writeSeed(organizations);
        // A kept digest is what this instance writes again after a loss, not the key it made up.
        seeded = written;
        return result;
      }),

    close: async () => {
      if (!client.isOpen) return;
      // Pending commands finish when connected; when not, there is nothing to wait for.
      if (client.isReady) await client.close();
      else client.destroy();
    },
  };
}

function hashOf(fields: string[]): Record<string, string> {
  const hash: Record<string, string> = {};
  for (let i = 0; i < fields.length; i += 2) hash[fields[i]] = fields[i + 1];
  return hash;
}

function keyFromHash(hash: Record<string, string>): KeyRecord {
  return {
    keyId: hash.keyId,
    organizationId: hash.organizationId,
    name: hash.name,
    disabled: hash.disabled === "1",
    ...(hash.rpm !== undefined && { rpm: Number(hash.rpm) }),
    ...(hash.tpm !== undefined && { tpm: Number(hash.tpm) }),
    allowedModels: JSON.parse(hash.allowedModels) as string[],
    createdAt: Number(hash.createdAt),
  };
}

const isNotSeeded = (reply: AdmitReply) => !reply.admitted && reply.refusal.reason === "not_seeded";

function admissionOf(reply: AdmitReply, resetAt: number): Admission {
  if (!reply.admitted) {
    const refusal = reply.refusal as Exclude<ScriptRefusal, { reason: "not_seeded" }>;
    const converted: Refusal =
      refusal.reason === "rate_limited"
        ? { ...refusal, resetAt }
        : refusal.reason === "insufficient_credits"
          ? { reason: refusal.reason, balanceNanos: BigInt(refusal.balanceNanos), neededNanos: BigInt(refusal.neededNanos) }
          : refusal;
    return { admitted: false, refusal: converted };
  }
  return {
    admitted: true,
    value: {
      key: { keyId: reply.keyId, organizationId: reply.organizationId },
      rateLimit: snapshotOf(reply.windows, resetAt),
      ...(reply.free && { free: reply.free }),
    },
  };
}

/** The tighter window per unit (fewer remaining; the key's on a tie), this request counted. */
function snapshotOf(windows: ScriptWindow[], resetAt: number): RateLimitSnapshot {
  const snapshot: RateLimitSnapshot = {};
  const tighter = (current: WindowState | undefined, next: WindowState) => (!current || next.remaining < current.remaining ? next : current);
  for (const { requests, tokens, rpm, tpm } of windows) {
    if (rpm !== undefined) snapshot.requests = tighter(snapshot.requests, { limit: rpm, remaining: Math.max(0, rpm - requests), resetAt });
    if (tpm !== undefined) snapshot.tokens = tighter(snapshot.tokens, { limit: tpm, remaining: Math.max(0, tpm - tokens), resetAt });
  }
  return snapshot;
}
