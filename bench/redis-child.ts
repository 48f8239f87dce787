// A private redis-server for the accounts benchmark, owned by a small Node
// child (started like the others, with the CPU probe and an IPC channel): it
// runs redis-server on the port given in BENCH_REDIS_PORT, in a temporary
// directory, nothing persisted (--save "" --appendonly no), reports ready over
// IPC once PING answers, and kills redis-server when it exits. The probe makes
// it exit when the benchmark goes, even when the benchmark is killed, so no
// redis-server outlives a run.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
// The same raw PING the tests use to know a redis-server is up.
import { answersPing } from "../test/support/redis-server.ts";
import { setTimeout as sleep } from "node:timers/promises";

const port = Number(process.env.BENCH_REDIS_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error("BENCH_REDIS_PORT is required");

const directory = mkdtempSync(path.join(os.tmpdir(), "rtr-bench-redis-"));
const server = spawn(
  "redis-server",
  ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory, "--loglevel", "warning"],
  { stdio: ["ignore", "inherit", "inherit"] },
);
process.on("exit", () => {
  if (server.exitCode === null && server.signalCode === null) server.kill("SIGTERM");
  rmSync(directory, { recursive: true, force: true });
});
process.once("SIGTERM", () => process.exit(0));
server.once("error", (error) => {
  process.stderr.write(`cannot run redis-server: ${error.message}\n`);
  process.exit(1);
});
server.once("exit", (code, signal) => {
  process.stderr.write(`redis-server exited (code ${code}, signal ${signal})\n`);
  process.exit(1);
});


for (let poll = 0; poll < 200; poll++) {
  if (await answersPing(port)) {
    process.send?.({ type: "bench:ready", url: `redis://127.0.0.1:${port}`, pid: server.pid });
    break;
  }
  await sleep(25);
}
