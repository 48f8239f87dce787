// Accounts overhead benchmark (`npm run bench -- --suite accounts`): what the
// account stores cost a request on the hot path, in-memory stores against
// Redis (REDIS_URL pointing at a private redis-server this benchmark starts).
//
// Two gateways of this tree (gateway/main.ts, the `npm start` entry point, each
// its own process, LOG_LEVEL=silent) with the same temporary config: one model
// served by the built-in simulator (echo, no delay: the upstream costs nothing
// and adds no variance, so the only difference between the two is the store),
// one organisation with a huge credit balance and rpm/tpm limits on it and on
// its key (so both rate windows are read and written), and a huge daily free
// quota on the model. Two request kinds:
//   paid   `bench/sim`       credit hold at admission, settled with the real cost
//   free   `bench/sim:free`  one unit of the daily free quota
// Measured in interleaved rounds (memory and Redis alternate, ABBA order):
// latency p50/p99 at concurrency 1, RPS at concurrency 50, CPU per request of
// the gateway and of redis-server, and Redis commands per request from INFO
// commandstats (plus one MONITOR sample that tells each top-level command from
// those run inside scripts). The report goes to stdout and
// bench/results/accounts.md; progress to stderr. Exit code 0 whatever the
// targets say; 1 only when the setup fails.
//
// Options: --rounds N  --requests N (sequential, per store, kind and round)
//   --concurrency N  --rps-seconds S  --rps-max N  --warmup S
//   --kind both|paid|free  --monitor-requests N  --log-level L  --quick
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { startRedisChild, type Child } from "./children.ts";
import { benchModel, startGateway as startGatewayChild, writeGatewayConfig } from "./gateway-child.ts";
import { machineCpu } from "./machine-cpu.ts";
import { addLatency, addThroughput, clientPairs, completionContent, emptyTally, latencyRun, measuredPhase, median, percentile, throughputRun, warmUp, WARMUP_SEQUENTIAL, type LatencyTally, type Target, type ThroughputTally } from "./load.ts";
import { int, requireNode24, ROUND_OPTIONS, roundSettings } from "./options.ts";
import { environmentLine, fmt, log, range, ROOT, signed, targetsSection, verdict, writeReport } from "./report.ts";
import { RunResources } from "./resources.ts";
import { commandStats, connectResp, info, serverCpuMicros, startMonitor, type CommandCount, type RespConnection } from "./resp.ts";

requireNode24("npm run bench -- --suite accounts", "bench/accounts-overhead.ts");

const { values: flags } = parseArgs({
  options: {
    ...ROUND_OPTIONS,
    kind: { type: "string", default: "both" },
    "monitor-requests": { type: "string" },
  },
});
const settings = {
  ...roundSettings(flags, { rounds: flags.quick ? 2 : 8, requests: flags.quick ? 300 : 1000 }),
  monitorRequests: int(flags["monitor-requests"], 200),
};

type Store = "memory" | "redis";
type Kind = "paid" | "free";
const STORES: Store[] = ["memory", "redis"];
if (!["both", "paid", "free"].includes(flags.kind)) throw new Error(`--kind is both, paid or free, got ${flags.kind}`);
const KINDS: Kind[] = flags.kind === "both" ? ["paid", "free"] : [flags.kind as Kind];

const DEV_KEY = "sk-rtr-bench-accounts-0123456789abcdef";
const MODEL_ID = "bench/sim";
const ORG_ID = "org_bench";
const EXPECTED_CONTENT = "You said: hi";
/** Far above what a run can use: the limits are read and counted, never reached. */
const HUGE_LIMIT = 1_000_000_000;
const CREDITS_USD = "1000000";
/** The usage log writes every 50 ms (core/accounts/usage-log.ts): wait that long before reading a memory gateway's CPU. */
const USAGE_FLUSH_WAIT_MS = 75;

function gatewayConfig() {
  return {
    providers: [{ id: "sim", label: "Simulator", protocol: "simulator" }],
    models: [
      benchModel(MODEL_ID, "Bench simulator", [
        {
          provider: "sim",
          provider_model_id: "echo",
          pricing: { prompt: "0.000001", completion: "0.000002" },
          free: { enabled: true, daily_quota: HUGE_LIMIT },
        },
      ]),
    ],
    organizations: [
      {
        id: ORG_ID,
        name: "Bench",
        credits: CREDITS_USD,
        rpm: HUGE_LIMIT,
        tpm: HUGE_LIMIT,
        keys: [{ id: "key_bench", env: "ROUTER_DEV_KEY", rpm: HUGE_LIMIT, tpm: HUGE_LIMIT }],
      },
    ],
  };
}

function targetFor(kind: Kind): Target {
  return {
    name: kind,
    path: "/api/v1/chat/completions",
    headers: { "content-type": "application/json", authorization: `Bearer ${DEV_KEY}` },
    body: JSON.stringify({ model: kind === "free" ? `${MODEL_ID}:free` : MODEL_ID, messages: [{ role: "user", content: "hi" }], max_tokens: 16 }),
  };
}
const TARGETS: Record<Kind, Target> = { paid: targetFor("paid"), free: targetFor("free") };

// ---- the setup: redis-server, two gateways ----

const run = new RunResources();
let resp: RespConnection | undefined;
run.onCleanup(() => resp?.close());

// This process's own REDIS_URL must not reach the in-memory gateway.
delete process.env.REDIS_URL;
const runStarted = performance.now();
const configPath = await writeGatewayConfig(await run.makeTempDir("rtr-bench-accounts-"), gatewayConfig());

const { child: redis, port: redisPort } = await startRedisChild();
// The gateways are stopped first, then redis-server (its owner kills it on exit).
run.lastChildren.push(redis);
resp = await connectResp(redisPort);
const redisServer = await info(resp, "server");
const redisVersion = redisServer.get("redis_version") ?? "?";
const redisPid = redisServer.get("process_id") ?? "?";

function startGateway(store: Store): Promise<Child> {
  return startGatewayChild({
    name: `gateway (${store})`,
    root: ROOT,
    configPath,
    devKey: DEV_KEY,
    logLevel: settings.logLevel,
    env: { ROUTER_ADMIN_TOKEN: "rtr-admin-bench", REDIS_URL: store === "redis" ? redis.url : "", REDIS_PREFIX: "rtr:" },
  });
}
const gateways = {} as Record<Store, Child>;
for (const store of STORES) {
  gateways[store] = await startGateway(store);
  run.children.push(gateways[store]);
}
log(`redis-server ${redisVersion} ${redis.url} (pid ${redisPid}), gateway memory ${gateways.memory.url} (pid ${gateways.memory.pid}), gateway redis ${gateways.redis.url} (pid ${gateways.redis.pid})`);

const { sequential, concurrent, all: clients } = clientPairs(STORES, (store) => gateways[store].url, settings.concurrency);
run.clients.push(...clients);
/** Answers with status 200 per store and kind, over the whole run: the Redis counters must agree. */
const served: Record<Store, Record<Kind, number>> = { memory: { paid: 0, free: 0 }, redis: { paid: 0, free: 0 } };


// ---- Redis bookkeeping ----

type Counts = Map<string, CommandCount>;

function countsDelta(before: Counts, after: Counts): Counts {
  const delta: Counts = new Map();
  for (const [name, a] of after) {
    const b = before.get(name) ?? { calls: 0, usec: 0 };
    if (a.calls - b.calls > 0) delta.set(name, { calls: a.calls - b.calls, usec: a.usec - b.usec });
  }
  delta.delete("info");
  return delta;
}

function addCounts(into: Counts, more: Counts) {
  for (const [name, c] of more) {
    const current = into.get(name) ?? { calls: 0, usec: 0 };
    into.set(name, { calls: current.calls + c.calls, usec: current.usec + c.usec });
  }
}

const calls = (counts: Counts, name: string) => counts.get(name)?.calls ?? 0;

/**
 * Fingerprints in commandstats (checked against the MONITOR sample): the
 * admission script runs EXISTS once (the duplicate-request check) and the
 * settlement script DEL once per request it settles (it removes the admitted
 * request); neither runs anywhere else on this path. Settlements are batched,
 * so the settlement script calls are the scripts that are not admissions (the
 * MONITOR sample shows no other script). The usage log writes one LPUSH per
 * record, in MULTI/EXEC batches.
 */
function fingerprints(counts: Counts) {
  const admissions = calls(counts, "exists");
  const settlements = calls(counts, "del");
  const scripts = calls(counts, "evalsha") + calls(counts, "eval");
  return { admissions, settlements, settlementScripts: scripts - admissions, batches: calls(counts, "exec"), records: calls(counts, "lpush") };
}

/** Commandstats when the gateways are up and seeded, before any request: what seeding ran is not counted. */
let baseline: Counts = new Map();

/**
 * Waits until every admitted request is settled (DEL has caught up with
 * EXISTS since the baseline), then until the usage log has stopped writing
 * (no new LPUSH for 80 ms; its timer is 50 ms). Usage records are not matched
 * one to one with admissions: the usage log can drop records (see the README),
 * which the report counts. Returns the time until all were settled, in ms.
 */
async function drained(timeoutMs = 15_000): Promise<number> {
  const started = performance.now();
  let settledAfter: number | undefined;
  let records = -1;
  for (;;) {
    const f = fingerprints(countsDelta(baseline, await commandStats(resp!)));
    if (f.settlements >= f.admissions) {
      settledAfter ??= performance.now() - started;
      if (f.records === records) return settledAfter;
      records = f.records;
      await sleep(80);
      continue;
    }
    settledAfter = undefined;
    records = -1;
    if (performance.now() - started > timeoutMs) {
      throw new Error(`Redis did not drain within ${timeoutMs} ms: ${f.admissions} admissions, ${f.settlements} settlements, ${f.records} usage records`);
    }
    await sleep(5);
  }
}

async function lag(): Promise<number> {
  const f = fingerprints(countsDelta(baseline, await commandStats(resp!)));
  return f.admissions - f.settlements;
}

// ---- measuring ----

interface Stats extends LatencyTally, ThroughputTally {
  gatewayCpuSequential: number;
  redisCpuSequential: number;
  gatewayCpuConcurrent: number;
  redisCpuConcurrent: number;
  clientCpuConcurrent: number;
  countsSequential: Counts;
  countsConcurrent: Counts;
  /** Admitted but not yet settled when the concurrency-N load stopped, per round. */
  lagAtEnd: number[];
  /** Time from the end of the load until all settled and recorded, per round (ms). */
  drainMs: number[];
  /** Requests of the concurrency-N phase over its time plus the settlement drain after it, per round. */
  rpsWithDrain: number[];
  /** Settlements done during the concurrency-N load, per second, per round. */
  settleRate: number[];
}

function emptyStats(): Stats {
  return {
    ...emptyTally(),
    gatewayCpuSequential: 0, redisCpuSequential: 0, gatewayCpuConcurrent: 0, redisCpuConcurrent: 0, clientCpuConcurrent: 0,
    countsSequential: new Map(), countsConcurrent: new Map(), lagAtEnd: [], drainMs: [], rpsWithDrain: [], settleRate: [],
  };
}

interface Snapshot {
  gateway: number;
  redis: number;
  client: number;
  counts: Counts;
}

async function snapshot(store: Store): Promise<Snapshot> {
  const gateway = await gateways[store].cpuMicros();
  const own = process.cpuUsage();
  if (store === "memory") return { gateway, redis: 0, client: own.user + own.system, counts: new Map() };
  const [redisCpu, counts] = [await serverCpuMicros(resp!), await commandStats(resp!)];
  return { gateway, redis: redisCpu, client: own.user + own.system, counts };
}

/** After a phase: the background work of its requests (settlements, usage batches) done, so its CPU is counted. */
async function afterPhase(store: Store): Promise<{ lagAtEnd: number; drainMs: number }> {
  if (store === "memory") {
    await sleep(USAGE_FLUSH_WAIT_MS);
    return { lagAtEnd: 0, drainMs: 0 };
  }
  const lagAtEnd = await lag();
  return { lagAtEnd, drainMs: await drained() };
}

async function checkAnswers() {
  for (const kind of KINDS) {
    for (const store of STORES) {
      const target = TARGETS[kind];
      const response = await fetch(gateways[store].url + target.path, { method: "POST", headers: target.headers, body: target.body });
      const text = await response.text();
      const content = completionContent(text);
      if (response.status !== 200 || content !== EXPECTED_CONTENT) throw new Error(`${store}/${kind}: HTTP ${response.status}: ${text.slice(0, 500)}`);
      const remaining = response.headers.get("x-ratelimit-remaining-requests");
      const tokens = response.headers.get("x-ratelimit-remaining-tokens");
      if (remaining === null || tokens === null) throw new Error(`${store}/${kind}: no x-ratelimit-* headers: the rate windows are not exercised`);
      served[store][kind]++;
      log(`${store}/${kind}: 200 "${content}", x-ratelimit-remaining-requests ${remaining}, -tokens ${tokens}`);
    }
  }
  await drained();
}

/** One answer's status and start, for an error report. */
async function sampleAnswer(store: Store, kind: Kind): Promise<string> {
  const target = TARGETS[kind];
  const response = await fetch(gateways[store].url + target.path, { method: "POST", headers: target.headers, body: target.body });
  return `HTTP ${response.status} ${(await response.text()).slice(0, 300)}`;
}

interface MonitorSample {
  requests: number;
  admissions: number;
  settlements: number;
  otherScripts: number;
  batches: number;
  batchedCommands: number;
  otherTopLevel: string[];
  insideAdmission: number;
  insideSettlement: number;
  /** The commands of the first admission and settlement, in order. */
  admissionSequence: string[];
  settlementSequence: string[];
  /** Median size of the JSON payload of an admission and a settlement (unescaped, bytes). */
  admissionPayloadBytes: number;
  settlementPayloadBytes: number;
}

/** A MONITOR recording of `count` sequential requests to the Redis gateway, every command classified. */
async function monitorSample(kind: Kind, count: number): Promise<MonitorSample> {
  await drained();
  const recording = await startMonitor(redisPort);
  const result = await latencyRun(sequential.redis, TARGETS[kind], count, 30_000);
  served.redis[kind] += result.samples.length;
  if (result.errors) throw new Error(`monitor sample ${kind}: ${result.errors} errors`);
  await drained();
  const lines = await recording.stop();
  const sample: MonitorSample = {
    requests: count, admissions: 0, settlements: 0, otherScripts: 0, batches: 0, batchedCommands: 0, otherTopLevel: [],
    insideAdmission: 0, insideSettlement: 0, admissionSequence: [], settlementSequence: [], admissionPayloadBytes: 0, settlementPayloadBytes: 0,
  };
  const admissionBytes: number[] = [];
  const settlementBytes: number[] = [];
  let current: "admission" | "settlement" | "other" | undefined;
  let inMulti = false;
  for (const line of lines) {
    const match = /^\d+\.\d+ \[\d+ ([^\]]+)\] "([^"]+)"(.*)$/.exec(line);
    if (!match) continue;
    const [, source, rawName, args] = match;
    const name = rawName.toLowerCase();
    if (name === "info") continue;
    if (source === "lua") {
      if (current === "admission") {
        sample.insideAdmission++;
        if (sample.admissions === 1) sample.admissionSequence.push(rawName.toUpperCase());
      } else if (current === "settlement") {
        sample.insideSettlement++;
        if (sample.settlements === 1) sample.settlementSequence.push(rawName.toUpperCase());
      }
      continue;
    }
    if (inMulti) {
      if (name === "exec") {
        inMulti = false;
        sample.batches++;
      } else sample.batchedCommands++;
      continue;
    }
    if (name === "multi") {
      inMulti = true;
      continue;
    }
    if (name === "evalsha" || name === "eval") {
      // The payload is the last argument: JSON, quoted and escaped by MONITOR.
      const payload = /"((?:[^"\\]|\\.)*)"\s*$/.exec(args)?.[1].replace(/\\(.)/g, "$1") ?? "";
      if (payload.includes('"digest":') && payload.includes('"charge":')) {
        current = "admission";
        sample.admissions++;
        admissionBytes.push(Buffer.byteLength(payload));
      } else if (payload.includes('"chargeNanos":')) {
        current = "settlement";
        sample.settlements++;
        settlementBytes.push(Buffer.byteLength(payload));
      } else {
        current = "other";
        sample.otherScripts++;
      }
      continue;
    }
    current = undefined;
    sample.otherTopLevel.push(rawName.toUpperCase());
  }
  sample.admissionPayloadBytes = median(admissionBytes);
  sample.settlementPayloadBytes = median(settlementBytes);
  return sample;
}

/** CPU used so far by this benchmark's processes (itself, the gateways, redis-server), in µs. */
async function ownCpu(): Promise<number> {
  const own = process.cpuUsage();
  return own.user + own.system + (await gateways.memory.cpuMicros()) + (await gateways.redis.cpuMicros()) + (await serverCpuMicros(resp!));
}

interface Noise {
  /** CPU other processes of the machine used during the measured rounds, in core-seconds and as a share of the machine. */
  otherCoreSeconds: number;
  otherShare: number;
  seconds: number;
  loadBefore: number[];
}

interface ScriptTimes {
  /** Microseconds Redis spent in each script call (SLOWLOG with a 0 µs threshold). */
  admission: number[];
  settlement: number[];
}

/** `count` sequential requests to the Redis gateway with every command logged to SLOWLOG: how long Redis runs each script. */
async function scriptTimes(kind: Kind, count: number): Promise<ScriptTimes> {
  await drained();
  const setting = async (name: string) => ((await resp!.command("CONFIG", "GET", name)) as string[])[1];
  const threshold = await setting("slowlog-log-slower-than");
  const length = await setting("slowlog-max-len");
  await resp!.command("CONFIG", "SET", "slowlog-max-len", String(8 * count + 1024));
  await resp!.command("SLOWLOG", "RESET");
  await resp!.command("CONFIG", "SET", "slowlog-log-slower-than", "0");
  const result = await latencyRun(sequential.redis, TARGETS[kind], count, 30_000);
  served.redis[kind] += result.samples.length;
  await drained();
  await resp!.command("CONFIG", "SET", "slowlog-log-slower-than", threshold);
  const entries = (await resp!.command("SLOWLOG", "GET", String(8 * count + 1024))) as [number, number, number, string[]][];
  await resp!.command("SLOWLOG", "RESET");
  await resp!.command("CONFIG", "SET", "slowlog-max-len", length);
  const times: ScriptTimes = { admission: [], settlement: [] };
  for (const [, , micros, args] of entries) {
    if (String(args[0]).toLowerCase() !== "evalsha") continue;
    // The payload (the last argument; SLOWLOG keeps its first 128 characters) tells the two apart.
    const payload = String(args.at(-1));
    if (payload.startsWith('{"digest":')) times.admission.push(micros);
    else if (payload.includes('"chargeNanos":')) times.settlement.push(micros);
  }
  return times;
}

/** The loopback floor: PING round trips from this process to redis-server, in ms. */
async function pingRoundTrips(count: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await resp!.command("PING");
    samples.push(performance.now() - started);
  }
  return samples;
}

async function main() {
  baseline = await commandStats(resp!);
  await checkAnswers();
  log(`answers checked; warming up ${settings.warmupSeconds} s at concurrency ${settings.concurrency} plus ${WARMUP_SEQUENTIAL} sequential requests per store and kind`);
  for (const kind of KINDS) {
    for (const store of STORES) {
      const { load: warm, sequential: seq } = await warmUp(concurrent[store], sequential[store], TARGETS[kind], settings.warmupSeconds, settings.rpsMax);
      if (warm.errors || seq.errors) throw new Error(`warm-up ${store}/${kind}: ${warm.errors + seq.errors} errors; one answer now: ${await sampleAnswer(store, kind)}`);
      served[store][kind] += warm.completed + seq.samples.length;
      if (store === "redis") await drained();
    }
  }

  const monitor = {} as Record<Kind, MonitorSample>;
  for (const kind of KINDS) {
    monitor[kind] = await monitorSample(kind, settings.monitorRequests);
    const m = monitor[kind];
    log(`MONITOR ${kind}: ${m.requests} requests, ${m.admissions} admission EVALSHA, ${m.settlements} settlement EVALSHA, ${m.batches} usage batches, other top-level: ${m.otherTopLevel.length + m.otherScripts}`);
  }

  const scripts = {} as Record<Kind, ScriptTimes>;
  for (const kind of KINDS) {
    scripts[kind] = await scriptTimes(kind, settings.monitorRequests);
    log(`SLOWLOG ${kind}: admission script p50 ${median(scripts[kind].admission)} µs, settlement script p50 ${median(scripts[kind].settlement)} µs`);
  }
  const ping = await pingRoundTrips(2000);
  log(`PING round trip from Node: p50 ${fmt(percentile(ping, 50) * 1000, 0)} µs`);

  const stats: Record<Kind, Record<Store, Stats>> = {
    paid: { memory: emptyStats(), redis: emptyStats() },
    free: { memory: emptyStats(), redis: emptyStats() },
  };
  const loadBefore = os.loadavg();
  const machineBefore = machineCpu();
  const ownBefore = await ownCpu();
  const roundsStarted = performance.now();
  const roundNoise: number[] = [];
  for (let round = 1; round <= settings.rounds; round++) {
    const roundMachine = machineCpu();
    const roundOwn = await ownCpu();
    // ABBA: memory first in odd rounds, Redis first in even ones, so drift cancels.
    const order: Store[] = round % 2 ? ["memory", "redis"] : ["redis", "memory"];
    const line: string[] = [];
    for (const kind of KINDS) {
      for (const store of order) {
        const s = stats[kind][store];
        const { result, before, after } = await measuredPhase(settings.settleMs, () => snapshot(store), async () => {
          const latency = await latencyRun(sequential[store], TARGETS[kind], settings.requests, 30_000);
          await afterPhase(store);
          return latency;
        });
        addLatency(s, result);
        s.gatewayCpuSequential += after.gateway - before.gateway;
        s.redisCpuSequential += after.redis - before.redis;
        addCounts(s.countsSequential, countsDelta(before.counts, after.counts));
        served[store][kind] += result.samples.length;
      }
      for (const store of order) {
        const s = stats[kind][store];
        const phase = await measuredPhase(settings.settleMs, () => snapshot(store), async () => {
          const throughput = await throughputRun(concurrent[store], TARGETS[kind], settings.rpsMax, settings.rpsSeconds * 1000);
          return { throughput, ...(await afterPhase(store)) };
        });
        const { before, after } = phase;
        const { throughput: result, lagAtEnd, drainMs } = phase.result;
        addThroughput(s, result);
        s.gatewayCpuConcurrent += after.gateway - before.gateway;
        s.redisCpuConcurrent += after.redis - before.redis;
        s.clientCpuConcurrent += after.client - before.client;
        addCounts(s.countsConcurrent, countsDelta(before.counts, after.counts));
        s.rpsWithDrain.push(result.completed / (result.seconds + drainMs / 1000));
        if (store === "redis") {
          s.lagAtEnd.push(lagAtEnd);
          s.drainMs.push(drainMs);
          s.settleRate.push((result.completed + result.errors - lagAtEnd) / result.seconds);
        }
        served[store][kind] += result.completed;
      }
      line.push(
        `${kind}: p50 memory ${fmt(stats[kind].memory.roundP50.at(-1)!, 3)} / redis ${fmt(stats[kind].redis.roundP50.at(-1)!, 3)} ms, ` +
          `rps ${fmt(stats[kind].memory.rps.at(-1)!, 0)} / ${fmt(stats[kind].redis.rps.at(-1)!, 0)}`,
      );
    }
    const roundMachineAfter = machineCpu();
    const others = roundMachine && roundMachineAfter ? (roundMachineAfter.busy - roundMachine.busy - ((await ownCpu()) - roundOwn)) / (roundMachineAfter.total - roundMachine.total) : Number.NaN;
    roundNoise.push(others);
    log(`round ${round}/${settings.rounds}: ${line.join("; ")}; other processes ${fmt(100 * others, 0)} % of the machine`);
  }

  const machineAfter = machineCpu();
  const ownAfter = await ownCpu();
  const roundsSeconds = (performance.now() - roundsStarted) / 1000;
  const noise: Noise | undefined =
    machineBefore && machineAfter
      ? {
          otherCoreSeconds: (machineAfter.busy - machineBefore.busy - (ownAfter - ownBefore)) / 1e6,
          otherShare: (machineAfter.busy - machineBefore.busy - (ownAfter - ownBefore)) / (machineAfter.total - machineBefore.total),
          seconds: roundsSeconds,
          loadBefore,
        }
      : undefined;
  if (noise) log(`other processes used ${fmt(noise.otherCoreSeconds, 1)} core-seconds (${fmt(100 * noise.otherShare, 1)} % of the machine) during the ${fmt(roundsSeconds, 0)} s of rounds`);

  // Sanity: what Redis holds must match what was served.
  await drained();
  const sanity = await redisSanity();
  const totalSeconds = (performance.now() - runStarted) / 1000;
  await writeReport("accounts.md", renderReport(stats, monitor, scripts, ping, sanity, noise, roundNoise, totalSeconds), totalSeconds);
}

interface Sanity {
  pendingHolds: number;
  freeUsed: number;
  freeServed: number;
  spentNanos: bigint;
  paidServed: number;
}

async function redisSanity(): Promise<Sanity> {
  const pending = await resp!.command("KEYS", "rtr:req:*");
  const day = new Date().toISOString().slice(0, 10);
  const freeUsed = Number((await resp!.command("GET", `rtr:free:${ORG_ID}:${MODEL_ID}:${day}`)) ?? 0);
  const balance = BigInt(String((await resp!.command("GET", `rtr:balance:${ORG_ID}`)) ?? "0"));
  return {
    pendingHolds: Array.isArray(pending) ? pending.length : -1,
    freeUsed,
    freeServed: served.redis.free,
    spentNanos: BigInt(CREDITS_USD) * 1_000_000_000n - balance,
    paidServed: served.redis.paid,
  };
}

// ---- the report ----

function commandLine(): string {
  const args = process.argv.slice(2).join(" ");
  const viaSuite = path.basename(process.argv[1] ?? "") === "gateway-overhead.ts";
  return (viaSuite ? "npm run bench -- --suite accounts" : "npx node bench/accounts-overhead.ts") + (args ? ` ${args}` : "");
}

/** Which commands run where: top-level from the gateway, or inside its scripts. */
const TOP_LEVEL = new Set(["evalsha", "eval", "multi", "exec"]);
const BATCHED = new Set(["lpush", "ltrim"]);

function renderReport(
  stats: Record<Kind, Record<Store, Stats>>,
  monitor: Record<Kind, MonitorSample>,
  scripts: Record<Kind, ScriptTimes>,
  ping: number[],
  sanity: Sanity,
  noise: Noise | undefined,
  roundNoise: number[],
  totalSeconds: number,
): string {
  const c = settings.concurrency;
  const out: string[] = [];
  out.push(`# Accounts overhead benchmark`, "");
  out.push(
    environmentLine([`redis-server ${redisVersion}`]),
    "",
    `Command: \`${commandLine()}\`. Run time ${fmt(totalSeconds, 0)} s.` +
      (noise
        ? ` Machine noise: other processes used ${fmt(noise.otherCoreSeconds, 1)} core-seconds during the ${fmt(noise.seconds, 0)} s of measured rounds (${fmt(100 * noise.otherShare, 1)} % of the machine's CPU; load average when they began ${noise.loadBefore.map((l) => l.toFixed(2)).join(" ")}).`
        : ""),
    "",
    `Two gateways of this tree (\`gateway/main.ts\`, the \`npm start\` entry point, each its own process, LOG_LEVEL=${settings.logLevel}), same temporary config: ` +
      `model \`${MODEL_ID}\` on the built-in simulator (echo, no delay: no upstream cost), organisation with ${CREDITS_USD} credits and rpm/tpm ${HUGE_LIMIT} on it and on its key, free daily quota ${HUGE_LIMIT}. ` +
      `**memory**: in-memory stores; **redis**: REDIS_URL to a private redis-server started by the benchmark (\`--save "" --appendonly no\`, loopback). ` +
      `Requests: \`{"model": "${MODEL_ID}" or "${MODEL_ID}:free", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 16}\`, non-streaming.`,
    "",
    `${settings.rounds} interleaved rounds (memory and redis alternate, ABBA); per round, kind and store: ${settings.requests} sequential requests (concurrency 1), then concurrency ${c} for ${settings.rpsSeconds} s. ` +
      `Warm-up ${settings.warmupSeconds} s at concurrency ${c} plus ${WARMUP_SEQUENTIAL} sequential requests per store and kind. ` +
      `After each Redis phase the benchmark waits until every admitted request is settled and its usage record written (INFO commandstats), and counts that background work's CPU and commands in the phase; after each memory phase it waits ${USAGE_FLUSH_WAIT_MS} ms (the usage log's 50 ms flush).`,
    "",
  );

  const checks: string[] = [];
  for (const kind of KINDS) {
    const m = stats[kind].memory;
    const r = stats[kind].redis;
    const mp50 = percentile(m.latency, 50);
    const rp50 = percentile(r.latency, 50);
    const mp99 = percentile(m.latency, 99);
    const rp99 = percentile(r.latency, 99);
    const perRoundAdded = r.roundP50.map((p, i) => p - m.roundP50[i]);
    const cpu = (s: Stats) => ({
      gwSeq: s.gatewayCpuSequential / s.latencyRequests,
      gwConc: s.gatewayCpuConcurrent / s.throughputRequests,
      redisSeq: s.redisCpuSequential / s.latencyRequests,
      redisConc: s.redisCpuConcurrent / s.throughputRequests,
      client: s.clientCpuConcurrent / s.throughputRequests,
    });
    const mc = cpu(m);
    const rc = cpu(r);
    out.push(`## ${kind === "paid" ? "Paid request (credit hold, then settlement with the real cost)" : "Free request (`:free`, one unit of the daily quota)"}`, "");
    out.push(
      `| store | p50 ms | p99 ms | p50 per round, min–max | gateway CPU µs/req c=1 | gateway CPU µs/req c=${c} | redis-server CPU µs/req c=${c} | total CPU µs/req c=${c} | RPS c=${c} (median) | RPS min–max | RPS c=${c} incl. settlement drain | errors |`,
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    );
    for (const [store, s, p50, p99, sc] of [
      ["memory", m, mp50, mp99, mc],
      ["redis", r, rp50, rp99, rc],
    ] as const) {
      out.push(
        `| ${store} | ${fmt(p50, 3)} | ${fmt(p99, 3)} | ${range(s.roundP50, 3)} | ${fmt(sc.gwSeq, 0)} | ${fmt(sc.gwConc, 0)} | ${store === "memory" ? "—" : fmt(sc.redisConc, 0)} | ${fmt(sc.gwConc + sc.redisConc, 0)} | ${fmt(median(s.rps), 0)} | ${range(s.rps, 0)} | ${fmt(median(s.rpsWithDrain), 0)} | ${s.latencyErrors + s.throughputErrors}/${s.latencyRequests + s.throughputRequests} |`,
      );
    }
    out.push("");
    out.push(
      `**Redis over memory:** added p50 **${signed(rp50 - mp50, 3)} ms** (per round ${range(perRoundAdded, 3, " to ")}), added p99 **${signed(rp99 - mp99, 3)} ms**, ` +
        `RPS c=${c} ${fmt(median(r.rps), 0)} vs ${fmt(median(m.rps), 0)} (${signed((100 * (median(r.rps) - median(m.rps))) / median(m.rps), 1)} %), ` +
        `CPU per request c=${c}: gateway ${signed(rc.gwConc - mc.gwConc, 0)} µs, plus redis-server ${fmt(rc.redisConc, 0)} µs, total ${signed(rc.gwConc + rc.redisConc - mc.gwConc, 0)} µs ` +
        `(c=1: gateway ${signed(rc.gwSeq - mc.gwSeq, 0)} µs, redis-server ${fmt(rc.redisSeq, 0)} µs). ` +
        `RPS including the settlement drain after the load (the work the Redis gateway defers): ${fmt(median(r.rpsWithDrain), 0)} vs ${fmt(median(m.rpsWithDrain), 0)} (${signed((100 * (median(r.rpsWithDrain) - median(m.rpsWithDrain))) / median(m.rpsWithDrain), 1)} %). ` +
        `Load generator CPU per request c=${c} (context): memory ${fmt(mc.client, 0)} µs, redis ${fmt(rc.client, 0)} µs.`,
      "",
    );

    // Redis commands per request.
    const seqF = fingerprints(r.countsSequential);
    const concF = fingerprints(r.countsConcurrent);
    const per = (n: number, requests: number) => fmt(n / requests, 3);
    const seqN = r.latencyRequests;
    const concN = r.throughputRequests;
    const scriptUsec = (counts: Counts) => {
      const e = counts.get("evalsha") ?? { calls: 0, usec: 0 };
      return e.calls ? e.usec / e.calls : Number.NaN;
    };
    const insideScripts = (counts: Counts) => {
      let n = 0;
      for (const [name, cc] of counts) if (!TOP_LEVEL.has(name) && !BATCHED.has(name)) n += cc.calls;
      // Each usage record's SET is sent in the MULTI batch (top-level); no script on this path runs SET.
      return n - calls(counts, "lpush");
    };
    out.push(
      `Redis commands per request (INFO commandstats over all timed phases: ${seqN} requests at c=1, ${concN} at c=${c}; settlements and usage batches included, as the benchmark waits for them):`,
      "",
      `| | where | c=1 | c=${c} |`,
      "| --- | --- | ---: | ---: |",
      `| admission EVALSHA (EXISTS inside the admission script) | **hot path**, awaited before dispatch | ${per(seqF.admissions, seqN)} | ${per(concF.admissions, concN)} |`,
      `| settlement EVALSHA (batched: all scripts but the admissions) | background, not awaited | ${per(seqF.settlementScripts, seqN)} | ${per(concF.settlementScripts, concN)} |`,
      `| requests settled (DEL inside the settlement script); 1.000 expected | | ${per(seqF.settlements, seqN)} | ${per(concF.settlements, concN)} |`,
      `| usage-log MULTI/EXEC batches (one round trip each) | background, batched every 50 ms | ${per(seqF.batches, seqN)} | ${per(concF.batches, concN)} |`,
      `| usage records per batch | | ${fmt(seqF.records / seqF.batches, 1)} | ${fmt(concF.records / concF.batches, 1)} |`,
      `| usage records written (LPUSH) per request; 1.000 expected | | ${per(seqF.records, seqN)} | ${per(concF.records, concN)} |`,
      `| round trips in all (scripts + batches) | | ${per(seqF.admissions + seqF.settlementScripts + seqF.batches, seqN)} | ${per(concF.admissions + concF.settlementScripts + concF.batches, concN)} |`,
      `| commands run inside the scripts | | ${per(insideScripts(r.countsSequential), seqN)} | ${per(insideScripts(r.countsConcurrent), concN)} |`,
      `| Redis time per script call, µs (admission and settlement mixed) | | ${fmt(scriptUsec(r.countsSequential), 1)} | ${fmt(scriptUsec(r.countsConcurrent), 1)} |`,
      "",
      `Settlement lag at c=${c}: when the load stopped, ${fmt(median(r.lagAtEnd), 0)} requests (median of rounds; ${range(r.lagAtEnd, 0)}) were admitted but not yet settled; ` +
        `settling them and writing their usage took ${fmt(median(r.drainMs), 0)} ms more (${range(r.drainMs, 0)}). ` +
        `During the load the gateway settled ${fmt(median(r.settleRate), 0)} requests/s while it admitted ${fmt(median(r.rps), 0)}/s: settlements go to Redis in batches of up to 64, each after at most 5 ms (core/accounts/settlement-queue.ts).`,
      "",
    );
    out.push(`Every command per request at c=${c}:`, "", `| command | calls/req | µs per call (Redis side) |`, "| --- | ---: | ---: |");
    for (const [name, cc] of [...r.countsConcurrent].sort((a, b) => b[1].calls - a[1].calls)) {
      out.push(`| ${name} | ${fmt(cc.calls / concN, 3)} | ${fmt(cc.usec / cc.calls, 2)} |`);
    }
    out.push("");

    const mon = monitor[kind];
    const hotPath = mon.admissions + mon.otherScripts + mon.otherTopLevel.length;
    out.push(
      `MONITOR sample (${mon.requests} sequential requests, not timed): top-level commands from the gateway: ${mon.admissions} admission EVALSHA, ${mon.settlements} settlement EVALSHA, ` +
        `${mon.otherScripts} other scripts, ${mon.batches} MULTI/EXEC usage batches (${mon.batchedCommands} commands inside), ${mon.otherTopLevel.length} other commands${mon.otherTopLevel.length ? ` (${[...new Set(mon.otherTopLevel)].join(", ")})` : ""}. ` +
        `Inside one admission: ${fmt(mon.insideAdmission / Math.max(1, mon.admissions), 1)} commands (${mon.admissionSequence.join(" ")}); inside one settlement: ${fmt(mon.insideSettlement / Math.max(1, mon.settlements), 1)} (${mon.settlementSequence.join(" ")}). ` +
        `Payload JSON: admission ${fmt(mon.admissionPayloadBytes, 0)} B, settlement ${fmt(mon.settlementPayloadBytes, 0)} B.`,
      "",
    );

    const st = scripts[kind];
    out.push(
      `Redis-side time of one script call (SLOWLOG at a 0 µs threshold, ${settings.monitorRequests} sequential requests, not timed): admission p50 ${fmt(median(st.admission), 0)} µs (p99 ${fmt(percentile(st.admission, 99), 0)}), ` +
        `settlement p50 ${fmt(median(st.settlement), 0)} µs (p99 ${fmt(percentile(st.settlement, 99), 0)}). For scale: a PING round trip from Node to this redis-server, p50 ${fmt(percentile(ping, 50) * 1000, 0)} µs.`,
      "",
    );

    const hotPerRequest = hotPath / mon.requests;
    // Admission scripts per request; the MONITOR sample shows nothing else is awaited.
    const hotStats = seqF.admissions / seqN;
    const hotStatsConc = concF.admissions / concN;
    checks.push(
      `| ${kind}: at most one Redis round trip per request on the hot path | MONITOR: ${fmt(hotPerRequest, 3)}/req (admission EVALSHA only; the settlement EVALSHA, ${fmt(mon.settlements / mon.requests, 3)}/req, and ${fmt(mon.batches / mon.requests, 3)} usage batches/req are background); commandstats: ${fmt(hotStats, 3)} (c=1), ${fmt(hotStatsConc, 3)} (c=${c}) | ${verdict(hotPerRequest <= 1 && hotStats <= 1 && hotStatsConc <= 1)} |`,
      `| ${kind}: Redis adds at most 0.2 ms to p50 (c=1) | ${signed(rp50 - mp50, 3)} ms (${fmt(mp50, 3)} → ${fmt(rp50, 3)} ms; per round ${range(perRoundAdded, 3, " to ")}) | ${verdict(rp50 - mp50 <= 0.2)} |`,
    );
  }
  out.push(
    "## Per round",
    "",
    "Added p50 per round (redis minus memory, c=1) next to how much of the machine other processes used in that round: the quiet rounds show the floor.",
    "",
    `| round | other processes, % of machine | ${KINDS.map((k) => `${k}: memory p50 ms | ${k}: redis p50 ms | ${k}: added ms`).join(" | ")} |`,
    `| ---: | ---: | ${KINDS.map(() => "---: | ---: | ---:").join(" | ")} |`,
    ...roundNoise.map(
      (others, i) =>
        `| ${i + 1} | ${fmt(100 * others, 0)} | ${KINDS.map((k) => `${fmt(stats[k].memory.roundP50[i], 3)} | ${fmt(stats[k].redis.roundP50[i], 3)} | ${signed(stats[k].redis.roundP50[i] - stats[k].memory.roundP50[i], 3)}`).join(" | ")} |`,
    ),
    "",
  );
  out.push(...targetsSection(checks));
  const paidCost = sanity.paidServed ? Number(sanity.spentNanos) / sanity.paidServed : Number.NaN;
  out.push(
    `Sanity (Redis after the run, every request settled): ${sanity.pendingHolds} admitted requests left unsettled; today's free counter ${sanity.freeUsed} for ${sanity.freeServed} free answers served by the Redis gateway; ` +
      `${sanity.spentNanos} nano-USD spent for ${sanity.paidServed} paid answers (${fmt(paidCost, 1)} nano-USD each, so every hold was released down to the real cost).`,
    "",
    "Added = redis minus memory, on the pooled samples of all rounds. CPU = user+system CPU of the gateway process (process.cpuUsage over IPC) and of redis-server (INFO cpu), from the start of a phase until its background work is done, divided by the phase's requests. " +
      "On a 2-core machine the load generator, the gateway and redis-server share the CPUs, so RPS compares the stores; it is not a capacity figure.",
    "",
  );
  return out.join("\n");
}

// ---- run (last, so every declaration above is initialised) ----

let exitCode = 0;
try {
  await main();
} catch (error) {
  log(`benchmark failed: ${(error as Error).stack ?? error}`);
  exitCode = 1;
}
await run.cleanup();
process.exitCode = exitCode;
