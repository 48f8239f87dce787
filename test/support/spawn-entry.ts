// An entry point (gateway/main.ts, core/main.ts) as a child process, as
// test/deployment.test.ts runs them: the environment contract cleared then set,
// its pino "listening" lines awaited for the ephemeral ports it bound.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const GATEWAY_ENTRY = join(ROOT, "gateway", "main.ts");
// The entry points need Node >= 22 (TypeScript by type stripping); the system `node` may be older.
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
  "XAI_API_KEY",
  "DEEPSEEK_API_KEY",
  "MOONSHOT_API_KEY",
];

export interface SpawnedEntry {
  child: ChildProcess;
  stdoutLines: string[];
  stderr(): string;
  /** The `url` of the first pino line whose msg matches; rejects if the process ends first. */
  waitForListening(msg: RegExp): Promise<string>;
  /** SIGTERM, then waits for the exit (SIGKILL after 10 s as a safety net). */
  stop(): Promise<void>;
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
  const exited = once(child, "close");
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
    waitForListening(msg) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const url = stdoutLines.map(logLine).find((line) => line && msg.test(line.msg ?? ""))?.url;
          if (url) {
            waiters.delete(check);
            resolve(url);
          } else if (ended) {
            waiters.delete(check);
            reject(new Error(`${script} ended before logging ${msg}:\nstdout:\n${stdoutLines.join("\n")}\nstderr:\n${stderr}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const force = setTimeout(() => child.kill("SIGKILL"), 10_000);
      try {
        await exited;
      } finally {
        clearTimeout(force);
      }
    },
  };
  spawned.add(entry);
  return entry;
}

function logLine(line: string): { msg?: string; url?: string } | undefined {
  try {
    const parsed = JSON.parse(line);
    return typeof parsed === "object" && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}
