// Gateway overhead benchmark (`npm run bench`): what the gateway adds to a
// call, against the floor of any Node hop.
//
// Three paths to one local upstream (its own process), measured in one run in
// interleaved rounds (direct, floor, gateway, direct, floor, gateway, ...):
//   direct   client -> upstream
//   floor    client -> bare node:http proxy (own process, pooled undici) -> upstream
//   gateway  client -> gateway/main.ts (own process, in-process core) -> upstream
// Per path: latency p50/p99 at concurrency 1, CPU per request of the hop's
// process, and requests per second at concurrency 50. Then the targets check,
// printed as PASS/FAIL; the exit code is 0 either way (a benchmark, not a test).
// The markdown report goes to stdout and bench/results/latest.md; progress to stderr.
//
// Options: --suite gateway|accounts (accounts: accounts-overhead.ts instead, see there)
//   --rounds N  --requests N (sequential, per path and round)
//   --concurrency N  --rps-seconds S  --rps-max N  --warmup S
//   --no-stream (skip the streaming variant; same as --mode json)  --mode both|json|stream
//   --profile (gateway under --cpu-prof; summary appended to the report)
//   --log-level L (the gateway's LOG_LEVEL, default silent)  --quick
//   --candidate DIR: also run the gateway of another checkout (DIR/gateway/main.ts)
//     as a fourth interleaved path, "candidate", to A/B a change to the hot path
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { freePort, startChild, type Child } from "./children.ts";
import { createClient, latencyRun, median, percentile, send, throughputRun, type Client, type Target } from "./load.ts";
import { summarizeProfile } from "./profile-summary.ts";

const major = Number(process.versions.node.split(".")[0]);
if (major < 24) {
  process.stderr.write(`This benchmark needs Node 24 (found ${process.version}): run \`npm run bench\` or \`npx node bench/gateway-overhead.ts\`.\n`);
  process.exit(1);
}

// Suites: `--suite gateway` (the default: this file) or `--suite accounts`
// (accounts-overhead.ts, which gets the other options). The flag is taken out
// of process.argv before either suite reads its options.
const suiteAt = process.argv.findIndex((arg) => arg === "--suite" || arg.startsWith("--suite="));
const suite = suiteAt < 0 ? "gateway" : process.argv[suiteAt].includes("=") ? process.argv[suiteAt].split("=")[1] : process.argv[suiteAt + 1];
if (suiteAt >= 0) process.argv.splice(suiteAt, process.argv[suiteAt].includes("=") ? 1 : 2);
if (suite === "accounts") {
  await import("./accounts-overhead.ts");
  process.exit(process.exitCode ?? 0);
} else if (suite !== "gateway") {
  process.stderr.write(`--suite is gateway (default) or accounts, got ${suite}\n`);
  process.exit(1);
}

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(BENCH_DIR);
const RESULTS_DIR = path.join(BENCH_DIR, "results");

const { values: flags } = parseArgs({
  allowNegative: true,
  options: {
    rounds: { type: "string" },
    requests: { type: "string" },
    concurrency: { type: "string" },
    "rps-seconds": { type: "string" },
    "rps-max": { type: "string" },
    warmup: { type: "string" },
    stream: { type: "boolean", default: true },
    mode: { type: "string", default: "both" },
    profile: { type: "boolean", default: false },
    "log-level": { type: "string", default: "silent" },
    quick: { type: "boolean", default: false },
    candidate: { type: "string" },
  },
});
const quick = flags.quick;
const settings = {
  rounds: int(flags.rounds, quick ? 2 : 6),
  requests: int(flags.requests, quick ? 200 : 400),
  concurrency: int(flags.concurrency, 50),
  rpsSeconds: Number(flags["rps-seconds"] ?? (quick ? 1 : 2)),
  rpsMax: int(flags["rps-max"], 50_000),
  warmupSeconds: Number(flags.warmup ?? (quick ? 1.5 : 3)),
  /** Pause before each measured phase, so the previous one's leftovers (GC, socket churn) do not land in it. */
  settleMs: 100,
  stream: flags.stream,
  profile: flags.profile,
  logLevel: flags["log-level"],
};

function int(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`expected a positive integer, got ${value}`);
  return n;
}

const log = (line: string) => process.stderr.write(line + "\n");

// ---- the setup: upstream, floor proxy, gateway ----

type PathName = "direct" | "floor" | "gateway" | "candidate";
const CANDIDATE_ROOT = flags.candidate ? path.resolve(flags.candidate) : undefined;
const PATHS: PathName[] = CANDIDATE_ROOT ? ["direct", "floor", "gateway", "candidate"] : ["direct", "floor", "gateway"];
type Mode = "json" | "stream";
if (!["both", "json", "stream"].includes(flags.mode)) throw new Error(`--mode is both, json or stream, got ${flags.mode}`);
const MODES: Mode[] = !settings.stream || flags.mode === "json" ? ["json"] : flags.mode === "stream" ? ["stream"] : ["json", "stream"];

const DEV_KEY = "sk-rtr-bench-0123456789abcdef";
const MODEL_ID = "bench/echo";
const EXPECTED_CONTENT = "Hello! How can I help you today?";

function gatewayConfig(upstreamUrl: string) {
  return {
    providers: [
      { id: "bench", label: "Bench upstream", protocol: "openai-compatible", base_url: `${upstreamUrl}/v1`, api_key_env: "BENCH_UPSTREAM_KEY" },
    ],
    models: [
      {
        id: MODEL_ID,
        name: "Bench echo",
        created: 1700000000,
        creator: "bench",
        context_length: 8192,
        max_completion_tokens: 1024,
        input_modalities: ["text"],
        output_modalities: ["text"],
        supported_parameters: ["max_tokens", "temperature"],
        providers: [{ provider: "bench", provider_model_id: "bench-model", pricing: { prompt: "0.000001", completion: "0.000002" } }],
      },
    ],
    // Credits: since accounts, a paid request needs a balance for its hold (402 without one).
    organizations: [{ id: "org_bench", name: "Bench", credits: "1000000", keys: [{ id: "key_bench", env: "ROUTER_DEV_KEY" }] }],
  };
}

function targetFor(pathName: PathName, mode: Mode): Target {
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

const children: Child[] = [];
const clients: Client[] = [];
let tempDir: string | undefined;

async function cleanup() {
  await Promise.allSettled(clients.map((client) => client.pool.destroy()));
  await Promise.allSettled(children.map((child) => child.stop()));
  if (tempDir) await rm(tempDir, { recursive: true, force: true });
}
// Children exit by themselves when this process goes (the probe watches IPC); the config file is ours to remove.
process.once("exit", () => {
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
});
process.once("SIGINT", () => {
  log("interrupted: stopping the children");
  void cleanup().finally(() => process.exit(130));
});

const profileDir = path.join(RESULTS_DIR, "profiles");
const runStarted = performance.now();

tempDir = await mkdtemp(path.join(os.tmpdir(), "rtr-bench-"));
const upstream = await startChild({ name: "upstream", module: new URL("./upstream.ts", import.meta.url), ready: { ipc: true } });
children.push(upstream);
const floor = await startChild({
  name: "floor proxy",
  module: new URL("./floor-proxy.ts", import.meta.url),
  env: { BENCH_UPSTREAM_URL: upstream.url },
  ready: { ipc: true },
});
children.push(floor);
const configPath = path.join(tempDir, "router.json");
await writeFile(configPath, JSON.stringify(gatewayConfig(upstream.url), null, 2));
if (settings.profile) {
  // Fresh profiles per run: the summary reads the newest file of each gateway.
  for (const name of ["gateway", "candidate"]) {
    const dir = path.join(profileDir, name);
    await mkdir(dir, { recursive: true });
    for (const file of await readdir(dir)) if (file.endsWith(".cpuprofile")) await rm(path.join(dir, file));
  }
}

async function startGateway(name: string, root: string, profile: boolean): Promise<Child> {
  const gatewayPort = await freePort();
  return startChild({
    name,
    module: path.join(root, "gateway", "main.ts"),
    env: {
      HOST: "127.0.0.1",
      PORT: String(gatewayPort),
      GRPC_PORT: "0",
      ROUTER_CONFIG: configPath,
      ROUTER_DEV_KEY: DEV_KEY,
      BENCH_UPSTREAM_KEY: "sk-upstream-bench",
      LOG_LEVEL: settings.logLevel,
    },
    execArgv: profile ? ["--cpu-prof", "--cpu-prof-dir", path.join(profileDir, name)] : [],
    ready: { poll: `http://127.0.0.1:${gatewayPort}/api/v1/models`, url: `http://127.0.0.1:${gatewayPort}` },
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

const hopOf: Record<PathName, Child | undefined> = { direct: undefined, floor, gateway, candidate };
const originOf: Record<PathName, string> = { direct: upstream.url, floor: floor.url, gateway: gateway.url, candidate: candidate?.url ?? "" };
const sequential = {} as Record<PathName, Client>;
const concurrent = {} as Record<PathName, Client>;
for (const name of PATHS) {
  sequential[name] = createClient(originOf[name], 1);
  concurrent[name] = createClient(originOf[name], settings.concurrency);
  clients.push(sequential[name], concurrent[name]);
}

try {
  await main();
} catch (error) {
  log(`benchmark failed: ${(error as Error).stack ?? error}`);
  await cleanup();
  process.exit(1);
}

// ---- measuring ----

interface Stats {
  latency: number[];
  roundP50: number[];
  latencyRequests: number;
  latencyErrors: number;
  hopCpuSequential: number;
  upstreamCpuSequential: number;
  clientCpuSequential: number;
  rps: number[];
  throughputRequests: number;
  throughputErrors: number;
  hopCpuConcurrent: number;
  upstreamCpuConcurrent: number;
  clientCpuConcurrent: number;
}

function emptyStats(): Stats {
  return {
    latency: [], roundP50: [], latencyRequests: 0, latencyErrors: 0, hopCpuSequential: 0, upstreamCpuSequential: 0, clientCpuSequential: 0,
    rps: [], throughputRequests: 0, throughputErrors: 0, hopCpuConcurrent: 0, upstreamCpuConcurrent: 0, clientCpuConcurrent: 0,
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
      const problem =
        status !== 200
          ? `HTTP ${status}`
          : mode === "json"
            ? (JSON.parse(text) as { choices?: { message?: { content?: string } }[] }).choices?.[0]?.message?.content === EXPECTED_CONTENT
              ? ""
              : "unexpected content"
            : text.includes("[DONE]") && text.includes("you today?")
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
      const target = targetFor(name, mode);
      await throughputRun(concurrent[name], target, settings.rpsMax, settings.warmupSeconds * 1000);
      await latencyRun(sequential[name], target, 200, 5_000);
    }
  }

  const statsOf = () => ({ direct: emptyStats(), floor: emptyStats(), gateway: emptyStats(), candidate: emptyStats() });
  const stats: Record<Mode, Record<PathName, Stats>> = { json: statsOf(), stream: statsOf() };
  for (let round = 1; round <= settings.rounds; round++) {
    const line: string[] = [];
    for (const mode of MODES) {
      // Concurrency 1: latency.
      for (const name of PATHS) {
        const s = stats[mode][name];
        await sleep(settings.settleMs);
        const before = await cpuSnapshot(name);
        const result = await latencyRun(sequential[name], targetFor(name, mode), settings.requests, 30_000);
        const cpu = cpuDelta(before, await cpuSnapshot(name));
        s.latency.push(...result.samples);
        s.roundP50.push(percentile(result.samples, 50));
        s.latencyRequests += result.samples.length + result.errors;
        s.latencyErrors += result.errors;
        s.hopCpuSequential += cpu.hop;
        s.upstreamCpuSequential += cpu.upstream;
        s.clientCpuSequential += cpu.client;
      }
      // Concurrency N: throughput.
      for (const name of PATHS) {
        const s = stats[mode][name];
        await sleep(settings.settleMs);
        const before = await cpuSnapshot(name);
        const result = await throughputRun(concurrent[name], targetFor(name, mode), settings.rpsMax, settings.rpsSeconds * 1000);
        const cpu = cpuDelta(before, await cpuSnapshot(name));
        s.rps.push(result.rps);
        s.throughputRequests += result.completed + result.errors;
        s.throughputErrors += result.errors;
        s.hopCpuConcurrent += cpu.hop;
        s.upstreamCpuConcurrent += cpu.upstream;
        s.clientCpuConcurrent += cpu.client;
        line.push(`${name}/${mode} p50 ${fmt(s.roundP50.at(-1)!, 3)} ms ${fmt(result.rps, 0)} rps`);
      }
    }
    log(`round ${round}/${settings.rounds}: ${line.join(", ")}`);
  }

  const rss = { floor: floor.lastRss, gateway: gateway.lastRss, candidate: candidate?.lastRss ?? 0 };
  const totalSeconds = (performance.now() - runStarted) / 1000;
  await Promise.allSettled(clients.map((client) => client.pool.close()));
  await Promise.allSettled(children.map((child) => child.stop()));
  await rm(tempDir!, { recursive: true, force: true });

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

  const report = renderReport(stats, rss, totalSeconds, profileSection);
  process.stdout.write(report);
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(path.join(RESULTS_DIR, "latest.md"), report);
  log(`written to ${path.relative(ROOT, path.join(RESULTS_DIR, "latest.md"))} (${fmt(totalSeconds, 0)} s)`);
}

// ---- the report ----

function fmt(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "n/a";
}

function signed(value: number, digits: number): string {
  return Number.isFinite(value) ? (value >= 0 ? "+" : "") + value.toFixed(digits) : "n/a";
}

interface Summary {
  p50: number;
  p99: number;
  roundP50Min: number;
  roundP50Max: number;
  hopCpuSequential: number;
  hopCpuConcurrent: number;
  upstreamCpu: number;
  clientCpu: number;
  rps: number;
  rpsMin: number;
  rpsMax: number;
  errors: number;
  requests: number;
}

function summarize(s: Stats): Summary {
  return {
    p50: percentile(s.latency, 50),
    p99: percentile(s.latency, 99),
    roundP50Min: Math.min(...s.roundP50),
    roundP50Max: Math.max(...s.roundP50),
    hopCpuSequential: s.hopCpuSequential / s.latencyRequests,
    hopCpuConcurrent: s.hopCpuConcurrent / s.throughputRequests,
    upstreamCpu: s.upstreamCpuConcurrent / s.throughputRequests,
    clientCpu: s.clientCpuConcurrent / s.throughputRequests,
    rps: median(s.rps),
    rpsMin: Math.min(...s.rps),
    rpsMax: Math.max(...s.rps),
    errors: s.latencyErrors + s.throughputErrors,
    requests: s.latencyRequests + s.throughputRequests,
  };
}

function gitDescription(): string {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "core", "gateway", "gen"], { cwd: ROOT, encoding: "utf8" }).trim();
    return dirty ? `${commit} (core/gateway have uncommitted changes)` : commit;
  } catch {
    return "unknown";
  }
}

function renderReport(stats: Record<Mode, Record<PathName, Stats>>, rss: { floor: number; gateway: number; candidate: number }, totalSeconds: number, profileSection: string): string {
  const c = settings.concurrency;
  const out: string[] = [];
  const cpus = os.cpus();
  out.push(`# Gateway overhead benchmark`, "");
  out.push(
    `${new Date().toISOString()} · commit ${gitDescription()} · Node ${process.version} · ${cpus.length} × ${cpus[0]?.model ?? "?"} · ${os.type()} ${os.release()} · load average before the report ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`,
    "",
    `${settings.rounds} interleaved rounds (${PATHS.join(", ")} in turn); per round and path: ${settings.requests} sequential requests (concurrency 1), then concurrency ${c} for ${settings.rpsSeconds} s (at most ${settings.rpsMax} requests). ` +
      `Warm-up ${settings.warmupSeconds} s at concurrency ${c} plus 200 sequential requests per path and mode. Gateway LOG_LEVEL=${settings.logLevel}${settings.profile ? ", **under --cpu-prof (its CPU and latency are inflated)**" : ""}. ` +
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
        `| ${name} | ${fmt(s.p50, 3)} | ${fmt(s.p99, 3)} | ${fmt(s.roundP50Min, 3)}–${fmt(s.roundP50Max, 3)} | ${direct ? "—" : signed(s.p50 - sum.direct.p50, 3)} | ${direct ? "—" : signed(s.p99 - sum.direct.p99, 3)} | ${direct ? "—" : fmt(s.hopCpuSequential, 0)} | ${direct ? "—" : fmt(s.hopCpuConcurrent, 0)} | ${fmt(s.rps, 0)} | ${fmt(s.rpsMin, 0)}–${fmt(s.rpsMax, 0)} | ${s.errors}/${s.requests} |`,
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
    const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL");
    const label = mode === "json" ? "" : " (streaming, informational)";
    checks.push(
      `| gateway added p50 <= floor added p50 + 0.2 ms${label} | ${fmt(gatewayAdded, 3)} ms vs limit ${fmt(floorAdded + 0.2, 3)} ms (floor ${fmt(floorAdded, 3)} ms) | ${verdict(gatewayAdded <= floorAdded + 0.2)} |`,
      `| gateway CPU/request <= 1.5 × floor CPU/request (c=${c})${label} | ${fmt(sum.gateway.hopCpuConcurrent, 0)} µs vs limit ${fmt(1.5 * sum.floor.hopCpuConcurrent, 0)} µs (floor ${fmt(sum.floor.hopCpuConcurrent, 0)} µs; ratio ${fmt(sum.gateway.hopCpuConcurrent / sum.floor.hopCpuConcurrent, 2)}×) | ${verdict(sum.gateway.hopCpuConcurrent <= 1.5 * sum.floor.hopCpuConcurrent)} |`,
      `| gateway RPS >= 0.9 × floor RPS (c=${c})${label} | ${fmt(sum.gateway.rps, 0)} vs limit ${fmt(0.9 * sum.floor.rps, 0)} (floor ${fmt(sum.floor.rps, 0)}; ratio ${fmt(sum.gateway.rps / sum.floor.rps, 2)}) | ${verdict(sum.gateway.rps >= 0.9 * sum.floor.rps)} |`,
    );
  }
  out.push("## Targets", "", "| target | measured | result |", "| --- | --- | --- |", ...checks, "");
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

function candidateComparison(stats: Record<Mode, Record<PathName, Stats>>): string[] {
  const c = settings.concurrency;
  const out = [
    `## Candidate (${CANDIDATE_ROOT}) vs gateway (${ROOT})`,
    "",
    `| mode | added p50 ms, gateway → candidate | CPU µs/req c=${c}, gateway → candidate | RPS c=${c}, gateway → candidate |`,
    "| --- | --- | --- | --- |",
  ];
  for (const mode of MODES) {
    const direct = summarize(stats[mode].direct);
    const g = summarize(stats[mode].gateway);
    const k = summarize(stats[mode].candidate);
    const change = (before: number, after: number) => `${signed((100 * (after - before)) / before, 1)}%`;
    out.push(
      `| ${mode} | ${fmt(g.p50 - direct.p50, 3)} → ${fmt(k.p50 - direct.p50, 3)} (${signed(k.p50 - g.p50, 3)}) | ${fmt(g.hopCpuConcurrent, 0)} → ${fmt(k.hopCpuConcurrent, 0)} (${change(g.hopCpuConcurrent, k.hopCpuConcurrent)}) | ${fmt(g.rps, 0)} → ${fmt(k.rps, 0)} (${change(g.rps, k.rps)}) |`,
    );
  }
  return out;
}
