// LOG_LEVEL and REDIS_URL that cannot work: one line on stderr naming the
// variable, exit 1, before any credential is printed (not pino's or the Redis
// client's stack trace after the development key).
import { afterAll, describe, expect, it } from "vitest";
import { CORE_ENTRY, GATEWAY_ENTRY, spawnEntry, stopAllEntries } from "./support/spawn-entry.ts";

const TIMEOUT = 30_000;

afterAll(stopAllEntries);

const LOG_LEVEL_LINE = 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "bogus"';
const redisLine = (value: string) =>
  `REDIS_URL must be a redis:// or rediss:// URL (for example redis://127.0.0.1:6379), got ${JSON.stringify(value)}`;

describe.each([
  ["npm start", GATEWAY_ENTRY],
  ["npm run start:core", CORE_ENTRY],
])("%s with a setting that cannot work", { timeout: TIMEOUT }, (_name, script) => {
  it.each([
    ["LOG_LEVEL=bogus", { LOG_LEVEL: "bogus" }, LOG_LEVEL_LINE],
    ["REDIS_URL=notaurl", { LOG_LEVEL: "silent", REDIS_URL: "notaurl" }, redisLine("notaurl")],
    ["REDIS_URL=http://127.0.0.1:6379", { LOG_LEVEL: "silent", REDIS_URL: "http://127.0.0.1:6379" }, redisLine("http://127.0.0.1:6379")],
  ])("%s: one line, exit 1, no credentials printed", async (_what, env, line) => {
    const entry = spawnEntry(script, { PORT: "0", GRPC_PORT: "0", ...env });
    const exit = await entry.exited;
    expect(entry.stderr()).toBe(line + "\n");
    expect(exit).toEqual({ code: 1, signal: null });
    expect(entry.stdoutLines.filter((stdoutLine) => /Development API key|Admin token/.test(stdoutLine))).toEqual([]);
  });
});
