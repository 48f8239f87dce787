// openCacheIndex: memory without REDIS_URL (each index its own), Redis with
// it (two indexes opened on one Redis share their entries).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NewCacheEntry } from "../../../../core/cache/index/cache-index.ts";
import { openCacheIndex } from "../../../../core/cache/index/open-index.ts";
import { startRedisServer, type RedisServer } from "../../../support/redis-server.ts";

const T0 = Date.UTC(2026, 10, 3);
const entry: NewCacheEntry = { exactDigest: "d", vector: Float32Array.of(0, 1), guard: "", provider: "p", model: "m", payload: Uint8Array.of(1, 2, 3), ttlMs: 60_000 };
const lookup = { partition: "p", exactDigest: "d", guard: "", threshold: 1, now: T0 + 1 };

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

describe("openCacheIndex", () => {
  it("opens a memory index of this instance's own without REDIS_URL", async () => {
    const [one, other] = [await openCacheIndex({}, { maxEntriesPerPartition: 10 }), await openCacheIndex({}, { maxEntriesPerPartition: 10 })];
    await one.put("p", entry, T0);
    expect(await one.lookup(lookup)).toMatchObject({ exact: true });
    expect(await other.lookup(lookup)).toBeUndefined();
  });

  it("opens a Redis index with REDIS_URL, shared by every index on that Redis and prefix", async () => {
    const env = { REDIS_URL: server.url, REDIS_PREFIX: "open-index:" };
    const [one, other] = [await openCacheIndex(env, { maxEntriesPerPartition: 10 }), await openCacheIndex(env, { maxEntriesPerPartition: 10 })];
    try {
      await one.put("p", entry, T0);
      expect(await other.lookup(lookup)).toMatchObject({ exact: true, payload: Uint8Array.of(1, 2, 3) });
      const elsewhere = await openCacheIndex({ ...env, REDIS_PREFIX: "other:" }, { maxEntriesPerPartition: 10 });
      expect(await elsewhere.lookup(lookup)).toBeUndefined();
      await elsewhere.close();
    } finally {
      await Promise.all([one.close(), other.close()]);
    }
  });
});
