// The memory cache index's own bounds beyond the contract's per-partition
// one: the number of partitions (the least recently used goes whole) and the
// bytes of every partition together (the least recently used partition's
// oldest entries go first).
import { describe, expect, it } from "vitest";
import type { CacheLookup, NewCacheEntry } from "../../../../core/cache/index/cache-index.ts";
import { createMemoryCacheIndex } from "../../../../core/cache/index/memory-index.ts";

const T0 = Date.UTC(2026, 10, 3);
const vector = Float32Array.of(1, 0, 0, 0);
const entry = (exactDigest: string, payloadBytes = 10): NewCacheEntry => ({ exactDigest, vector, guard: "", provider: "p", model: "m", payload: new Uint8Array(payloadBytes), ttlMs: 60_000 });
const exact = (partition: string, exactDigest: string): CacheLookup => ({ partition, exactDigest, guard: "", threshold: 1, now: T0 + 1 });

describe("the memory cache index's bounds", () => {
  it("keeps at most maxPartitions partitions, the least recently used going whole", async () => {
    const index = createMemoryCacheIndex({ maxEntriesPerPartition: 10, maxPartitions: 2 });
    await index.put("a", entry("d"), T0);
    await index.put("b", entry("d"), T0);
    expect(await index.lookup(exact("a", "d"))).toBeDefined(); // a is now the most recently used
    await index.put("c", entry("d"), T0);
    expect(await index.lookup(exact("b", "d"))).toBeUndefined();
    expect(await index.lookup(exact("a", "d"))).toBeDefined();
    expect(await index.lookup(exact("c", "d"))).toBeDefined();
  });

  it("keeps the payload and vector bytes under maxTotalBytes, the least recently used partition's oldest going first", async () => {
    // Each entry: 100 payload bytes and a 16-byte vector.
    const index = createMemoryCacheIndex({ maxEntriesPerPartition: 10, maxTotalBytes: 3 * 116 });
    await index.put("a", entry("a1", 100), T0);
    await index.put("a", entry("a2", 100), T0);
    await index.put("b", entry("b1", 100), T0);
    await index.put("b", entry("b2", 100), T0);
    expect(await index.lookup(exact("a", "a1"))).toBeUndefined();
    expect(await index.lookup(exact("a", "a2"))).toBeDefined();
    expect(await index.lookup(exact("b", "b1"))).toBeDefined();
    expect(await index.lookup(exact("b", "b2"))).toBeDefined();
    // b was used last by the lookups: a loses its last entry (and goes) before b loses any.
    await index.put("b", entry("b3", 100), T0);
    expect(await index.lookup(exact("a", "a2"))).toBeUndefined();
    for (const digest of ["b1", "b2", "b3"]) expect(await index.lookup(exact("b", digest))).toBeDefined();
  });
});
