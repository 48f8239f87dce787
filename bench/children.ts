// Child processes of the benchmark: start one (Node 24, the CPU probe
// preloaded, an IPC channel), wait until it serves, ask it for its CPU time,
// and stop it.
import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

const PROBE = new URL("./cpu-probe.ts", import.meta.url).href;

export interface Child {
  name: string;
  pid: number;
  url: string;
  /** CPU time (user + system, all threads) used so far, in microseconds. */
  cpuMicros(): Promise<number>;
  /** Resident set size at the last cpuMicros() answer, in bytes. */
  lastRss: number;
  /** GC pauses, event-loop stalls and peak heap between the last two cpuMicros() answers (cpu-probe.ts). */
  lastStats: ProbeStats | undefined;
  /** Writes a V8 heap snapshot of the child to `file` (it pauses the child for seconds). */
  heapSnapshot(file: string): Promise<void>;
  /** Ends the child: closes IPC (the probe exits cleanly), then SIGTERM, then SIGKILL. */
  stop(): Promise<void>;
  /** The last lines the child wrote, for error reports. */
  output(): string;
}

export interface ProbeStats {
  gc: { youngCount: number; youngMs: number; youngMaxMs: number; fullCount: number; fullMs: number; fullMaxMs: number };
  loopDelayMaxMs: number;
  loopDelayP99Ms: number;
  heapPeakBytes: number;
  /** GC pauses over 2 ms: start (ms since the epoch), length, Node's kind (1 minor, 4 major, 8 incremental, 16 weak callbacks). */
  longPauses: { at: number; ms: number; kind: number }[];
}

export interface StartOptions {
  name: string;
  /** Module to run, relative to this file or absolute. */
  module: string | URL;
  args?: string[];
  env?: Record<string, string>;
  execArgv?: string[];
  /** How to know it serves: its own IPC "ready" message (our helpers), or polling a URL (the gateway). */
  ready: { ipc: true } | { poll: string; url: string };
  timeoutMs?: number;
}

export async function startChild(options: StartOptions): Promise<Child> {
  const modulePath = options.module instanceof URL ? fileURLToPath(options.module) : options.module;
  const proc: ChildProcess = fork(modulePath, options.args ?? [], {
    execArgv: ["--import", PROBE, ...(options.execArgv ?? [])],
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    serialization: "json",
  });
  const tail: string[] = [];
  const keep = (data: Buffer) => {
    tail.push(data.toString("utf8"));
    if (tail.length > 50) tail.shift();
  };
  proc.stdout!.on("data", keep);
  proc.stderr!.on("data", keep);
  const exited = once(proc, "exit");

  let nextId = 1;
  const waiting = new Map<number, (micros: number) => void>();
  let url = "";
  let lastRss = 0;
  let lastStats: ProbeStats | undefined;
  let readyResolve: (url: string) => void = () => {};
  const readyByIpc = new Promise<string>((resolve) => (readyResolve = resolve));
  proc.on("message", (message: { type?: string; id?: number; user?: number; system?: number; rss?: number; url?: string; stats?: ProbeStats }) => {
    if (message.type === "bench:ready" && message.url) readyResolve(message.url);
    if (message.type === "bench:cpu") {
      lastRss = message.rss ?? 0;
      lastStats = message.stats;
    }
    if ((message.type === "bench:cpu" || message.type === "bench:heapsnapshot") && message.id !== undefined) {
      waiting.get(message.id)?.((message.user ?? 0) + (message.system ?? 0));
      waiting.delete(message.id);
    }
  });

  const timeoutMs = options.timeoutMs ?? 30_000;
  const failure = (why: string) => new Error(`${options.name}: ${why}\n--- its output ---\n${tail.join("")}`);
  const deadline = sleep(timeoutMs).then(() => {
    throw failure(`not ready within ${timeoutMs} ms`);
  });
  const died = exited.then(([code, signal]) => {
    throw failure(`exited early (code ${code}, signal ${signal})`);
  });
  const stopPolling = new AbortController();
  const ready = "ipc" in options.ready ? readyByIpc : pollUntilServing(options.ready.poll, stopPolling.signal).then(() => (options.ready as { url: string }).url);
  try {
    url = await Promise.race([ready, deadline, died]);
  } catch (error) {
    proc.kill("SIGKILL");
    throw error;
  } finally {
    stopPolling.abort();
  }
  // Stop the race losers from surfacing as unhandled rejections later.
  deadline.catch(() => {});
  died.catch(() => {});

  let stopped: Promise<void> | undefined;
  return {
    name: options.name,
    pid: proc.pid!,
    url,
    get lastRss() {
      return lastRss;
    },
    get lastStats() {
      return lastStats;
    },
    heapSnapshot(file) {
      const id = nextId++;
      return new Promise<void>((resolve) => {
        waiting.set(id, () => resolve());
        proc.send({ type: "bench:heapsnapshot", id, path: file });
      });
    },
    cpuMicros() {
      const id = nextId++;
      return new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(failure("no CPU answer within 5 s")), 5_000);
        waiting.set(id, (micros) => {
          clearTimeout(timer);
          resolve(micros);
        });
        proc.send({ type: "bench:cpu", id });
      });
    },
    stop() {
      stopped ??= (async () => {
        if (proc.exitCode !== null || proc.signalCode !== null) return;
        const gone = exited.then(() => true);
        if (proc.connected) proc.disconnect();
        if (await Promise.race([gone, sleep(5_000, false)])) return;
        proc.kill("SIGTERM");
        if (await Promise.race([gone, sleep(3_000, false)])) return;
        proc.kill("SIGKILL");
        await gone;
      })();
      return stopped;
    },
    output: () => tail.join(""),
  };
}

/** Polls with plain GETs until the server answers anything at all. */
async function pollUntilServing(url: string, stop: AbortSignal): Promise<void> {
  while (!stop.aborted) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      return;
    } catch {
      await sleep(50);
    }
  }
}

/** A port free right now on 127.0.0.1 (the gateway takes its port from PORT). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The private redis-server (redis-child.ts: killed when its owner exits) on a free port. */
export async function startRedisChild(): Promise<{ child: Child; port: number }> {
  const port = await freePort();
  const child = await startChild({ name: "redis-server", module: new URL("./redis-child.ts", import.meta.url), env: { BENCH_REDIS_PORT: String(port) }, ready: { ipc: true } });
  return { child, port };
}
