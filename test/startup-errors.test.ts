// What an operator sees when an entry point cannot start: one line on stderr
// naming the problem and the variable to change, exit code 1, no stack trace,
// and no credentials printed for a server that never ran.
import { once } from "node:events";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { describeListenError } from "../core/listen-check.ts";
import { createMemoryAccountStores } from "../core/accounts/memory-store.ts";
import { createCoreOrExit, listenOrExit } from "../core/startup.ts";
import { TEST_ENV, testConfig } from "./support/harness.ts";
import { freePort } from "./support/redis-server.ts";
import { CORE_ENTRY, GATEWAY_ENTRY, spawnEntry, stopAllEntries } from "./support/spawn-entry.ts";

const TIMEOUT = 30_000;

afterAll(stopAllEntries);

/** Runs an entry point to its end and checks it failed the way an operator can act on. */
async function expectOneLineFailure(script: string, env: Record<string, string>, args: string[] = []) {
  const entry = spawnEntry(script, { LOG_LEVEL: "silent", ...env }, args);
  const exit = await entry.exited;
  const stderr = entry.stderr();
  expect(exit).toEqual({ code: 1, signal: null });
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr.endsWith("\n")).toBe(true);
  expect(stderr.trimEnd().split("\n")).toHaveLength(1);
  return { stderr: stderr.trimEnd(), stdout: entry.stdoutLines };
}

const CREDENTIALS = /Development API key|Admin token/;

describe("a port already in use", { timeout: TIMEOUT }, () => {
  let taken: net.Server;
  let port: number;

  beforeAll(async () => {
    taken = net.createServer();
    taken.listen(0, "127.0.0.1");
    await once(taken, "listening");
    port = (taken.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => taken.close(resolve));
  });

  const inUse = (variable: string) => `Cannot listen on 127.0.0.1:${port}: the port is already in use (set ${variable} to choose another)`;

  it("npm start, PORT taken: one line, before any credential is printed", async () => {
    const { stderr, stdout } = await expectOneLineFailure(GATEWAY_ENTRY, { PORT: String(port), GRPC_PORT: "0" });
    expect(stderr).toBe(inUse("PORT"));
    expect(stdout.filter((line) => CREDENTIALS.test(line))).toEqual([]);
  });

  it("npm start, GRPC_PORT taken: one line, before any credential is printed", async () => {
    const { stderr, stdout } = await expectOneLineFailure(GATEWAY_ENTRY, { PORT: "0", GRPC_PORT: String(port) });
    expect(stderr).toBe(inUse("GRPC_PORT"));
    expect(stdout.filter((line) => CREDENTIALS.test(line))).toEqual([]);
  });

  it("start:core, GRPC_PORT taken", async () => {
    const { stderr, stdout } = await expectOneLineFailure(CORE_ENTRY, { GRPC_PORT: String(port) });
    expect(stderr).toBe(inUse("GRPC_PORT"));
    expect(stdout.filter((line) => CREDENTIALS.test(line))).toEqual([]);
  });

  it("start:gateway, PORT taken", async () => {
    const { stderr } = await expectOneLineFailure(GATEWAY_ENTRY, { PORT: String(port), CORE_URL: "http://127.0.0.1:1" }, ["--split"]);
    expect(stderr).toBe(inUse("PORT"));
  });

  it("npm start with PORT and GRPC_PORT equal names the clash", async () => {
    // The taken port is used only as a number here: the clash is found before binding.
    const { stderr } = await expectOneLineFailure(GATEWAY_ENTRY, { PORT: String(port), GRPC_PORT: String(port) });
    expect(stderr).toBe(`PORT and GRPC_PORT are both ${port}; they must differ`);
  });
});

describe("an invalid CORE_URL for start:gateway", { timeout: TIMEOUT }, () => {
  it.each(["not a url", "ftp://x", "127.0.0.1:50051"])("%j is refused in one line", async (coreUrl) => {
    const { stderr } = await expectOneLineFailure(GATEWAY_ENTRY, { PORT: "0", CORE_URL: coreUrl }, ["--split"]);
    expect(stderr).toBe(`CORE_URL must be an http:// or https:// URL (for example http://127.0.0.1:50051), got ${JSON.stringify(coreUrl)}`);
  });

  it("a missing one is named", async () => {
    const { stderr } = await expectOneLineFailure(GATEWAY_ENTRY, { PORT: "0" }, ["--split"]);
    expect(stderr).toBe("CORE_URL is required with start:gateway (for example http://127.0.0.1:50051)");
  });
});

it("an invalid PORT is refused before any credential is printed", { timeout: TIMEOUT }, async () => {
  const { stderr, stdout } = await expectOneLineFailure(GATEWAY_ENTRY, { PORT: "eighty", GRPC_PORT: "0" });
  expect(stderr).toBe('PORT must be a port number, got "eighty"');
  expect(stdout.filter((line) => CREDENTIALS.test(line))).toEqual([]);
});

// JavaScript would read these as 0 (an ephemeral port); a port is written in decimal digits, as the admin CLI reads GRPC_PORT.
it.each([
  ["PORT", { PORT: "0.0", GRPC_PORT: "0" }],
  ["GRPC_PORT", { PORT: "0", GRPC_PORT: "0x0" }],
  ["GRPC_PORT", { PORT: "0", GRPC_PORT: " 0" }],
])("%s that is a number but not written as a port is refused", { timeout: TIMEOUT }, async (variable, env) => {
  const { stderr } = await expectOneLineFailure(GATEWAY_ENTRY, env);
  expect(stderr).toBe(`${variable} must be a port number, got ${JSON.stringify(env[variable as keyof typeof env])}`);
});

describe("describeListenError", () => {
  const target = { host: "127.0.0.1", port: 8080, variable: "PORT" as const };
  const failure = (code: string) => Object.assign(new Error(`listen ${code}: raw detail`), { code });

  it.each([
    ["EADDRINUSE", "Cannot listen on 127.0.0.1:8080: the port is already in use (set PORT to choose another)"],
    ["EACCES", "Cannot listen on 127.0.0.1:8080: permission denied (ports below 1024 need privileges; set PORT to choose another)"],
    ["EADDRNOTAVAIL", "Cannot listen on 127.0.0.1:8080: the address is not one of this machine's (set HOST to choose another)"],
    ["ENOTFOUND", 'Cannot listen on 127.0.0.1:8080: HOST "127.0.0.1" does not resolve to an address'],
    ["EOTHER", "Cannot listen on 127.0.0.1:8080: listen EOTHER: raw detail"],
  ])("%s", (code, line) => {
    expect(describeListenError(failure(code), target)).toBe(line);
  });
});

describe("listenOrExit: a port lost between the check and the listen", () => {
  it("still ends in one line and exit 1", async () => {
    const written: string[] = [];
    const write = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (written.push(String(chunk)), true));
    const exit = vi.spyOn(process, "exit").mockImplementation((code) => {
      throw new Error(`exit ${code}`);
    });
    try {
      const inUse = Object.assign(new Error("listen EADDRINUSE: address already in use 127.0.0.1:50051"), { code: "EADDRINUSE" });
      await expect(listenOrExit({ host: "127.0.0.1", port: 50051, variable: "GRPC_PORT" }, () => Promise.reject(inUse))).rejects.toThrow("exit 1");
    } finally {
      write.mockRestore();
      exit.mockRestore();
    }
    expect(written).toEqual(["Cannot listen on 127.0.0.1:50051: the port is already in use (set GRPC_PORT to choose another)\n"]);
  });

  it("passes a successful listen through", async () => {
    expect(await listenOrExit({ host: "127.0.0.1", port: 0, variable: "PORT" }, async () => "server")).toBe("server");
  });
});

describe("createCoreOrExit: Redis unreachable for the conversation store", () => {
  it("names Redis, not the account store, and closes what was already opened", { timeout: TIMEOUT }, async () => {
    const stores = createMemoryAccountStores();
    const closeStores = vi.spyOn(stores, "close");
    const written: string[] = [];
    const write = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (written.push(String(chunk)), true));
    const exit = vi.spyOn(process, "exit").mockImplementation((code) => {
      throw new Error(`exit ${code}`);
    });
    try {
      const env = { ...TEST_ENV, REDIS_URL: `redis://127.0.0.1:${await freePort()}` };
      await expect(createCoreOrExit({ config: testConfig("http://127.0.0.1:9/v1"), env, stores })).rejects.toThrow("exit 1");
    } finally {
      write.mockRestore();
      exit.mockRestore();
    }
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/^Cannot start: Redis at REDIS_URL is unavailable \(.+\)\n$/);
    expect(closeStores).toHaveBeenCalled();
  });
});
