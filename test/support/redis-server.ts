// A private redis-server for tests: an ephemeral port, nothing persisted, and
// stop()/start() on the same port so a test can take Redis away mid-run.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface RedisServer {
  /** redis://127.0.0.1:<port> */
  url: string;
  port: number;
  /**
   * Shuts the server down and waits for the process to exit. Its data is lost,
   * unless `keepData`: then it is saved first and the next start() loads it
   * (an outage of a Redis that persists, as a deployment's does).
   */
  stop(options?: { keepData?: boolean }): Promise<void>;
  /** Starts it again on the same port and waits until it answers. */
  start(): Promise<void>;
  /** Freezes the process (SIGSTOP): connections stay open and nothing answers. */
  freeze(): void;
  /** Lets a frozen process go on (SIGCONT). */
  thaw(): void;
}

/** What redis-server logs once it listens (7.0: "* Ready to accept connections"; 7.2 adds " tcp"). */
const READY_LINE = /Ready to accept connections/;
/** A guard against a server that neither says it is ready nor exits; never reached by a healthy start. */
const STARTUP_GUARD_MS = 10_000;
const EXIT_WAIT_MS = 5_000;

/** The one line a test run shows on a machine without Redis (the README's quick start names it). */
export const REDIS_SERVER_MISSING = "redis-server is not installed: apt-get install -y redis-server (see README)";

/**
 * Whether `redis-server` can be run with this environment's PATH: undefined
 * when it can, else REDIS_SERVER_MISSING (or, for a binary that is there but
 * fails, why).
 */
export async function redisServerProblem(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  const child = spawn("redis-server", ["--version"], { env, stdio: "ignore" });
  try {
    const [code] = await once(child, "exit"); // rejects with the spawn "error" (ENOENT)
    return code === 0 ? undefined : `redis-server --version exited with ${code}`;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? REDIS_SERVER_MISSING : `cannot run redis-server: ${(error as Error).message}`;
  }
}

/** `env` (its PATH) is where redis-server is looked for; the tests' own by default. */
export async function startRedisServer(options: { env?: NodeJS.ProcessEnv } = {}): Promise<RedisServer> {
  const env = options.env ?? process.env;
  const problem = await redisServerProblem(env);
  if (problem) {
    // One line in the test report: the helper's stack frames would only bury it.
    const error = new Error(problem);
    error.stack = problem;
    throw error;
  }
  const port = await freePort();
  // A directory of its own, so nothing can land in the working tree.
  const directory = await mkdtemp(join(tmpdir(), "redis-test-"));
  let running: ChildProcess | undefined;
  let output = "";

  const start = async () => {
    if (running) return;
    output = "";
    await mkdir(directory, { recursive: true });
    const child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory],
      { env, stdio: ["ignore", "pipe", "pipe"] },
    );
    running = child;
    child.stdout?.on("data", (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    child.stderr?.on("data", (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    child.once("error", () => {
      if (running === child) running = undefined;
    });
    child.once("exit", () => {
      if (running === child) running = undefined;
    });
    // Started when the server says so (or fails when it exits): no polling.
    await new Promise<void>((resolve, reject) => {
      const guard = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`redis-server on port ${port} neither became ready nor exited:\n${output}`));
      }, STARTUP_GUARD_MS);
      const settle = (error?: Error) => {
        clearTimeout(guard);
        child.stdout?.off("data", onOutput);
        if (error) reject(error);
        else resolve();
      };
      const onOutput = () => {
        if (READY_LINE.test(output)) settle();
      };
      child.stdout?.on("data", onOutput);
      child.once("error", (error) => settle(new Error(`cannot run redis-server: ${error.message}`)));
      child.once("exit", (code, signal) => settle(new Error(`redis-server exited with ${code ?? signal}:\n${output}`)));
    });
    if (!(await answersPing(port))) {
      child.kill("SIGKILL");
      throw new Error(`redis-server said it was ready but did not answer PING on port ${port}:\n${output}`);
    }
  };

  const stop = async ({ keepData = false } = {}) => {
    const child = running;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    // SHUTDOWN SAVE writes dump.rdb into the server's directory, which start() loads.
    if (keepData) {
      const socket = net.connect(port, "127.0.0.1", () => socket.end("SHUTDOWN SAVE\r\n"));
      socket.on("error", () => {}); // the server closes it as it exits
    } else {
      child.kill("SIGTERM");
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), EXIT_WAIT_MS);
    await exited;
    clearTimeout(timer);
    if (!keepData) await rm(directory, { recursive: true, force: true });
  };

  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    stop,
    freeze: () => running?.kill("SIGSTOP"),
    thaw: () => running?.kill("SIGCONT"),
  };
}

/** A port nobody listens on right now: bind port 0, read it, release it. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** One PING over a raw connection; false on refusal, error or silence. */
export function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let reply = "";
    const finish = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1_000, () => finish(false));
    socket.on("error", () => finish(false));
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk.toString();
      if (reply.includes("\r\n")) finish(reply.startsWith("+PONG"));
    });
  });
}
