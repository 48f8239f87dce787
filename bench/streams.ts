// Streams benchmark (`npm run bench -- --suite streams`): time to the first token
// with a thousand streams open at once to one provider, through the gateway and
// through the bare proxy (the floor), measured in the same run.
//
// One upstream (stream-upstream.ts, its own process) answers every request with
// a long stream: the first token at once, then a token every 250 ms, 12 tokens
// (3 s). Per round and path, 1 000 streams are opened at an even pace over 1 s,
// so all are open together for about 2 s; each is timed from its send to its
// first token ("Hello") and to its [DONE]. Paths, in turn (order reversed every
// other round): direct (client -> upstream), floor (client -> floor-proxy.ts ->
// upstream), gateway (client -> gateway/main.ts -> upstream), and with
// --candidate DIR the gateway of another checkout. The upstream's own count of
// open streams (GET /stats) shows whether they were concurrent there.
// Target: the gateway's first-token p99 within 2x of the floor's.
//
// Options: --rounds N (4)  --streams N (1000)  --ramp-ms MS (1000)  --tokens N (12)
//   --token-interval-ms MS (250)  --candidate DIR  --log-level L (silent)  --quick (2 rounds)
//   --heap-snapshot (heap snapshots of the floor and each gateway at the peak of its first measured
//   phase and idle after it; bench/heap-diff.ts gives what each open stream keeps)
//   --profile (the floor and each gateway under --cpu-prof; profiles in bench/results/profiles/streams-<name>/)
//   --timeline (per phase on stderr: slow first tokens per tenth of the ramp and the hop's GC pauses over 2 ms)
//   --alloc-profile (each gateway's allocations, sampled, into bench/results/profiles/streams-<name>.heapprofile;
//   bench/alloc-summary.ts lists them per stream)
// Report: stdout and bench/results/streams.md (or --out NAME); progress on stderr.
import { mkdirSync, readFileSync } from "node:fs";
import http from "node:http";
import { json } from "node:stream/consumers";
import { performance } from "node:perf_hooks";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { startChild, type Child, type ProbeStats } from "./children.ts";
import { timelineLine } from "./stream-timeline.ts";
import { BENCH_UPSTREAM_ENV, oneUpstreamConfig, startGateway, writeGatewayConfig } from "./gateway-child.ts";
import { createClient, percentile, type Client, type Target } from "./load.ts";
import { machineCpu } from "./machine-cpu.ts";
import { int, requireNode24 } from "./options.ts";
import { environmentLine, fmt, log, range, RESULTS_DIR, ROOT, targetsSection, verdict, writeReport } from "./report.ts";
import { RunResources } from "./resources.ts";
import { FIRST_TOKEN, streamRun, type StreamResult } from "./stream-load.ts";

requireNode24("npm run bench -- --suite streams", "bench/streams.ts");

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string" },
    streams: { type: "string" },
    "ramp-ms": { type: "string" },
    tokens: { type: "string" },
    "token-interval-ms": { type: "string" },
    candidate: { type: "string" },
    "log-level": { type: "string", default: "silent" },
    out: { type: "string", default: "streams.md" },
    quick: { type: "boolean", default: false },
    "heap-snapshot": { type: "boolean", default: false },
    timeline: { type: "boolean", default: false },
    "alloc-profile": { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
  },
});
const settings = {
  rounds: int(flags.rounds, flags.quick ? 2 : 4),
  streams: int(flags.streams, 1000),
  rampMs: int(flags["ramp-ms"], 1000),
  tokens: int(flags.tokens, 12),
  tokenIntervalMs: int(flags["token-interval-ms"], 250),
  logLevel: flags["log-level"],
  settleMs: 300,
};
/** Idle: the benchmark's processes used under this share of one core over a window of this length. */
const QUIET_WINDOW_MS = 200;
const QUIET_SHARE = 0.05;
/** A stream's expected length; a phase is cut off well after it. */
const streamMs = settings.tokens * settings.tokenIntervalMs;
const phaseLimitMs = settings.rampMs + streamMs + 20_000;

type PathName = "direct" | "floor" | "gateway" | "candidate";
const CANDIDATE_ROOT = flags.candidate ? path.resolve(flags.candidate) : undefined;
const PATHS: PathName[] = CANDIDATE_ROOT ? ["direct", "floor", "gateway", "candidate"] : ["direct", "floor", "gateway"];

// This process keeps a warm connection per stream for every path; Node cannot raise its own limit.
const descriptorsNeeded = PATHS.length * settings.streams + 200;
const descriptorLimit = openFileLimit();
if (descriptorLimit !== undefined && descriptorLimit < descriptorsNeeded) {
  process.stderr.write(`--streams ${settings.streams} needs about ${descriptorsNeeded} open files and the limit is ${descriptorLimit}: run \`ulimit -n ${descriptorsNeeded}\` first.\n`);
  process.exit(1);
}

/** The soft limit of open files of this process (Linux /proc/self/limits; undefined elsewhere or unlimited). */
function openFileLimit(): number | undefined {
  try {
    const line = readFileSync("/proc/self/limits", "utf8").split("\n").find((l) => l.startsWith("Max open files"));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    return Number.isFinite(soft) ? soft : undefined;
  } catch {
    return undefined;
  }
}
const DEV_KEY = "sk-rtr-bench-0123456789abcdef";
const MODEL_ID = "bench/stream";

function targetFor(name: PathName): Target {
  const viaGateway = name === "gateway" || name === "candidate";
  return {
    name,
    path: viaGateway ? "/api/v1/chat/completions" : "/v1/chat/completions",
    headers: { "content-type": "application/json", authorization: `Bearer ${DEV_KEY}` },
    body: JSON.stringify({ model: viaGateway ? MODEL_ID : "bench-model", messages: [{ role: "user", content: "hi" }], max_tokens: 64, stream: true }),
  };
}

const run = new RunResources();
const runStarted = performance.now();
const tempDir = await run.makeTempDir("rtr-bench-streams-");
const upstream = await startChild({
  name: "stream upstream",
  module: new URL("./stream-upstream.ts", import.meta.url),
  env: { BENCH_STREAM_TOKENS: String(settings.tokens), BENCH_TOKEN_INTERVAL_MS: String(settings.tokenIntervalMs) },
  ready: { ipc: true },
});
run.children.push(upstream);
const profileDir = (name: string) => path.join(RESULTS_DIR, "profiles", `streams-${name}`);
const profileArgs = (name: string) => (flags.profile ? ["--cpu-prof", "--cpu-prof-dir", profileDir(name)] : []);
const floor = await startChild({
  name: "floor proxy",
  module: new URL("./floor-proxy.ts", import.meta.url),
  env: { BENCH_UPSTREAM_URL: upstream.url },
  execArgv: profileArgs("floor"),
  ready: { ipc: true },
});
run.children.push(floor);
const configPath = await writeGatewayConfig(tempDir, oneUpstreamConfig(upstream.url, MODEL_ID, "Bench stream"));
if (flags["heap-snapshot"] || flags["alloc-profile"]) mkdirSync(path.join(RESULTS_DIR, "profiles"), { recursive: true });
const allocationProfileEnv = (name: string): Record<string, string> =>
  flags["alloc-profile"] ? { BENCH_ALLOC_PROFILE: path.join(RESULTS_DIR, "profiles", `streams-${name}.heapprofile`) } : {};
const startGatewayOf = (name: string, root: string) =>
  startGateway({
    name,
    root,
    configPath,
    devKey: DEV_KEY,
    logLevel: settings.logLevel,
    env: { ...BENCH_UPSTREAM_ENV, ...allocationProfileEnv(name) },
    execArgv: profileArgs(name),
  });
const gateway = await startGatewayOf("gateway", ROOT);
run.children.push(gateway);
const candidate = CANDIDATE_ROOT ? await startGatewayOf("candidate", CANDIDATE_ROOT) : undefined;
if (candidate) run.children.push(candidate);

const hopOf: Record<PathName, Child | undefined> = { direct: undefined, floor, gateway, candidate };
const originOf: Record<PathName, string> = { direct: upstream.url, floor: floor.url, gateway: gateway.url, candidate: candidate?.url ?? "" };
// One client per path with a connection for every stream, kept warm across rounds.
const clients = Object.fromEntries(PATHS.map((name) => [name, createClient(originOf[name], settings.streams)])) as Record<PathName, Client>;
run.clients.push(...Object.values(clients));
log(`upstream ${upstream.url}, floor ${floor.url}, gateway ${gateway.url}` + (candidate ? `, candidate ${candidate.url} (${CANDIDATE_ROOT})` : ""));

interface Tally {
  firstToken: number[];
  duration: number[];
  roundP99: number[];
  errors: number;
  streams: number;
  /** Most streams open at once at the upstream, per round. */
  upstreamPeak: number[];
  /** Connections the upstream accepted during the phases (0 once the hop's pool is warm). */
  upstreamConnections: number;
  hopCpuMicros: number;
  /** The hop's GC pauses, event-loop stalls and peak heap, per round (cpu-probe.ts). */
  hopStats: ProbeStats[];
  /** Share of the machine's CPU that other processes (not this benchmark's) used, per round. */
  otherShare: number[];
}

const emptyTally = (): Tally => ({ firstToken: [], duration: [], roundP99: [], errors: 0, streams: 0, upstreamPeak: [], upstreamConnections: 0, hopCpuMicros: 0, hopStats: [], otherShare: [] });
const tallies = Object.fromEntries(PATHS.map((name) => [name, emptyTally()])) as Record<PathName, Tally>;

try {
  await main();
} catch (error) {
  log(`benchmark failed: ${(error as Error).stack ?? error}`);
  await run.cleanup();
  process.exit(1);
}

async function upstreamStats(): Promise<{ open: number; peak: number; connections: number }> {
  // A connection of its own each time (agent: false), so that the count of new connections knows it is one.
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(`${upstream.url}/stats`, { agent: false }, resolve).on("error", reject));
  return (await json(response)) as { open: number; peak: number; connections: number };
}

/**
 * Waits (bounded) until the upstream has no stream open and the benchmark's processes are idle, then
 * the settle pause. Without the second wait, a hop's collection of its last phase's garbage (a major
 * GC of some 100 MiB, on its helper threads) ran into the next path's phase on this 2-core machine:
 * whichever path came right after a gateway had a p99 several times its own.
 */
async function settle() {
  const deadline = performance.now() + 10_000;
  while ((await upstreamStats()).open > 0 && performance.now() < deadline) await sleep(50);
  let before = await ownCpu();
  while (performance.now() < deadline) {
    await sleep(QUIET_WINDOW_MS);
    const after = await ownCpu();
    if (after - before < QUIET_WINDOW_MS * 1000 * QUIET_SHARE) break;
    before = after;
  }
  await sleep(settings.settleMs);
}

/** CPU used so far by this benchmark's processes (itself and its children), in µs. */
async function ownCpu(): Promise<number> {
  const own = process.cpuUsage();
  const children = await Promise.all(run.children.map((child) => child.cpuMicros()));
  return own.user + own.system + children.reduce((sum, micros) => sum + micros, 0);
}

interface PhaseResult {
  result: StreamResult;
  upstreamPeak: number;
  upstreamConnections: number;
  hopCpuMicros: number;
  hopStats: ProbeStats | undefined;
  otherShare: number;
}

/** `snapshot`: a heap snapshot of the hop into that file once the ramp is over (all streams open). */
async function phase(name: PathName, snapshot?: string): Promise<PhaseResult> {
  await settle();
  await upstreamStats(); // starts a new peak
  const [machineBefore, ownBefore] = [machineCpu(), await ownCpu()];
  // Last, so that the hop's GC and stall counts start with the phase.
  const cpuBefore = (await hopOf[name]?.cpuMicros()) ?? 0;
  const snapshotTaken = snapshot ? sleep(settings.rampMs + 200).then(() => hopOf[name]?.heapSnapshot(snapshot)) : undefined;
  const result = await streamRun(clients[name], targetFor(name), FIRST_TOKEN, settings.streams, settings.rampMs, phaseLimitMs);
  await snapshotTaken;
  // First, so that its GC and stall counts end with the phase.
  const cpuAfter = (await hopOf[name]?.cpuMicros()) ?? 0;
  const hopStats = hopOf[name]?.lastStats;
  const [machineAfter, ownAfter] = [machineCpu(), await ownCpu()];
  const otherShare =
    machineBefore && machineAfter ? (machineAfter.busy - machineBefore.busy - (ownAfter - ownBefore)) / (machineAfter.total - machineBefore.total) : Number.NaN;
  // The stats request itself comes on a connection of its own: not counted.
  const { peak, connections } = await upstreamStats();
  return { result, upstreamPeak: peak, upstreamConnections: connections - 1, hopCpuMicros: cpuAfter - cpuBefore, hopStats, otherShare: Math.max(0, otherShare) };
}

async function main() {
  // One stream per path, checked, then one unmeasured phase per path (opens every connection, warms the JIT).
  for (const name of PATHS) {
    const check = await streamRun(clients[name], targetFor(name), FIRST_TOKEN, 1, 0, phaseLimitMs);
    if (check.errors > 0) throw new Error(`${name}: the check stream failed`);
  }
  log(`streams checked; warm-up: one phase of ${settings.streams} streams per path`);
  for (const name of PATHS) await phase(name);

  for (let round = 1; round <= settings.rounds; round++) {
    const order = round % 2 === 1 ? PATHS : [...PATHS].reverse();
    const line: string[] = [];
    for (const name of order) {
      const snapshot = flags["heap-snapshot"] && round === 1 && hopOf[name] ? path.join(RESULTS_DIR, "profiles", `streams-${name}.heapsnapshot`) : undefined;
      if (snapshot) log(`${name}: heap snapshot at the peak of this phase -> ${path.relative(ROOT, snapshot)} (its round is slower)`);
      const { result, upstreamPeak, upstreamConnections, hopCpuMicros, hopStats, otherShare } = await phase(name, snapshot);
      // The same process idle, its streams ended: bench/heap-diff.ts gives what each open stream kept.
      if (snapshot) await settle().then(() => hopOf[name]!.heapSnapshot(snapshot.replace(/\.heapsnapshot$/, "-idle.heapsnapshot")));
      const tally = tallies[name];
      tally.firstToken.push(...result.firstToken);
      tally.duration.push(...result.duration);
      tally.roundP99.push(percentile(result.firstToken, 99));
      tally.errors += result.errors;
      tally.streams += settings.streams;
      tally.upstreamPeak.push(upstreamPeak);
      tally.upstreamConnections += upstreamConnections;
      tally.hopCpuMicros += hopCpuMicros;
      if (hopStats) tally.hopStats.push(hopStats);
      tally.otherShare.push(otherShare);
      const pauses = hopStats ? ` gc ${fmt(hopStats.gc.youngMs + hopStats.gc.fullMs, 0)} ms (max ${fmt(Math.max(hopStats.gc.youngMaxMs, hopStats.gc.fullMaxMs), 1)}) stall max ${fmt(hopStats.loopDelayMaxMs, 1)} ms heap ${fmt(hopStats.heapPeakBytes / 2 ** 20, 0)} MiB` : "";
      if (flags.timeline) log(timelineLine(name, result, hopStats, settings.rampMs + 500));
      line.push(`${name} p50 ${fmt(percentile(result.firstToken, 50), 1)} p99 ${fmt(percentile(result.firstToken, 99), 1)} ms peak ${upstreamPeak}${pauses} others ${fmt(100 * otherShare, 0)}%${result.errors ? ` errors ${result.errors}` : ""}`);
    }
    log(`round ${round}/${settings.rounds}: ${line.join(", ")}`);
  }
  const totalSeconds = (performance.now() - runStarted) / 1000;
  await run.cleanup({ graceful: true });
  await writeReport(flags.out, renderReport(totalSeconds), totalSeconds);
}

function renderReport(totalSeconds: number): string {
  const out: string[] = ["# Streams benchmark: time to first token with 1 000 streams open", ""];
  out.push(
    environmentLine(),
    "",
    `${settings.rounds} rounds (${PATHS.join(", ")} in turn, the order reversed every other round, after one unmeasured warm-up phase per path). ` +
      `Per round and path: ${settings.streams} streams opened at an even pace over ${settings.rampMs} ms; the upstream sends the first token at once, then a token every ${settings.tokenIntervalMs} ms, ${settings.tokens} tokens (${streamMs} ms), so all streams are open together once the ramp is over. ` +
      `First token: time from a stream's send to the arrival of its first token at the client. Load generator: one undici Pool per path in the benchmark process, ${settings.streams} connections, keep-alive; gateway LOG_LEVEL=${settings.logLevel}; all on 127.0.0.1. Run time ${fmt(totalSeconds, 0)} s.`,
    "",
    "| path | first token p50 ms | p99 ms | max ms | p99 per round, min–max | stream length p50 ms | upstream peak open streams, min–max per round | new upstream connections | hop CPU µs/stream | errors |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  );
  for (const name of PATHS) {
    const t = tallies[name];
    out.push(
      `| ${name} | ${fmt(percentile(t.firstToken, 50), 2)} | ${fmt(percentile(t.firstToken, 99), 2)} | ${fmt(Math.max(...t.firstToken), 2)} | ${range(t.roundP99, 1)} | ${fmt(percentile(t.duration, 50), 0)} | ${range(t.upstreamPeak, 0)} | ${t.upstreamConnections} | ${name === "direct" ? "—" : fmt(t.hopCpuMicros / t.streams, 0)} | ${t.errors}/${t.streams} |`,
    );
  }
  out.push("");
  // Per round: the p99 of each path beside how much of the machine other processes took meanwhile.
  out.push(
    `| round | ${PATHS.map((name) => `${name} p99 ms (others' CPU)`).join(" | ")} |`,
    `| ---: | ${PATHS.map(() => "---:").join(" | ")} |`,
  );
  for (let round = 0; round < settings.rounds; round++) {
    out.push(`| ${round + 1} | ${PATHS.map((name) => `${fmt(tallies[name].roundP99[round], 1)} (${fmt(100 * tallies[name].otherShare[round], 0)}%)`).join(" | ")} |`);
  }
  out.push("");
  // What makes a tail in the hops themselves: GC pauses, event-loop stalls, heap held with every stream open.
  const hops = PATHS.filter((name) => tallies[name].hopStats.length > 0);
  out.push(
    "| path | GC pause total per phase ms (young / other) | young GCs per phase | longest GC pause ms | longest event-loop stall ms, per round | event-loop stall p99 ms | peak heap MiB, per round |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
  );
  for (const name of hops) {
    const stats = tallies[name].hopStats;
    const mean = (pick: (s: ProbeStats) => number) => stats.reduce((sum, s) => sum + pick(s), 0) / stats.length;
    out.push(
      `| ${name} | ${fmt(mean((s) => s.gc.youngMs), 0)} / ${fmt(mean((s) => s.gc.fullMs), 0)} | ${fmt(mean((s) => s.gc.youngCount), 0)} | ${fmt(Math.max(...stats.map((s) => Math.max(s.gc.youngMaxMs, s.gc.fullMaxMs))), 1)} | ` +
        `${range(stats.map((s) => s.loopDelayMaxMs), 1)} | ${fmt(Math.max(...stats.map((s) => s.loopDelayP99Ms)), 1)} | ${range(stats.map((s) => s.heapPeakBytes / 2 ** 20), 0)} |`,
    );
  }
  out.push("");
  const floorP99 = percentile(tallies.floor.firstToken, 99);
  const checks: string[] = [];
  for (const name of PATHS.filter((n) => n === "gateway" || n === "candidate")) {
    const p99 = percentile(tallies[name].firstToken, 99);
    checks.push(`| ${name} first-token p99 <= 2 × floor first-token p99 (same run) | ${fmt(p99, 2)} ms vs limit ${fmt(2 * floorP99, 2)} ms (floor ${fmt(floorP99, 2)} ms; ratio ${fmt(p99 / floorP99, 2)}×) | ${verdict(p99 <= 2 * floorP99)} |`);
    const allOpen = Math.min(...tallies[name].upstreamPeak) >= settings.streams;
    checks.push(`| every ${name} stream open at the upstream at once, every round | peak ${range(tallies[name].upstreamPeak, 0)} of ${settings.streams} | ${verdict(allOpen)} |`);
  }
  out.push(...targetsSection(checks));
  if (CANDIDATE_ROOT) {
    const lower = tallies.candidate.roundP99.filter((p99, round) => p99 < tallies.gateway.roundP99[round]).length;
    out.push(
      `Candidate (${CANDIDATE_ROOT}) against gateway (${ROOT}): first-token p99 ${fmt(percentile(tallies.gateway.firstToken, 99), 2)} → ${fmt(percentile(tallies.candidate.firstToken, 99), 2)} ms, ` +
        `p50 ${fmt(percentile(tallies.gateway.firstToken, 50), 2)} → ${fmt(percentile(tallies.candidate.firstToken, 50), 2)} ms; the candidate's p99 is lower in ${lower} of ${settings.rounds} rounds.`,
      "",
    );
  }
  out.push(
    "Hop CPU = user+system CPU of the proxy's or gateway's process during the phase (ramp and whole streams), divided by the streams. " +
      "New upstream connections: those the upstream accepted during the measured phases (after the warm-up a pooled hop opens none; direct's are the client's). " +
      "GC pauses and event-loop stalls: the hop's own (PerformanceObserver \`gc\` entries and monitorEventLoopDelay at 10 ms resolution in the preloaded cpu-probe.ts), from the phase's start to the last stream's end. " +
      "Others' CPU = the share of the whole machine's CPU (/proc/stat) that processes outside this benchmark used during the phase. " +
      "On this 2-core machine the load generator, the upstream and the hop share the CPUs with whatever else runs, so compare paths within one run.",
    "",
  );
  return out.join("\n");
}
