// One contract for both cache indexes (core/cache/index/cache-index.ts): in
// memory and in Redis on a private server. Time is injected: each call names
// its `now`, so expiry is crossed without waiting.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CacheIndex, CacheLookup, NewCacheEntry } from "../../../../core/cache/index/cache-index.ts";
import { createMemoryCacheIndex } from "../../../../core/cache/index/memory-index.ts";
import { createRedisCacheIndex } from "../../../../core/cache/index/redis-index.ts";
import { normalised, vectorSource } from "../../../support/cache-vectors.ts";
import { startRedisServer, type RedisServer } from "../../../support/redis-server.ts";

const T0 = Date.UTC(2026, 10, 3, 12, 0, 0);
const DIMENSIONS = 64;
const BOUND = 4;

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

let prefixes = 0;
const implementations: [string, () => Promise<CacheIndex>][] = [
  ["memory", async () => createMemoryCacheIndex({ maxEntriesPerPartition: BOUND })],
  ["redis", () => createRedisCacheIndex({ url: server.url, prefix: `cache-contract-${++prefixes}:`, maxEntriesPerPartition: BOUND })],
];

/** A unit vector whose dot product with `axis(0)` is exactly `cosine` (for a cosine exact in float32). */
function atCosine(cosine: number, other = 1): Float32Array {
  const vector = new Float32Array(DIMENSIONS);
  vector[0] = cosine;
  vector[other] = Math.sqrt(1 - cosine * cosine);
  return vector;
}
const axis = (i: number) => {
  const vector = new Float32Array(DIMENSIONS);
  vector[i] = 1;
  return vector;
};

const text = (value: string) => new TextEncoder().encode(value);

function newEntry(exactDigest: string, vector: Float32Array, fields: Partial<NewCacheEntry> = {}): NewCacheEntry {
  return { exactDigest, vector, guard: "", provider: "openai", model: "openai/gpt-4o", payload: text(`answer to ${exactDigest}`), ttlMs: 60_000, ...fields };
}

function lookup(fields: Partial<CacheLookup> = {}): CacheLookup {
  return { partition: "p1", exactDigest: "none", vector: axis(0), guard: "", threshold: 0.9, now: T0 + 1, ...fields };
}

describe.each(implementations)("cache index contract: %s", (_name, createIndex) => {
  const withIndex = async (test: (index: CacheIndex) => Promise<void>) => {
    const index = await createIndex();
    try {
      await test(index);
    } finally {
      await index.close();
    }
  };

  it("finds an entry by its exact digest, with what made it", () =>
    withIndex(async (index) => {
      await index.put("p1", newEntry("d1", axis(3)), T0);
      const hit = await index.lookup(lookup({ exactDigest: "d1" }));
      expect(hit).toMatchObject({ exact: true, similarity: 1, provider: "openai", model: "openai/gpt-4o", createdAt: T0 });
      expect(new TextDecoder().decode(hit!.payload)).toBe("answer to d1");
      expect(hit!.entryId).toMatch(/./);
      expect(await index.lookup(lookup({ exactDigest: "d2", vector: axis(5) }))).toBeUndefined();
    }));

  it("matches by similarity at and above the threshold, not below it", () =>
    withIndex(async (index) => {
      await index.put("p1", newEntry("at", atCosine(0.75)), T0);
      const hit = await index.lookup(lookup({ threshold: 0.75 }));
      expect(hit).toMatchObject({ exact: false, similarity: 0.75 });
      expect(new TextDecoder().decode(hit!.payload)).toBe("answer to at");
      // The next number above 0.75: the entry is just below it.
      expect(await index.lookup(lookup({ threshold: 0.75 + Number.EPSILON }))).toBeUndefined();
      expect(await index.lookup(lookup({ threshold: 0.9 }))).toBeUndefined();
      expect(await index.lookup(lookup({ threshold: 0.5 }))).toMatchObject({ similarity: 0.75 });
    }));

  it("takes the most similar of several matches, and the exact digest before any", () =>
    withIndex(async (index) => {
      await index.put("p1", newEntry("far", atCosine(0.8, 1)), T0);
      await index.put("p1", newEntry("near", atCosine(0.96875, 2)), T0);
      await index.put("p1", newEntry("middle", atCosine(0.875, 3)), T0);
      expect(await index.lookup(lookup({ threshold: 0.75 }))).toMatchObject({ similarity: 0.96875, exact: false });
      expect(await index.lookup(lookup({ threshold: 0.75, exactDigest: "far" }))).toMatchObject({ similarity: 1, exact: true, payload: text("answer to far") });
    }));

  it("matches only the exact digest at a threshold of 1 or without a vector", () =>
    withIndex(async (index) => {
      await index.put("p1", newEntry("same-vector", axis(0)), T0);
      expect(await index.lookup(lookup({ threshold: 0.99 }))).toMatchObject({ similarity: 1, exact: false });
      expect(await index.lookup(lookup({ threshold: 1 }))).toBeUndefined();
      expect(await index.lookup(lookup({ threshold: 0.5, vector: undefined }))).toBeUndefined();
      expect(await index.lookup(lookup({ threshold: 1, exactDigest: "same-vector" }))).toMatchObject({ exact: true });
    }));

  it("never matches by similarity across guards (a number or a negation differs)", () =>
    withIndex(async (index) => {
      await index.put("p1", newEntry("d1", axis(0), { guard: "3" }), T0);
      expect(await index.lookup(lookup({ guard: "4" }))).toBeUndefined();
      expect(await index.lookup(lookup({ guard: "" }))).toBeUndefined();
      expect(await index.lookup(lookup({ guard: "3" }))).toMatchObject({ similarity: 1 });
    }));

  it("keeps to the providers asked for, when asked", () =>
    withIndex(async (index) => {
      await index.put("p1", newEntry("d1", axis(0), { provider: "openai" }), T0);
      expect(await index.lookup(lookup({ providers: new Set(["anthropic"]) }))).toBeUndefined();
      expect(await index.lookup(lookup({ providers: new Set(["anthropic"]), exactDigest: "d1" }))).toBeUndefined();
      expect(await index.lookup(lookup({ providers: new Set(["anthropic", "openai"]) }))).toMatchObject({ provider: "openai" });
      expect(await index.lookup(lookup({ providers: new Set(["openai"]), exactDigest: "d1" }))).toMatchObject({ exact: true });
    }));

  it("serves an entry until the ms of its expiry, by the injected clock", () =>
    withIndex(async (index) => {
      await index.put("p1", newEntry("d1", axis(0), { ttlMs: 1_000 }), T0);
      for (const [now, served] of [[T0 + 999, true], [T0 + 1_000, false], [T0 + 1_001, false]] as const) {
        expect(await index.lookup(lookup({ exactDigest: "d1", now })), `exact at +${now - T0}`).toEqual(served ? expect.objectContaining({ exact: true }) : undefined);
        expect(await index.lookup(lookup({ now })), `similar at +${now - T0}`).toEqual(served ? expect.objectContaining({ exact: false }) : undefined);
      }
    }));

  it("keeps a partition to its bound, the oldest going first", () =>
    withIndex(async (index) => {
      for (let i = 0; i < BOUND + 1; i++) await index.put("p1", newEntry(`d${i}`, axis(i + 1)), T0 + i);
      const at = T0 + BOUND + 1;
      expect(await index.lookup(lookup({ exactDigest: "d0", vector: axis(1), now: at }))).toBeUndefined();
      for (let i = 1; i <= BOUND; i++) {
        expect(await index.lookup(lookup({ exactDigest: `d${i}`, now: at }))).toMatchObject({ exact: true });
        expect(await index.lookup(lookup({ vector: axis(i + 1), now: at }))).toMatchObject({ exact: false, payload: text(`answer to d${i}`) });
      }
    }));

  it("keeps the newest entry of an exact digest only", () =>
    withIndex(async (index) => {
      await index.put("p1", newEntry("d1", axis(1), { payload: text("first") }), T0);
      await index.put("p1", newEntry("d1", axis(2), { payload: text("second") }), T0 + 1);
      expect(await index.lookup(lookup({ exactDigest: "d1", now: T0 + 2 }))).toMatchObject({ payload: text("second"), createdAt: T0 + 1 });
      expect(await index.lookup(lookup({ vector: axis(1), now: T0 + 2 }))).toBeUndefined();
      expect(await index.lookup(lookup({ vector: axis(2), now: T0 + 2 }))).toMatchObject({ payload: text("second") });
    }));

  it("keeps two partitions apart", () =>
    withIndex(async (index) => {
      await index.put("p1", newEntry("d1", axis(0)), T0);
      expect(await index.lookup(lookup({ partition: "p2", exactDigest: "d1" }))).toBeUndefined();
      expect(await index.lookup(lookup({ partition: "p2" }))).toBeUndefined();
      await index.put("p2", newEntry("d1", axis(0), { payload: text("other") }), T0);
      expect(await index.lookup(lookup({ partition: "p1", exactDigest: "d1" }))).toMatchObject({ payload: text("answer to d1") });
      expect(await index.lookup(lookup({ partition: "p2" }))).toMatchObject({ payload: text("other") });
    }));

  it("gives the payload's bytes back exactly, zero bytes and 0xff included", () =>
    withIndex(async (index) => {
      const payload = Uint8Array.from([0, 0xff, 0, 0x0a, 0x0d, ...Array.from({ length: 256 }, (_, i) => i), 0xff, 0]);
      await index.put("p1", newEntry("bytes", normalised(vectorSource(DIMENSIONS, 5).random()), { payload }), T0);
      const hit = await index.lookup(lookup({ exactDigest: "bytes" }));
      expect(hit?.payload).toBeInstanceOf(Uint8Array);
      expect([...hit!.payload]).toEqual([...payload]);
    }));

  it("does not keep an entry that has expired already or whose payload is too large", () =>
    withIndex(async (index) => {
      await index.put("p1", newEntry("d1", axis(0), { ttlMs: 0 }), T0);
      await index.put("p1", newEntry("d2", axis(0), { payload: new Uint8Array(5 * 1024 * 1024) }), T0);
      expect(await index.lookup(lookup({ exactDigest: "d1" }))).toBeUndefined();
      expect(await index.lookup(lookup({ exactDigest: "d2" }))).toBeUndefined();
    }));
});
