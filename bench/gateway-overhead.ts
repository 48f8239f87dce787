// Gateway overhead benchmark (`npm run bench`): what the gateway adds to a
// call, against the floor of any Node hop.
//
// Five paths to one local upstream (its own process), measured in one run in
// interleaved rounds (direct, floor, gateway, messages, responses, direct, ...):
//   direct   client -> upstream
//   floor    client -> bare node:http proxy (own process, pooled undici) -> upstream
//   gateway  client -> gateway/main.ts (own process, in-process core) -> upstream
//   messages the same gateway, asked through POST /v1/messages (Anthropic's
//            Messages format, x-api-key) instead of chat completions: the same
//            OpenAI-compatible upstream call, decoded and encoded as Messages
//   responses the same gateway through POST /api/v1/responses (store: false)
// Per path: latency p50/p99 at concurrency 1, CPU per request of the hop's
// process, and requests per second at concurrency 50. Then the targets check,
// printed as PASS/FAIL; the exit code is 0 either way (a benchmark, not a test).
// The markdown report goes to stdout and bench/results/latest.md; progress to stderr.
//
// Options: --suite gateway|accounts|streams|selection|cache|websocket (accounts-overhead.ts, streams.ts, selection-time.ts, cache-index.ts or responses-socket.ts instead, see there)
//   --rounds N  --requests N (sequential, per path and round)
//   --concurrency N  --rps-seconds S  --rps-max N  --warmup S
//   --no-stream (skip the streaming variant; same as --mode json)  --mode both|json|stream
//   --profile (gateway under --cpu-prof; summary appended to the report)
//   --log-level L (the gateway's LOG_LEVEL, default silent)  --quick
//   --candidate DIR: also run the gateway of another checkout (DIR/gateway/main.ts)
//     as a fourth interleaved path, "candidate", to A/B a change to the hot path
import { mkdir, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { startChild, type Child } from "./children.ts";
import { BENCH_UPSTREAM_ENV, oneUpstreamConfig, startGateway as startGatewayChild, writeGatewayConfig } from "./gateway-child.ts";
import { addLatency, addThroughput, clientPairs, completionContent, emptyTally, latencyRun, measuredPhase, median, percentile, send, throughputRun, warmUp, WARMUP_SEQUENTIAL, type LatencyTally, type Target, type ThroughputTally } from "./load.ts";
import { requireNode24, ROUND_OPTIONS, roundSettings } from "./options.ts";
import { summarizeProfile } from "./profile-summary.ts";
import { environmentLine, fmt, log, range, RESULTS_DIR, ROOT, signed, targetsSection, verdict, writeReport } from "./report.ts";
import { RunResources } from "./resources.ts";

requireNode24("npm run bench", "bench/gateway-overhead.ts");

// Suites: `--suite gateway` (the default: this file), `--suite accounts`
// (accounts-overhead.ts), `--suite streams` (streams.ts), `--suite selection`
// (selection-time.ts, in process: no gateway), `--suite cache` (cache-index.ts,
// in process with a private redis-server) or `--suite websocket`
// (responses-socket.ts, in process); each gets the other
// options. The flag is taken out of process.argv before any suite reads its options.
const suiteAt = process.argv.findIndex((arg) => arg === "--suite" || arg.startsWith("--suite="));
const suite = suiteAt < 0 ? "gateway" : process.argv[suiteAt].includes("=") ? process.argv[suiteAt].split("=")[1] : process.argv[suiteAt + 1];
if (suiteAt >= 0) process.argv.splice(suiteAt, process.argv[suiteAt].includes("=") ? 1 : 2);
const SUITES: Record<string, string> = { accounts: "./accounts-overhead.ts", streams: "./streams.ts", selection: "./selection-time.ts", cache: "./cache-index.ts", websocket: "./responses-socket.ts" };
if (Object.hasOwn(SUITES, suite)) {
  await import(SUITES[suite]);
  process.exit(process.exitCode ?? 0);
} else if (suite !== "gateway") {
  process.stderr.write(`--suite is gateway (default), accounts, streams, selection, cache or websocket, got ${suite}\n`);
  process.exit(1);
}

const { values: flags } = parseArgs({
  allowNegative: true,
  options: {
    ...ROUND_OPTIONS,
    stream: { type: "boolean", default: true },
    mode: { type: "string", default: "both" },
    profile: { type: "boolean", default: false },
    candidate: { type: "string" },
  },
});
const settings = {
  ...roundSettings(flags, { rounds: flags.quick ? 2 : 6, requests: flags.quick ? 200 : 400 }),
  stream: flags.stream,
  profile: flags.profile,
};

// ---- the setup: upstream, floor proxy, gateway ----

type PathName = "direct" | "floor" | "gateway" | "messages" | "responses" | "candidate";
const CANDIDATE_ROOT = flags.candidate ? path.resolve(flags.candidate) : undefined;
const PATHS: PathName[] = CANDIDATE_ROOT ? ["direct", "floor", "gateway", "messages", "responses", "candidate"] : ["direct", "floor", "gateway", "messages", "responses"];
type Mode = "json" | "stream";
if (!["both", "json", "stream"].includes(flags.mode)) throw new Error(`--mode is both, json or stream, got ${flags.mode}`);
const MODES: Mode[] = !settings.stream || flags.mode === "json" ? ["json"] : flags.mode === "stream" ? ["stream"] : ["json", "stream"];

const DEV_KEY = "sk-rtr-bench-0123456789abcdef";
const MODEL_ID = "bench/echo";
const EXPECTED_CONTENT = "Hello! How can I help you today?";

function targetFor(pathName: PathName, mode: Mode): Target {
  if (pathName === "messages") return messagesTarget(mode);
  if (pathName === "responses") return responsesTarget(mode);
  const viaGateway = pathName === "gateway" || pathName === "candidate";
  const body: Record<string, unknown> = {
    model: viaGateway ? MODEL_ID : "bench-model",
    messages: [{ role: "user", content: "hi" }],
    max_tokens: 16,
  };
  if (mode === "stream") body.stream = true;
  return {
    name: `${pathName}/${mode}`,
    path: viaGateway ? "/api/v1/chat/completions" : "/v1/chat/completions",
    headers: { "content-type": "application/json", authorization: `Bearer ${DEV_KEY}` },
    body: JSON.stringify(body),
  };
}

/** The same question as a Messages request, authenticated as Anthropic's SDK does. */
function messagesTarget(mode: Mode): Target {
  const body: Record<string, unknown> = { model: MODEL_ID, max_tokens: 16, messages: [{ role: "user", content: "hi" }] };
  if (mode === "stream") body.stream = true;
  return {
    name: `messages/${mode}`,
    path: "/v1/messages",
    headers: { "content-type": "application/json", "x-api-key": DEV_KEY, "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
  };
}

/**
 * The same question as a Responses request. `store: false`: with the default
 * a memory store keeps every answer, whose growth over a run would measure the
 * store rather than the hop.
 */
function responsesTarget(mode: Mode): Target {
  const body: Record<string, unknown> = { model: MODEL_ID, max_output_tokens: 16, input: "hi", store: false };
  if (mode === "stream") body.stream = true;
  return {
    name: `responses/${mode}`,
    path: "/api/v1/responses",
    headers: { "content-type": "application/json", authorization: `Bearer ${DEV_KEY}` },
    body: JSON.stringify(body),
  };
}

/** The text of a Response's first message. */
function responseText(text: string): string | undefined {
  try {
    return (JSON.parse(text) as { output?: { content?: { text?: string }[] }[] }).output?.[0]?.content?.[0]?.text;
  } catch {
    return undefined;
  }
}

/** The text of a Message's first block. */
function messageText(text: string): string | undefined {
  try {
    return (JSON.parse(text) as { content?: { text?: string }[] }).content?.[0]?.text;
  } catch {
    return undefined;
  }
}

const run = new RunResources();
const children = run.children;

const profileDir = path.join(RESULTS_DIR, "profiles");
const runStarted = performance.now();

const tempDir = await run.makeTempDir("rtr-bench-");
const upstream = await startChild({ name: "upstream", module: new URL("./upstream.ts", import.meta.url), ready: { ipc: true } });
children.push(upstream);
const floor = await startChild({
  name: "floor proxy",
  module: new URL("./floor-proxy.ts", import.meta.url),
  env: { BENCH_UPSTREAM_URL: upstream.url },
  ready: { ipc: true },
});
children.push(floor);
const configPath = await writeGatewayConfig(tempDir, oneUpstreamConfig(upstream.url, MODEL_ID, "Bench echo"));
if (settings.profile) {
  // Fresh profiles per run: the summary reads the newest file of each gateway.
  for (const name of ["gateway", "candidate"]) {
    const dir = path.join(profileDir, name);
    await mkdir(dir, { recursive: true });
    for (const file of await readdir(dir)) if (file.endsWith(".cpuprofile")) await rm(path.join(dir, file));
  }
}

function startGateway(name: string, root: string, profile: boolean): Promise<Child> {
  return startGatewayChild({
    name,
    root,
    configPath,
    devKey: DEV_KEY,
    logLevel: settings.logLevel,
    env: BENCH_UPSTREAM_ENV,
    execArgv: profile ? ["--cpu-prof", "--cpu-prof-dir", path.join(profileDir, name)] : [],
  });
}
const gateway = await startGateway("gateway", ROOT, settings.profile);
children.push(gateway);
const candidate = CANDIDATE_ROOT ? await startGateway("candidate", CANDIDATE_ROOT, settings.profile) : undefined;
if (candidate) children.push(candidate);
log(
  `upstream ${upstream.url} (pid ${upstream.pid}), floor ${floor.url} (pid ${floor.pid}), gateway ${gateway.url} (pid ${gateway.pid})` +
    (candidate ? `, candidate from ${CANDIDATE_ROOT} ${candidate.url} (pid ${candidate.pid})` : ""),
);

const hopOf: Record<PathName, Child | undefined> = { direct: undefined, floor, gateway, messages: gateway, responses: gateway, candidate };
const originOf: Record<PathName, string> = { direct: upstream.url, floor: floor.url, gateway: gateway.url, messages: gateway.url, responses: gateway.url, candidate: candidate?.url ?? "" };
const { sequential, concurrent, all: clients } = clientPairs(PATHS, (name) => originOf[name], settings.concurrency);
run.clients.push(...clients);

try {
  await main();
} catch (error) {
  log(`benchmark failed: ${(error as Error).stack ?? error}`);
  await run.cleanup();
  process.exit(1);
}

// ---- measuring ----

interface Stats extends LatencyTally, ThroughputTally {
  hopCpuSequential: number;
  upstreamCpuSequential: number;
  clientCpuSequential: number;
  hopCpuConcurrent: number;
  upstreamCpuConcurrent: number;
  clientCpuConcurrent: number;
}

function emptyStats(): Stats {
  return {
    ...emptyTally(),
    hopCpuSequential: 0, upstreamCpuSequential: 0, clientCpuSequential: 0, hopCpuConcurrent: 0, upstreamCpuConcurrent: 0, clientCpuConcurrent: 0,
  };
}

interface CpuSnapshot {
  hop: number;
  upstream: number;
  client: number;
}

async function cpuSnapshot(name: PathName): Promise<CpuSnapshot> {
  const [hop, up] = await Promise.all([hopOf[name]?.cpuMicros() ?? 0, upstream.cpuMicros()]);
  const own = process.cpuUsage();
  return { hop, upstream: up, client: own.user + own.system };
}

function cpuDelta(before: CpuSnapshot, after: CpuSnapshot): CpuSnapshot {
  return { hop: after.hop - before.hop, upstream: after.upstream - before.upstream, client: after.client - before.client };
}

/** One request per path and mode, its answer checked, before anything is timed. */
async function checkAnswers() {
  for (const mode of MODES) {
    for (const name of PATHS) {
      const { status, text } = await send(sequential[name], targetFor(name, mode), true);
      const content = name === "messages" ? messageText(text) : name === "responses" ? responseText(text) : completionContent(text);
      const streamEnd = name === "messages" ? "event: message_stop" : name === "responses" ? "event: response.completed" : "[DONE]";
      const problem =
        status !== 200
          ? `HTTP ${status}`
          : mode === "json"
            ? content === EXPECTED_CONTENT
              ? ""
              : "unexpected content"
            : text.includes(streamEnd) && text.includes("you today?")
              ? ""
              : "unexpected stream";
      if (problem) throw new Error(`${name}/${mode}: ${problem}: ${text.slice(0, 500)}`);
    }
  }
}

async function main() {
  await checkAnswers();
  log(`answers checked; warming up ${settings.warmupSeconds} s per path and mode`);
  for (const mode of MODES) {
    for (const name of PATHS) {
      await warmUp(concurrent[name], sequential[name], targetFor(name, mode), settings.warmupSeconds, settings.rpsMax);
    }
  }

  const statsOf = () => ({ direct: emptyStats(), floor: emptyStats(), gateway: emptyStats(), messages: emptyStats(), responses: emptyStats(), candidate: emptyStats() });
  const stats: Record<Mode, Record<PathName, Stats>> = { json: statsOf(), stream: statsOf() };
  for (let round = 1; round <= settings.rounds; round++) {
    const line: string[] = [];
    for (const mode of MODES) {
      // Concurrency 1: latency.
      for (const name of PATHS) {
        const s = stats[mode][name];
        const { result, before, after } = await measuredPhase(settings.settleMs, () => cpuSnapshot(name), () =>
          latencyRun(sequential[name], targetFor(name, mode), settings.requests, 30_000),
        );
        const cpu = cpuDelta(before, after);
        addLatency(s, result);
        s.hopCpuSequential += cpu.hop;
        s.upstreamCpuSequential += cpu.upstream;
        s.clientCpuSequential += cpu.client;
      }
      // Concurrency N: throughput.
      for (const name of PATHS) {
        const s = stats[mode][name];
        const { result, before, after } = await measuredPhase(settings.settleMs, () => cpuSnapshot(name), () =>
          throughputRun(concurrent[name], targetFor(name, mode), settings.rpsMax, settings.rpsSeconds * 1000),
        );
        const cpu = cpuDelta(before, after);
        addThroughput(s, result);
        s.hopCpuConcurrent += cpu.hop;
        s.upstreamCpuConcurrent += cpu.upstream;
        s.clientCpuConcurrent += cpu.client;
        line.push(`${name}/${mode} p50 ${fmt(s.roundP50.at(-1)!, 3)} p99 ${fmt(s.roundP99.at(-1)!, 3)} ms ${fmt(result.rps, 0)} rps`);
      }
    }
    log(`round ${round}/${settings.rounds}: ${line.join(", ")}`);
  }

  const rss = { floor: floor.lastRss, gateway: gateway.lastRss, candidate: candidate?.lastRss ?? 0 };
  const totalSeconds = (performance.now() - runStarted) / 1000;
  await run.cleanup({ graceful: true });

  let profileSection = "";
  if (settings.profile) {
    const sections: string[] = [];
    const profiled: [PathName, string][] = [["gateway", ROOT]];
    if (CANDIDATE_ROOT) profiled.push(["candidate", CANDIDATE_ROOT]);
    for (const [name, root] of profiled) {
      const dir = path.join(profileDir, name);
      const newest = (await readdir(dir)).filter((f) => f.endsWith(".cpuprofile")).sort().at(-1);
      if (!newest) continue;
      const summary = await summarizeProfile(path.join(dir, newest), {
        root,
        top: 25,
        requests: sequential[name].sent + concurrent[name].sent,
      });
      sections.push(summary.replace("## Gateway CPU profile", `## CPU profile: ${name}`));
    }
    profileSection = sections.join("\n\n");
  }

  await writeReport("latest.md", renderReport(stats, rss, totalSeconds, profileSection), totalSeconds);
}

// ---- the report ----

interface Summary {
  p50: number;
  p99: number;
  /** "min–max" */
  roundP50Range: string;
  hopCpuSequential: number;
  hopCpuConcurrent: number;
  upstreamCpu: number;
  clientCpu: number;
  rps: number;
  /** "min–max" */
  rpsRange: string;
  errors: number;
  requests: number;
}

function summarize(s: Stats): Summary {
  return {
    p50: percentile(s.latency, 50),
    p99: percentile(s.latency, 99),
    roundP50Range: range(s.roundP50, 3),
    hopCpuSequential: s.hopCpuSequential / s.latencyRequests,
    hopCpuConcurrent: s.hopCpuConcurrent / s.throughputRequests,
    upstreamCpu: s.upstreamCpuConcurrent / s.throughputRequests,
    clientCpu: s.clientCpuConcurrent / s.throughputRequests,
    rps: median(s.rps),
    rpsRange: range(s.rps, 0),
    errors: s.latencyErrors + s.throughputErrors,
    requests: s.latencyRequests + s.throughputRequests,
  };
}

function renderReport(stats: Record<Mode, Record<PathName, Stats>>, rss: { floor: number; gateway: number; candidate: number }, totalSeconds: number, profileSection: string): string {
  const c = settings.concurrency;
  const out: string[] = [];
  out.push(`# Gateway overhead benchmark`, "");
  out.push(
    environmentLine(),
    "",
    `${settings.rounds} interleaved rounds (${PATHS.join(", ")} in turn); per round and path: ${settings.requests} sequential requests (concurrency 1), then concurrency ${c} for ${settings.rpsSeconds} s (at most ${settings.rpsMax} requests). ` +
      `Warm-up ${settings.warmupSeconds} s at concurrency ${c} plus ${WARMUP_SEQUENTIAL} sequential requests per path and mode. Gateway LOG_LEVEL=${settings.logLevel}${settings.profile ? ", **under --cpu-prof (its CPU and latency are inflated)**" : ""}. ` +
      `Load generator: undici Pool in the benchmark process (keep-alive, connections = concurrency); all on 127.0.0.1. Run time ${fmt(totalSeconds, 0)} s.`,
    "",
  );
  const checks: string[] = [];
  for (const mode of MODES) {
    const sum = Object.fromEntries(PATHS.map((name) => [name, summarize(stats[mode][name])])) as Record<PathName, Summary>;
    out.push(`## ${mode === "json" ? "Non-streaming (chat.completion JSON)" : "Streaming (SSE, 7 upstream events)"}`, "");
    out.push(
      `| path | p50 ms | p99 ms | p50 per round, min–max | added p50 ms | added p99 ms | hop CPU µs/req, c=1 | hop CPU µs/req, c=${c} | RPS c=${c} (median) | RPS min–max | errors |`,
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    );
    for (const name of PATHS) {
      const s = sum[name];
      const direct = name === "direct";
      out.push(
        `| ${name} | ${fmt(s.p50, 3)} | ${fmt(s.p99, 3)} | ${s.roundP50Range} | ${direct ? "—" : signed(s.p50 - sum.direct.p50, 3)} | ${direct ? "—" : signed(s.p99 - sum.direct.p99, 3)} | ${direct ? "—" : fmt(s.hopCpuSequential, 0)} | ${direct ? "—" : fmt(s.hopCpuConcurrent, 0)} | ${fmt(s.rps, 0)} | ${s.rpsRange} | ${s.errors}/${s.requests} |`,
      );
    }
    out.push("");
    out.push(
      `CPU per request at concurrency ${c} of the other processes (sanity: the upstream's should match across paths): ` +
        PATHS.map((name) => `${name}: upstream ${fmt(sum[name].upstreamCpu, 0)} µs, load generator ${fmt(sum[name].clientCpu, 0)} µs`).join("; ") +
        ".",
      "",
    );

    const floorAdded = sum.floor.p50 - sum.direct.p50;
    const gatewayAdded = sum.gateway.p50 - sum.direct.p50;
    const label = mode === "json" ? "" : " (streaming, informational)";
    checks.push(
      `| gateway added p50 <= floor added p50 + 0.2 ms${label} | ${fmt(gatewayAdded, 3)} ms vs limit ${fmt(floorAdded + 0.2, 3)} ms (floor ${fmt(floorAdded, 3)} ms) | ${verdict(gatewayAdded <= floorAdded + 0.2)} |`,
      `| gateway CPU/request <= 1.5 × floor CPU/request (c=${c})${label} | ${fmt(sum.gateway.hopCpuConcurrent, 0)} µs vs limit ${fmt(1.5 * sum.floor.hopCpuConcurrent, 0)} µs (floor ${fmt(sum.floor.hopCpuConcurrent, 0)} µs; ratio ${fmt(sum.gateway.hopCpuConcurrent / sum.floor.hopCpuConcurrent, 2)}×) | ${verdict(sum.gateway.hopCpuConcurrent <= 1.5 * sum.floor.hopCpuConcurrent)} |`,
      `| gateway RPS >= 0.9 × floor RPS (c=${c})${label} | ${fmt(sum.gateway.rps, 0)} vs limit ${fmt(0.9 * sum.floor.rps, 0)} (floor ${fmt(sum.floor.rps, 0)}; ratio ${fmt(sum.gateway.rps / sum.floor.rps, 2)}) | ${verdict(sum.gateway.rps >= 0.9 * sum.floor.rps)} |`,
    );
  }
  out.push(...targetsSection(checks));
  if (CANDIDATE_ROOT) out.push(...candidateComparison(stats), "");
  out.push(
    `Memory (RSS at the end): floor proxy ${fmt(rss.floor / 2 ** 20, 0)} MiB, gateway ${fmt(rss.gateway / 2 ** 20, 0)} MiB` +
      (CANDIDATE_ROOT ? `, candidate ${fmt(rss.candidate / 2 ** 20, 0)} MiB.` : "."),
    "",
    "Added = path minus direct, on the pooled samples of all rounds. Hop CPU = user+system CPU of the proxy's or gateway's process (process.cpuUsage over IPC, all threads) during the phase, divided by the requests of the phase. " +
      "With few cores the load generator, the upstream and the hop share the CPUs, so RPS is a ratio between paths rather than a capacity.",
    "",
  );
  if (profileSection) out.push(profileSection, "");
  return out.join("\n");
}

/** "k of N": the rounds in which `a` is below `b` (round by round, the two measured minutes apart at most). */
function lowerRounds(a: number[], b: number[]): string {
  return `${a.filter((value, round) => value < b[round]).length} of ${a.length}`;
}

function candidateComparison(stats: Record<Mode, Record<PathName, Stats>>): string[] {
  const c = settings.concurrency;
  const out = [
    `## Candidate (${CANDIDATE_ROOT}) vs gateway (${ROOT})`,
    "",
    `| mode | added p50 ms, gateway → candidate | p99 ms c=1, gateway → candidate | rounds whose p99 is lower on the candidate | CPU µs/req c=${c}, gateway → candidate | RPS c=${c}, gateway → candidate |`,
    "| --- | --- | --- | --- | --- | --- |",
  ];
  for (const mode of MODES) {
    const direct = summarize(stats[mode].direct);
    const g = summarize(stats[mode].gateway);
    const k = summarize(stats[mode].candidate);
    const change = (before: number, after: number) => `${signed((100 * (after - before)) / before, 1)}%`;
    out.push(
      `| ${mode} | ${fmt(g.p50 - direct.p50, 3)} → ${fmt(k.p50 - direct.p50, 3)} (${signed(k.p50 - g.p50, 3)}) | ${fmt(g.p99, 3)} → ${fmt(k.p99, 3)} | ${lowerRounds(stats[mode].candidate.roundP99, stats[mode].gateway.roundP99)} | ${fmt(g.hopCpuConcurrent, 0)} → ${fmt(k.hopCpuConcurrent, 0)} (${change(g.hopCpuConcurrent, k.hopCpuConcurrent)}) | ${fmt(g.rps, 0)} → ${fmt(k.rps, 0)} (${change(g.rps, k.rps)}) |`,
    );
  }
  return out;
}
