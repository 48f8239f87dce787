// startRedisServer knows a server is up when it says so ("Ready to accept
// connections") and has failed when it exits: no polling. Fake servers on an
// injected PATH show each outcome; the real one is used by the Redis tests.
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { answersPing, startRedisServer } from "./support/redis-server.ts";

describe("startRedisServer", () => {
  let fakeDir: string;

  beforeAll(async () => {
    fakeDir = await mkdtemp(join(tmpdir(), "fake-redis-start-"));
  });

  afterAll(async () => {
    await rm(fakeDir, { recursive: true, force: true });
  });

  /** A redis-server that answers --version, and otherwise runs `body` (sh). */
  async function fakeRedisServer(body: string) {
    const path = join(fakeDir, "redis-server");
    await writeFile(path, `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "Redis server v=7.0.15"; exit 0; fi\n${body}\n`);
    await chmod(path, 0o755);
  }

  const failureOf = (started: Promise<unknown>) =>
    started.then(
      () => expect.fail("startRedisServer should have failed"),
      (error: unknown) => error as Error,
    );

  it("fails as soon as the server exits, with what it said", async () => {
    await fakeRedisServer(`echo "# Could not create server TCP listening socket: bind: Address already in use"\nexit 1`);
    const failure = await failureOf(startRedisServer({ env: { PATH: `${fakeDir}:/usr/bin:/bin` } }));
    expect(failure.message).toMatch(/^redis-server exited with 1:\n.*Address already in use/s);
  });

  it("fails when the server says it is ready but does not answer PING, and stops it", async () => {
    // exec: the sleeping process is the one startRedisServer started (and must stop).
    const pidFile = join(fakeDir, "pid");
    await fakeRedisServer(`echo $$ > ${pidFile}\necho "* Ready to accept connections"\nexec sleep 30`);
    const failure = await failureOf(startRedisServer({ env: { PATH: `${fakeDir}:/usr/bin:/bin` } }));
    expect(failure.message).toMatch(/^redis-server said it was ready but did not answer PING on port \d+:\n\* Ready to accept connections/);
    const pid = Number(await readFile(pidFile, "utf8"));
    // Gone once reaped: signal 0 only asks whether the process exists.
    await vi.waitFor(() => expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: "ESRCH" })));
  });

  it("starts a real server, and starts it again on the same port after a stop", async () => {
    const server = await startRedisServer();
    try {
      await server.stop();
      await server.start();
      expect(await answersPing(server.port)).toBe(true);
    } finally {
      await server.stop();
    }
  });
});
