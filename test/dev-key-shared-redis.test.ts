// The development key when instances share one Redis: a second `npm start`
// without ROUTER_DEV_KEY keeps the key the first one printed (it says so and
// prints no key of its own), so that key keeps working on both; an operator's
// ROUTER_DEV_KEY still replaces it. Real processes on a private redis-server.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedisServer, type RedisServer } from "./support/redis-server.ts";
import { GATEWAY_ENTRY, spawnEntry, stopAllEntries, type SpawnedEntry } from "./support/spawn-entry.ts";

const TIMEOUT = 30_000;
/** The key an operator gives with ROUTER_DEV_KEY (never printed). */
const CHOSEN = "sk-operator-chosen-dev-key";
const DEV_KEY_LINE = /^Development API key \(set ROUTER_DEV_KEY to choose your own\): (\S+)$/;
const KEPT_LINE =
  "Development API key not made: key_dev already has a key in the shared account store (REDIS_URL), set by another instance or an earlier start " +
  "(the key it printed, or the ROUTER_DEV_KEY it was given), and a generated key never replaces it. Use that key, or set ROUTER_DEV_KEY to a key of your own to replace it.";

/** Status of one chat completion on simulator/echo with this key. */
async function statusWith(url: string, apiKey: string): Promise<number> {
  const client = new OpenAI({ apiKey, baseURL: `${url}/api/v1`, maxRetries: 0 });
  try {
    await client.chat.completions.create({ model: "simulator/echo", messages: [{ role: "user", content: "hi" }] });
    return 200;
  } catch (error) {
    if (error instanceof OpenAI.APIError && error.status !== undefined) return error.status;
    throw error;
  }
}

describe("npm start twice on one Redis without ROUTER_DEV_KEY", { timeout: TIMEOUT }, () => {
  let redis: RedisServer;
  const env = () => ({ PORT: "0", GRPC_PORT: "0", REDIS_URL: redis.url });
  let first: SpawnedEntry;
  let second: SpawnedEntry;
  let firstKey: string;
  const urls: string[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    first = spawnEntry(GATEWAY_ENTRY, env());
    firstKey = DEV_KEY_LINE.exec(await first.waitForLine((line) => DEV_KEY_LINE.test(line), "printing a development key"))![1];
    urls.push(await first.waitForListening(/^gateway listening$/));
    // Started only once the first has seeded: the order an operator's second start has.
    second = spawnEntry(GATEWAY_ENTRY, env());
    urls.push(await second.waitForListening(/^gateway listening$/));
  }, TIMEOUT);

  afterAll(async () => {
    await stopAllEntries();
    await redis?.stop();
  });

  it("the second prints no key of its own, and says whose key stands and how to choose one", () => {
    expect(second.stdoutLines.filter((line) => DEV_KEY_LINE.test(line))).toEqual([]);
    expect(second.stdoutLines).toContain(KEPT_LINE);
    expect(first.stdoutLines).not.toContain(KEPT_LINE);
  });

  it("the first instance's printed key keeps working on both", async () => {
    expect(await statusWith(urls[0], firstKey)).toBe(200);
    expect(await statusWith(urls[1], firstKey)).toBe(200);
  });

  it("an operator's ROUTER_DEV_KEY still replaces it, on every instance", async () => {
    const third = spawnEntry(GATEWAY_ENTRY, { ...env(), ROUTER_DEV_KEY: CHOSEN });
    const url = await third.waitForListening(/^gateway listening$/);
    expect(third.stdoutLines.some((line) => DEV_KEY_LINE.test(line) || line === KEPT_LINE)).toBe(false);
    expect(await statusWith(urls[0], CHOSEN)).toBe(200);
    expect(await statusWith(url, CHOSEN)).toBe(200);
    expect(await statusWith(urls[0], firstKey)).toBe(401);
  });

  // After the test above: the stored key is now one that no instance printed.
  it("a later start without ROUTER_DEV_KEY keeps the operator's key too, and its line claims no printed key", async () => {
    const fourth = spawnEntry(GATEWAY_ENTRY, env());
    const url = await fourth.waitForListening(/^gateway listening$/);
    expect(fourth.stdoutLines.filter((line) => DEV_KEY_LINE.test(line))).toEqual([]);
    expect(fourth.stdoutLines).toContain(KEPT_LINE);
    expect(await statusWith(url, CHOSEN)).toBe(200);
  });
});
