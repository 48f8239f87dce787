// Cache index time (`npm run bench -- --suite cache`): what one lookup of the
// semantic cache's index (core/cache/index) costs with 10,000 entries in one
// partition, in memory and in Redis (a private redis-server), against the
// floor of the same lookups in an empty partition. In process, no HTTP.
//
// Entries: 256-dimension unit vectors clustered like prompts (topics of 20,
// some prompts rewordings of others: test/support/cache-vectors.ts), a 2 KB
// payload each, threshold 0.9. Lookups of three kinds: a similar hit (a
// rewording of a stored prompt), an exact hit (a stored digest) and a miss (a
// new prompt of a stored topic: related, under the threshold).
// Per lookup: CPU time (process.cpuUsage around the awaited lookup: all of
// this process's work for it, the Redis client's included, none of Redis's),
// its wall time, and Redis round trips (the commands this process sent, from
// MONITOR on a sample: scripts' own commands are told apart and not counted).
// Target (issue 23): under 1 ms of CPU and at most one round trip per lookup.
//
// Options: --lookups N (timed per kind and store, 5000, over --rounds N, 5),
// --warmup N (1000), --entries N (10000), --quick (1000 lookups, 200 warm-up).
// Markdown to stdout and bench/results/cache.md.
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import type { CacheIndex, CacheLookup } from "../core/cache/index/cache-index.ts";
import { createMemoryCacheIndex } from "../core/cache/index/memory-index.ts";
import { createRedisCacheIndex, SYNC_BATCH } from "../core/cache/index/redis-index.ts";
import { dot, hammingBound, hammingDistance, signatureOf } from "../core/cache/index/vector-index.ts";
import { clusteredVectors, vectorSource } from "../test/support/cache-vectors.ts";
import { startRedisChild } from "./children.ts";
import { int, requireNode24 } from "./options.ts";
import { fmt, gitDescription, log, verdict, writeReport } from "./report.ts";
import { connectResp, info, startMonitor } from "./resp.ts";

requireNode24("npm run bench -- --suite cache", "bench/cache-index.ts");

const { values: flags } = parseArgs({
  options: { lookups: { type: "string" }, rounds: { type: "string" }, warmup: { type: "string" }, entries: { type: "string" }, quick: { type: "boolean", default: false } },
});
const lookups = int(flags.lookups, flags.quick ? 1000 : 5000);
const rounds = int(flags.rounds, 5);
const warmup = int(flags.warmup, flags.quick ? 200 : 1000);
const entryCount = int(flags.entries, 10_000);
const DIMENSIONS = 256;
const THRESHOLD = 0.9;
const PAYLOAD_BYTES = 2048;
const MONITOR_SAMPLE = 200;
const T0 = Date.UTC(2026, 10, 28);

const source = vectorSource(DIMENSIONS, 23);
const vectors = clusteredVectors(source, entryCount, 20);
/** 64 characters, as a SHA-256 hex digest (padded at the start: padding at the end would make entry-1 and entry-10 one digest). */
const digestOf = (i: number) => `entry-${String(i).padStart(58, "0")}`;
const payload = new Uint8Array(PAYLOAD_BYTES).map((_, i) => i % 251);

type Kind = "similar hit" | "exact hit" | "miss";
const KINDS: Kind[] = ["similar hit", "exact hit", "miss"];
/** `count` lookups of a kind: rewordings (spread 0.05 to 0.25 from a stored prompt: cosine 0.999 to 0.97), stored digests, or new prompts near a stored one (spread 1.0 to 1.5: cosine about 0.7 to 0.55). */
function queriesOf(kind: Kind, count: number): CacheLookup[] {
  return Array.from({ length: count }, (_, n) => {
    const i = Math.floor(source.uniform() * vectors.length);
    const vector = kind === "exact hit" ? vectors[i] : source.near(vectors[i], kind === "similar hit" ? 0.05 + 0.2 * source.uniform() : 1 + 0.5 * source.uniform());
    return { partition: "bench", exactDigest: kind === "exact hit" ? digestOf(i) : `query-${kind}-${String(n).padStart(40, "0")}`, vector, guard: "", threshold: THRESHOLD, now: T0 + 1 };
  });
}
const queries = new Map(KINDS.map((kind) => [kind, queriesOf(kind, lookups + warmup)]));

async function fill(index: CacheIndex, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await index.put("bench", { exactDigest: digestOf(i), vector: vectors[i], guard: "", provider: "openai", model: "openai/gpt-4o", payload, ttlMs: 3_600_000 }, T0);
}

interface Samples {
  cpu: number[];
  /** The CPU p99 of each round. */
  roundP99: number[];
  wall: number[];
  hits: number;
  exact: number;
}

async function time(index: CacheIndex, list: CacheLookup[], into: Samples): Promise<void> {
  for (const query of list) {
    const cpuStart = process.cpuUsage();
    const wallStart = performance.now();
    const hit = await index.lookup(query);
    const wall = performance.now() - wallStart;
    const cpu = process.cpuUsage(cpuStart);
    into.cpu.push((cpu.user + cpu.system) / 1000);
    into.wall.push(wall);
    if (hit) into.hits++;
    if (hit?.exact) into.exact++;
  }
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};

// ---- the stores ----

log(`${entryCount} entries of ${DIMENSIONS} dimensions, ${lookups} timed lookups per kind and store after ${warmup} warm-up ones`);
const { child: redisChild, port } = await startRedisChild();
const resp = await connectResp(port);
const redisVersion = (await info(resp, "server")).get("redis_version") ?? "?";
type Setup = { name: string; entries: number; index: CacheIndex; redis: boolean };
const setups: Setup[] = [];
for (const [redis, entries] of [[false, entryCount], [false, 0], [true, entryCount], [true, 0]] as const) {
  const options = { maxEntriesPerPartition: entryCount };
  const index = redis ? await createRedisCacheIndex({ url: `redis://127.0.0.1:${port}`, prefix: `bench-${entries}:`, ...options }) : createMemoryCacheIndex(options);
  const started = performance.now();
  await fill(index, entries);
  log(`${redis ? "redis" : "memory"}: ${entries} entries stored in ${fmt((performance.now() - started) / 1000, 1)} s`);
  setups.push({ name: redis ? "redis" : "memory", entries, index, redis });
}

const results = new Map<Setup, Map<Kind, Samples>>(setups.map((setup) => [setup, new Map(KINDS.map((kind) => [kind, { cpu: [], roundP99: [], wall: [], hits: 0, exact: 0 }]))]));
for (const setup of setups) for (const kind of KINDS) await time(setup.index, queries.get(kind)!.slice(0, warmup), { cpu: [], roundP99: [], wall: [], hits: 0, exact: 0 });
// Interleaved rounds: a neighbour's burst on this shared machine lands in one round, not one store.
const perRound = Math.ceil(lookups / rounds);
for (let round = 0; round < rounds; round++) {
  for (const setup of setups) {
    for (const kind of KINDS) {
      const samples = results.get(setup)!.get(kind)!;
      const from = samples.cpu.length;
      await time(setup.index, queries.get(kind)!.slice(warmup + round * perRound, warmup + (round + 1) * perRound), samples);
      samples.roundP99.push(quantile(samples.cpu.slice(from), 0.99));
    }
  }
  log(`round ${round + 1}/${rounds} done`);
}

// Round trips: the commands this process sent during a sample of lookups, by MONITOR (Redis runs nothing else now).
const roundTrips = new Map<Setup, Map<Kind, number>>();
for (const setup of setups.filter((s) => s.redis)) {
  const byKind = new Map<Kind, number>();
  for (const kind of KINDS) {
    const monitor = await startMonitor(port);
    await time(setup.index, queries.get(kind)!.slice(0, MONITOR_SAMPLE), { cpu: [], roundP99: [], wall: [], hits: 0, exact: 0 });
    const lines = await monitor.stop();
    byKind.set(kind, lines.filter((line) => !line.includes(" lua]")).length / MONITOR_SAMPLE);
  }
  roundTrips.set(setup, byKind);
}

// A new instance catching up: its first lookups each bring SYNC_BATCH records (decoded, added to its local index).
const newcomer = await createRedisCacheIndex({ url: `redis://127.0.0.1:${port}`, prefix: `bench-${entryCount}:`, maxEntriesPerPartition: entryCount });
const catchUp = { cpu: [] as number[], roundP99: [], wall: [] as number[], hits: 0, exact: 0 };
await time(newcomer, queries.get("miss")!.slice(0, Math.ceil(entryCount / SYNC_BATCH)), catchUp);
const caughtUp = { cpu: [] as number[], roundP99: [], wall: [] as number[], hits: 0, exact: 0 };
await time(newcomer, queries.get("similar hit")!.slice(0, 1000), caughtUp);
await newcomer.close();

// What the prefilter keeps: entries whose signature is within the bound, per lookup (mean), of the timed queries.
const signatures = vectors.map(signatureOf);
const bound = hammingBound(THRESHOLD);
const kept = new Map<Kind, { kept: number; scanned: number }>();
for (const kind of KINDS) {
  const sample = queries.get(kind)!.slice(0, 200);
  let keptCount = 0;
  let similar = 0;
  for (const query of sample) {
    const signature = signatureOf(query.vector!);
    for (let i = 0; i < vectors.length; i++) {
      if (hammingDistance(signature, signatures[i]) <= bound) keptCount++;
      if (dot(query.vector!, vectors[i]) >= THRESHOLD) similar++;
    }
  }
  kept.set(kind, { kept: keptCount / sample.length, scanned: similar / sample.length });
}

for (const setup of setups) await setup.index.close();
resp.close();
await redisChild.stop();

// ---- the report ----

const ms = (value: number) => fmt(value, 3);
const rows = setups.flatMap((setup) =>
  KINDS.map((kind) => {
    const samples = results.get(setup)!.get(kind)!;
    const trips = roundTrips.get(setup)?.get(kind);
    return `| ${setup.name} | ${setup.entries} | ${kind} | ${ms(quantile(samples.cpu, 0.5))} | ${ms(quantile(samples.cpu, 0.99))} | ${ms(Math.min(...samples.roundP99))} | ${ms(quantile(samples.wall, 0.5))} | ${ms(quantile(samples.wall, 0.99))} | ${trips === undefined ? "0" : fmt(trips, 2)} | ${fmt((100 * samples.hits) / samples.cpu.length, 1)} % (${fmt((100 * samples.exact) / samples.cpu.length, 1)} % exact) |`;
  }),
);
const full = setups.filter((setup) => setup.entries > 0);
const worstP50 = Math.max(...full.flatMap((setup) => KINDS.map((kind) => quantile(results.get(setup)!.get(kind)!.cpu, 0.5))));
const worstP99 = Math.max(...full.flatMap((setup) => KINDS.map((kind) => quantile(results.get(setup)!.get(kind)!.cpu, 0.99))));
const worstQuietP99 = Math.max(...full.flatMap((setup) => KINDS.map((kind) => Math.min(...results.get(setup)!.get(kind)!.roundP99))));
const worstTrips = Math.max(...[...roundTrips.values()].flatMap((byKind) => [...byKind.values()]));

const report = [
  `# Cache index: one lookup with ${entryCount} entries in a partition`,
  "",
  `${new Date().toISOString()} · commit ${gitDescription()} · Node ${process.version} · redis-server ${redisVersion} · ${cpus().length} × ${cpus()[0]?.model ?? "CPU"} · load average ${loadavg()[0].toFixed(2)} at the end`,
  "",
  `${DIMENSIONS}-dimension vectors clustered in topics of 20, ${PAYLOAD_BYTES}-byte payloads, threshold ${THRESHOLD} (Hamming bound ${bound} of 128 bits). ${rounds} interleaved rounds, ${lookups} timed lookups per kind and store after ${warmup} warm-up ones. CPU: process.cpuUsage around each awaited lookup (this process only); round trips: commands sent per lookup over ${MONITOR_SAMPLE} lookups by MONITOR.`,
  "",
  "| store | entries | lookup | CPU p50 (ms) | CPU p99 (ms) | CPU p99 of the quietest round (ms) | wall p50 (ms) | wall p99 (ms) | round trips | hits |",
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ...rows,
  "",
  `A new instance catching up on the ${entryCount} entries (Redis): its first ${catchUp.cpu.length} lookups bring ${SYNC_BATCH} records each, at a CPU p50 of ${ms(quantile(catchUp.cpu, 0.5))} ms (max ${ms(Math.max(...catchUp.cpu))} ms) and a wall p50 of ${ms(quantile(catchUp.wall, 0.5))} ms; then its similar hits cost a CPU p50 of ${ms(quantile(caughtUp.cpu, 0.5))} ms, ${fmt((100 * caughtUp.hits) / caughtUp.cpu.length, 1)} % of them hits.`,
  "",
  `Entries the signature prefilter keeps per lookup (mean of 200, of ${entryCount}), beside those truly at or above ${THRESHOLD}: ${KINDS.map((kind) => `${kind} ${fmt(kept.get(kind)!.kept, 1)} (${fmt(kept.get(kind)!.scanned, 1)})`).join(", ")}.`,
  "",
  "| target | measured | result |",
  "| --- | --- | --- |",
  `| under 1 ms of CPU per lookup with ${entryCount} entries | worst p50 ${ms(worstP50)} ms, worst p99 ${ms(worstP99)} ms (of the quietest round ${ms(worstQuietP99)} ms) | ${verdict(worstP50 < 1)} (p50), ${verdict(worstP99 < 1)} (p99), ${verdict(worstQuietP99 < 1)} (quietest round's p99) |`,
  `| at most one Redis round trip per lookup | worst ${fmt(worstTrips, 2)} per lookup | ${verdict(worstTrips <= 1)} |`,
  "",
].join("\n");
await writeReport("cache.md", report, performance.now() / 1000);
