// `npm test` needs redis-server on PATH (the README says so). Without it the
// Redis tests must fail at once with one line saying how to install it, not
// with a spawn error or a timeout. PATH is injected: no machine change needed.
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisServerProblem, startRedisServer } from "./support/redis-server.ts";

describe("the redis-server prerequisite", () => {
  let emptyDir: string;
  let fakeDir: string;

  beforeAll(async () => {
    emptyDir = await mkdtemp(join(tmpdir(), "no-redis-"));
    fakeDir = await mkdtemp(join(tmpdir(), "fake-redis-"));
  });

  afterAll(async () => {
    await rm(emptyDir, { recursive: true, force: true });
    await rm(fakeDir, { recursive: true, force: true });
  });

  /** A redis-server on `fakeDir` that prints a version and exits with `code`. */
  async function fakeRedisServer(code: number) {
    const path = join(fakeDir, "redis-server");
    await writeFile(path, `#!/bin/sh\necho "Redis server v=7.0.15"\nexit ${code}\n`);
    await chmod(path, 0o755);
  }

  it("names the install command when redis-server is not on PATH", async () => {
    expect(await redisServerProblem({ PATH: emptyDir })).toBe("redis-server is not installed: apt-get install -y redis-server (see README)");
  });

  it("finds one that is on PATH", async () => {
    await fakeRedisServer(0);
    expect(await redisServerProblem({ PATH: fakeDir })).toBeUndefined();
  });

  it("reports one on PATH that does not run", async () => {
    await fakeRedisServer(3);
    expect(await redisServerProblem({ PATH: fakeDir })).toBe("redis-server --version exited with 3");
  });

  it("startRedisServer fails at once with that one line, no stack frames", async () => {
    const failure = await startRedisServer({ env: { PATH: emptyDir } }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(failure!.message).toBe("redis-server is not installed: apt-get install -y redis-server (see README)");
    expect(failure!.stack).toBe(failure!.message);
  });
});
