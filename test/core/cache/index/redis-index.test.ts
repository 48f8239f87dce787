// The Redis cache index beyond the contract: two instances share one Redis
// (what one stores the other finds, its local index catching up through the
// partition's sequence), a lookup is one round trip (counted by MONITOR,
// which tells a client's commands from those its scripts run), and a Redis
// that goes away is a miss and a dropped put, said once, never an error.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { CacheIndex, CacheLookup, NewCacheEntry } from "../../../../core/cache/index/cache-index.ts";
import { createRedisCacheIndex, type RedisCacheIndexOptions } from "../../../../core/cache/index/redis-index.ts";
import { vectorSource } from "../../../support/cache-vectors.ts";
import { startRedisServer, type RedisServer } from "../../../support/redis-server.ts";

const T0 = Date.UTC(2026, 10, 3, 12, 0, 0);
const source = vectorSource(128, 11);

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

let prefixes = 0;
const opened: CacheIndex[] = [];
afterAll(async () => {
  await Promise.all(opened.map((index) => index.close()));
});
async function open(options: Partial<RedisCacheIndexOptions> & { url?: string } = {}): Promise<CacheIndex> {
  const index = await createRedisCacheIndex({ url: server.url, prefix: `cache-redis-${prefixes}:`, maxEntriesPerPartition: 100, ...options });
  opened.push(index);
  return index;
}

function newEntry(exactDigest: string, vector: Float32Array): NewCacheEntry {
  return { exactDigest, vector, guard: "", provider: "openai", model: "openai/gpt-4o", payload: new TextEncoder().encode(exactDigest), ttlMs: 60_000 };
}
const lookup = (fields: Partial<CacheLookup>): CacheLookup => ({ partition: "p", exactDigest: "none", guard: "", threshold: 0.9, now: T0 + 1, ...fields });
const payloadOf = (hit: { payload: Uint8Array } | undefined) => hit && new TextDecoder().decode(hit.payload);

/**
 * The commands clients send (not those scripts run) while `work` runs, read
 * from MONITOR: an ECHO sent after it marks the end, as Redis shows commands in the order it runs them.
 */
async function clientCommands(port: number, work: () => Promise<unknown>): Promise<string[]> {
  const monitor = net.connect(port, "127.0.0.1");
  let text = "";
  monitor.setEncoding("utf8");
  monitor.on("data", (chunk: string) => (text += chunk));
  monitor.write("MONITOR\r\n");
  await vi.waitFor(() => expect(text).toContain("+OK\r\n"));
  await work();
  const marker = `end-${Math.random()}`;
  const echo = net.connect(port, "127.0.0.1", () => echo.write(`ECHO ${marker}\r\n`));
  await vi.waitFor(() => expect(text).toContain(marker));
  monitor.destroy();
  echo.destroy();
  return text
    .split("\r\n")
    .filter((line) => line.startsWith("+") && line !== "+OK" && !line.includes(" lua]") && !line.includes(marker))
    .map((line) => /\] "([^"]+)"/.exec(line)?.[1]?.toLowerCase() ?? line);
}

describe("the Redis cache index", () => {
  it("shares entries between two instances: exactly at once, by similarity after one catches up", async () => {
    prefixes++;
    const [a, b] = [await open(), await open()];
    const first = source.random();
    await a.put("p", newEntry("first", first), T0);
    expect(payloadOf(await b.lookup(lookup({ partition: "q", exactDigest: "first" })))).toBeUndefined();
    expect(payloadOf(await b.lookup(lookup({ exactDigest: "first" })))).toBe("first");

    // A stores the digest again (a new entry): B's copy points at the entry Redis dropped, so its
    // lookup brings the new record and fetches that payload in a second call.
    await a.put("p", newEntry("first", first), T0);
    const query = source.near(first, 0.1);
    let commands = await clientCommands(server.port, async () => expect(await b.lookup(lookup({ vector: query }))).toMatchObject({ exact: false, payload: new TextEncoder().encode("first") }));
    expect(commands).toEqual(["evalsha", "get"]);
    // Now known locally: one round trip.
    commands = await clientCommands(server.port, async () => expect(payloadOf(await b.lookup(lookup({ vector: query })))).toBe("first"));
    expect(commands).toEqual(["evalsha"]);

    // Later puts reach B by its cursor.
    const second = source.random();
    await a.put("p", newEntry("second", second), T0 + 5);
    expect(payloadOf(await b.lookup(lookup({ vector: source.near(second, 0.1), now: T0 + 6 })))).toBe("second");
    expect(payloadOf(await b.lookup(lookup({ vector: source.near(first, 0.1), now: T0 + 6 })))).toBe("first");
    // And what B stores, A finds.
    const third = source.random();
    await b.put("p", newEntry("third", third), T0 + 7);
    expect(payloadOf(await a.lookup(lookup({ vector: third, now: T0 + 8 })))).toBe("third");
  });

  it("looks up in one round trip: a similar hit, an exact hit and a miss", async () => {
    prefixes++;
    const index = await open();
    const vectors = Array.from({ length: 20 }, () => source.random());
    for (const [i, vector] of vectors.entries()) await index.put("p", newEntry(`d${i}`, vector), T0);
    const lookups: CacheLookup[] = [lookup({ vector: source.near(vectors[3], 0.1) }), lookup({ exactDigest: "d7", vector: vectors[7] }), lookup({ vector: source.random() }), lookup({ partition: "unknown", vector: vectors[3] })];
    for (const query of lookups) {
      const commands = await clientCommands(server.port, () => index.lookup(query));
      expect(commands, JSON.stringify(query.exactDigest)).toEqual(["evalsha"]);
    }
    const put = await clientCommands(server.port, () => index.put("p", newEntry("d-new", source.random()), T0));
    expect(put).toEqual(["evalsha"]);
  });

  it("catches up on a partition in batches, finding every entry once it has", async () => {
    prefixes++;
    const a = await open();
    const b = await open({ syncBatch: 2 });
    const vectors = Array.from({ length: 5 }, () => source.random());
    for (const [i, vector] of vectors.entries()) await a.put("p", newEntry(`d${i}`, vector), T0);
    // Every lookup brings two more records; each one also finds its entry (the second call).
    for (const [i, vector] of vectors.entries()) expect(payloadOf(await b.lookup(lookup({ vector })))).toBe(`d${i}`);
    for (const [i, vector] of vectors.entries()) {
      const commands = await clientCommands(server.port, async () => expect(payloadOf(await b.lookup(lookup({ vector })))).toBe(`d${i}`));
      expect(commands).toEqual(["evalsha"]);
    }
  });

  it("keeps the bound across instances: what one evicted the other no longer serves", async () => {
    prefixes++;
    const [a, b] = [await open({ maxEntriesPerPartition: 2 }), await open({ maxEntriesPerPartition: 100 })];
    const vectors = Array.from({ length: 3 }, () => source.random());
    await a.put("p", newEntry("d0", vectors[0]), T0);
    expect(payloadOf(await b.lookup(lookup({ vector: vectors[0] })))).toBe("d0");
    await a.put("p", newEntry("d1", vectors[1]), T0);
    await a.put("p", newEntry("d2", vectors[2]), T0);
    expect(await b.lookup(lookup({ vector: vectors[0] }))).toBeUndefined();
    expect(await b.lookup(lookup({ exactDigest: "d0" }))).toBeUndefined();
    expect(payloadOf(await b.lookup(lookup({ vector: vectors[2] })))).toBe("d2");
  });

  it("keeps its local copy bounded: a partition it let go syncs again from the start when asked", async () => {
    prefixes++;
    const writer = await open();
    const reader = await open({ maxLocalPartitions: 1 });
    const [x, y] = [source.random(), source.random()];
    await writer.put("p", newEntry("x", x), T0);
    await writer.put("q", newEntry("y", y), T0);
    for (let round = 0; round < 2; round++) {
      expect(payloadOf(await reader.lookup(lookup({ partition: "p", vector: x })))).toBe("x");
      expect(payloadOf(await reader.lookup(lookup({ partition: "q", vector: y })))).toBe("y");
    }
  });

  it("misses and drops puts while Redis is away, says so once, and works again when it is back", async () => {
    const own = await startRedisServer();
    try {
      const warn = vi.fn();
      const index = await createRedisCacheIndex({ url: own.url, maxEntriesPerPartition: 10, logger: { warn } });
      try {
        const vector = source.random();
        await index.put("p", newEntry("before", vector), T0);
        expect(payloadOf(await index.lookup(lookup({ vector })))).toBe("before");
        await own.stop();
        expect(await index.lookup(lookup({ vector }))).toBeUndefined();
        expect(await index.lookup(lookup({ exactDigest: "before" }))).toBeUndefined();
        await expect(index.put("p", newEntry("while-away", vector), T0)).resolves.toBeUndefined();
        const outageWarnings = warn.mock.calls.filter(([, message]) => String(message).includes("semantic cache"));
        expect(outageWarnings).toHaveLength(1);
        await own.start();
        // Back, and empty: the local copy starts over rather than point at entries Redis lost.
        await vi.waitFor(async () => {
          await index.put("p", newEntry("after", vector), T0 + 1);
          expect(payloadOf(await index.lookup(lookup({ vector, now: T0 + 2 })))).toBe("after");
        });
        expect(await index.lookup(lookup({ exactDigest: "before", vector: source.random(), now: T0 + 2 }))).toBeUndefined();
      } finally {
        await index.close();
      }
    } finally {
      await own.stop();
    }
  });
});
