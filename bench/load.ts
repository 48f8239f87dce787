// The load generator: undici Pools in the benchmark's own process, keep-alive,
// one pool per (server, concurrency) so connections = concurrency and stay warm
// between rounds. Every run is bounded in request count and in time.
import { performance } from "node:perf_hooks";
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
