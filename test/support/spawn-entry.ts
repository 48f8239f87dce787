// An entry point (gateway/main.ts, core/main.ts) as a child process, as an
// operator runs it: the environment contract cleared then set, its stdout read
// line by line so its pino "listening" lines give the ephemeral ports it bound.
// The one implementation for test/deployment.test.ts and the multi-instance tests.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const GATEWAY_ENTRY = join(ROOT, "gateway", "main.ts");
export const CORE_ENTRY = join(ROOT, "core", "main.ts");
// The entry points need Node >= 22 (they are TypeScript run by type stripping).
// vitest runs on the project's Node 24; the system `node` may be older.
const NODE = Number(process.versions.node.split(".")[0]) >= 22 ? process.execPath : join(ROOT, "node_modules", ".bin", "node");

/** Variables of the entry points' contract, removed so the test's own environment cannot leak in. */
const CONTRACT = [
  "HOST",
  "PORT",
  "GRPC_PORT",
  "ROUTER_CONFIG",
  "ROUTER_DEV_KEY",
  "ROUTER_ADMIN_TOKEN",
  "CORE_URL",
  "LOG_LEVEL",
  "REDIS_URL",
  "REDIS_PREFIX",
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "GEMINI_API_KEY",
  "XAI_API_KEY",
  "DEEPSEEK_API_KEY",
  "MOONSHOT_API_KEY",
];

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SpawnedEntry {
  child: ChildProcess;
  stdoutLines: string[];
  stderr(): string;
  /** Settles once the process has ended and all its output has been read. */
  exited: Promise<Exit>;
  /** Resolves with the first stdout line that matches (already seen or to come); rejects if the process ends first. */
  waitForLine(matches: (line: string) => boolean, what: string): Promise<string>;
  /** The `url` of the first pino line whose msg matches, asserted to be a bound port on 127.0.0.1. */
  waitForListening(msg: RegExp): Promise<string>;
  /** Asks the process to stop as an operator would (SIGTERM), and waits for its exit. */
  stop(): Promise<Exit>;
}

const spawned = new Set<SpawnedEntry>();

// If the test worker itself goes away, take the children with it.
process.once("exit", () => {
  for (const entry of spawned) entry.child.kill("SIGKILL");
});

export function spawnEntry(script: string, env: Record<string, string>, args: string[] = []): SpawnedEntry {
  const base = { ...process.env };
  for (const name of CONTRACT) delete base[name];
  const child = spawn(NODE, [script, ...args], {
    cwd: ROOT,
    env: { ...base, HOST: "127.0.0.1", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stdoutLines: string[] = [];
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (text: string) => (stderr += text));
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout! }).on("line", (line) => {
    stdoutLines.push(line);
    for (const wake of waiters) wake();
  });
  // "close" comes after the output streams have ended, so everything printed has been read.
  const exited = once(child, "close").then(([code, signal]) => ({ code, signal }) as Exit);
  let ended = false;
  void exited.then(() => {
    ended = true;
    spawned.delete(entry);
    for (const wake of waiters) wake();
  });

  const entry: SpawnedEntry = {
    child,
    stdoutLines,
    stderr: () => stderr,
    exited,
    waitForLine(matches, what) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const line = stdoutLines.find(matches);
          if (line !== undefined) {
            waiters.delete(check);
            resolve(line);
          } else if (ended) {
            waiters.delete(check);
            reject(new Error(`${script} ended before ${what}:\nstdout:\n${stdoutLines.join("\n")}\nstderr:\n${stderr}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
    async waitForListening(msg) {
      const line = await entry.waitForLine((l) => msg.test(logLine(l)?.msg ?? ""), `logging ${msg}`);
      const url = logLine(line)?.url ?? "";
      // An ephemeral port is logged as the port actually bound, never as 0.
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
      return url;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      // A safety net for a process that ignores SIGTERM, not a synchronisation: the exit is awaited.
      const force = setTimeout(() => child.kill("SIGKILL"), 10_000);
      try {
        return await exited;
      } finally {
        clearTimeout(force);
      }
    },
  };
  spawned.add(entry);
  return entry;
}

/** Stops every entry this module started that is still running (for an afterAll). */
export async function stopAllEntries(): Promise<void> {
  await Promise.all([...spawned].map((entry) => entry.stop()));
}

/** A stdout line parsed as a pino record, or undefined for any other line (e.g. the printed development key). */
export function logLine(line: string): { msg?: string; url?: string; level?: number } | undefined {
  try {
    const parsed = JSON.parse(line);
    return typeof parsed === "object" && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}
