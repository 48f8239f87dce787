// The usage log against a real Redis that freezes (SIGSTOP) mid-write: each
// write times out and is retried into the frozen server, where every attempt
// waits on the connection and runs once the server goes on. The record must
// still be kept once (the append is idempotent per request id, as settling is).
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createRedisAccountStores } from "../../../core/accounts/redis-store.ts";
import type { AccountStores, UsageRecord } from "../../../core/accounts/store.ts";
import { createUsageLog } from "../../../core/accounts/usage-log.ts";
import { startRedisServer, type RedisServer } from "../../support/redis-server.ts";

const record: UsageRecord = {
  id: "req-frozen-1",
  organizationId: "org-frozen",
  keyId: "key-1",
  model: "paid/model",
  provider: "simulator",
  promptTokens: 10,
  completionTokens: 5,
  reasoningTokens: 0,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  cost: "0.000015",
  requestTags: [],
  latencyMs: 3,
  outcome: "ok",
  free: false,
  streamed: false,
  createdAt: 1_700_000_000_000,
};

describe("usage records written while Redis is frozen", { timeout: 30_000 }, () => {
  let redis: RedisServer;
  let stores: AccountStores;
  beforeAll(async () => {
    redis = await startRedisServer();
    stores = await createRedisAccountStores({ url: redis.url, prefix: "usage-frozen:", commandTimeoutMs: 100 });
  });
  afterAll(async () => {
    redis?.thaw();
    await stores?.close();
    await redis?.stop();
  });

  it("keeps each record once after the writes retried into the frozen server all run", async () => {
    let attempts = 0;
    let recovered = false;
    const counted = { ...stores.usage, append: (records: UsageRecord[]) => (attempts++, stores.usage.append(records)) };
    const log = createUsageLog(counted, { flushMs: 1, retryMs: 1, maxRetryMs: 1, random: () => 0, onRecovery: () => (recovered = true) });

    redis.freeze();
    log.record(record);
    // Three writes sent to the frozen server, each given up at the command timeout.
    await vi.waitFor(() => expect(attempts).toBeGreaterThanOrEqual(4), { timeout: 10_000, interval: 20 });
    redis.thaw();
    // The next retry succeeds after the frozen ones, which ran first on the same connection.
    await vi.waitFor(() => expect(recovered).toBe(true), { timeout: 10_000, interval: 20 });

    expect(await stores.usage.list("org-frozen", 10)).toEqual([record]);
    await log.close();
  });
});
