// The load generator: undici Pools in the benchmark's own process, keep-alive,
// one pool per (server, concurrency) so connections = concurrency and stay warm
// between rounds. Every run is bounded in request count and in time. Also the
// pieces of the rounds both suites share: the warm-up, a measured phase (pause,
// snapshot, run, snapshot), the tallies of the phases, percentiles.
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";

export interface Target {
  name: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface Client {
  origin: string;
  pool: Pool;
  connections: number;
  /** Requests sent so far (all runs, warm-up included). */
  sent: number;
}

export function createClient(origin: string, connections: number): Client {
  const pool = new Pool(origin, {
    connections,
    pipelining: 1,
    keepAliveTimeout: 120_000,
    keepAliveMaxTimeout: 600_000,
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  return { origin, pool, connections, sent: 0 };
}

/** Per server: a client for sequential requests (1 connection) and one for `concurrency`; `all` lists them, to close. */
export function clientPairs<K extends string>(names: readonly K[], originOf: (name: K) => string, concurrency: number) {
  const sequential = {} as Record<K, Client>;
  const concurrent = {} as Record<K, Client>;
  const all: Client[] = [];
  for (const name of names) {
    sequential[name] = createClient(originOf(name), 1);
    concurrent[name] = createClient(originOf(name), concurrency);
    all.push(sequential[name], concurrent[name]);
  }
  return { sequential, concurrent, all };
}

/** One request, its answer read to the end. Resolves to the answer's text when `keep`. */
export async function send(client: Client, target: Target, keep = false): Promise<{ status: number; text: string }> {
  client.sent++;
  const response = await client.pool.request({ path: target.path, method: "POST", headers: target.headers, body: target.body });
  if (keep) return { status: response.statusCode, text: await response.body.text() };
  await response.body.dump({ limit: Number.MAX_SAFE_INTEGER });
  return { status: response.statusCode, text: "" };
}

export interface LatencyResult {
  /** Milliseconds, in order of sending. */
  samples: number[];
  errors: number;
}

/** `count` requests one after another (concurrency 1), each timed from send to the last byte. */
export async function latencyRun(client: Client, target: Target, count: number, maxMs: number): Promise<LatencyResult> {
  const samples: number[] = [];
  let errors = 0;
  const deadline = performance.now() + maxMs;
  for (let i = 0; i < count && performance.now() < deadline; i++) {
    const started = performance.now();
    try {
      const { status } = await send(client, target);
      if (status === 200) samples.push(performance.now() - started);
      else errors++;
    } catch {
      errors++;
    }
  }
  return { samples, errors };
}

export interface ThroughputResult {
  completed: number;
  errors: number;
  seconds: number;
  rps: number;
}

/** `client.connections` workers in closed loop until `maxRequests` are sent or `maxMs` has passed. */
export async function throughputRun(client: Client, target: Target, maxRequests: number, maxMs: number): Promise<ThroughputResult> {
  let issued = 0;
  let completed = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + maxMs;
  const worker = async () => {
    while (issued < maxRequests && performance.now() < deadline) {
      issued++;
      try {
        const { status } = await send(client, target);
        if (status === 200) completed++;
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: client.connections }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { completed, errors, seconds, rps: completed / seconds };
}

/** The first choice's message content of a chat.completion answer; undefined when there is none or it is not JSON. */
export function completionContent(text: string): string | undefined {
  try {
    return (JSON.parse(text) as { choices?: { message?: { content?: string } }[] }).choices?.[0]?.message?.content;
  } catch {
    return undefined;
  }
}

/** Sequential requests of the warm-up, after its load (the floor needs the load before V8 has optimised it). */
export const WARMUP_SEQUENTIAL = 200;

/** Warm-up of one server and target: `seconds` of load at the concurrent client's concurrency, then WARMUP_SEQUENTIAL sequential requests. */
export async function warmUp(concurrent: Client, sequential: Client, target: Target, seconds: number, maxRequests: number) {
  const load = await throughputRun(concurrent, target, maxRequests, seconds * 1000);
  const requests = await latencyRun(sequential, target, WARMUP_SEQUENTIAL, 5_000);
  return { load, sequential: requests };
}

/**
 * One measured phase: a pause of `settleMs` (so the previous phase's leftovers,
 * GC and socket churn, do not land in it), a snapshot, the run, a snapshot.
 */
export async function measuredPhase<T, S>(settleMs: number, snapshot: () => Promise<S>, run: () => Promise<T>): Promise<{ result: T; before: S; after: S }> {
  await sleep(settleMs);
  const before = await snapshot();
  const result = await run();
  const after = await snapshot();
  return { result, before, after };
}

/** The latency phases (concurrency 1) of one server and target, over all rounds. */
export interface LatencyTally {
  /** Pooled samples, ms. */
  latency: number[];
  roundP50: number[];
  roundP99: number[];
  latencyRequests: number;
  latencyErrors: number;
}

/** The throughput phases (concurrency N) of one server and target, over all rounds. */
export interface ThroughputTally {
  rps: number[];
  throughputRequests: number;
  throughputErrors: number;
}

export function emptyTally(): LatencyTally & ThroughputTally {
  return { latency: [], roundP50: [], roundP99: [], latencyRequests: 0, latencyErrors: 0, rps: [], throughputRequests: 0, throughputErrors: 0 };
}

export function addLatency(into: LatencyTally, result: LatencyResult): void {
  into.latency.push(...result.samples);
  into.roundP50.push(percentile(result.samples, 50));
  into.roundP99.push(percentile(result.samples, 99));
  into.latencyRequests += result.samples.length + result.errors;
  into.latencyErrors += result.errors;
}

export function addThroughput(into: ThroughputTally, result: ThroughputResult): void {
  into.rps.push(result.rps);
  into.throughputRequests += result.completed + result.errors;
  into.throughputErrors += result.errors;
}

/** Nearest-rank percentile of unsorted samples. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
