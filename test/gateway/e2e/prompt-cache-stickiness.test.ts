// Prompt-cache stickiness through the gateway: the dearer of a model's two
// providers reports cached prompt tokens, and later requests of the same
// organisation with the same opening go to it first (the trace names the rule)
// until the injected clock passes the configured time; another organisation,
// another opening, provider.order and provider.only are not moved; and two
// instances on one Redis share what either saw.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../../core/config/load.ts";
import type { RouterConfig } from "../../../core/config/schema.ts";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../support/harness.ts";
import { startRedisServer, type RedisServer } from "../../support/redis-server.ts";
import { startTimedUpstream, testClock, type TimedUpstream } from "../../support/timed-upstream.ts";

const OTHER_KEY = "sk-other-org";
const STICKY = "test/ok@dear;ok;prompt_cache_sticky";
const clock = testClock();
let upstream: TimedUpstream;

/** The test configuration with a second organisation, and stickiness for `seconds` when given. */
function config(seconds?: number): RouterConfig {
  const base = testConfig(upstream.url);
  const [test] = base.organizations;
  return parseConfig(
    JSON.stringify({
      ...base,
      organizations: [...base.organizations, { ...test, id: "org_other", keys: [{ ...test.keys[0], id: "key_other", env: "OTHER_API_KEY" }] }],
      // Without `seconds`, the default (the harness turns it off).
      routing: seconds === undefined ? {} : { cache_stickiness_seconds: seconds },
    }),
  );
}

const start = (seconds?: number, env: Record<string, string> = {}) => startGateway(config(seconds), { core: { now: clock.now }, env: { OTHER_API_KEY: OTHER_KEY, ...env } });

async function chat(target: Gateway, messages: object[], extra: object = {}, key = TEST_KEY) {
  const response = await fetch(`${target.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "test/ok", messages, ...extra }),
  });
  expect(response.status).toBe(200);
  await response.text();
  return { provider: response.headers.get("x-router-provider"), trace: response.headers.get("x-router-trace") };
}

const opening = [
  { role: "system", content: "You review pull requests of the gateway. Be brief." },
  { role: "user", content: "Review the first file." },
];
const laterTurn = [...opening, { role: "assistant", content: "It looks fine." }, { role: "user", content: "And the second?" }];

beforeAll(async () => {
  upstream = await startTimedUpstream(clock);
});
afterAll(async () => {
  await upstream?.close();
});
beforeEach(() => {
  // Only the dear provider caches prompts; the cheap one is tried first by default.
  upstream.cachedTokens.clear();
  upstream.cachedTokens.set("ok-dear", 4);
});

describe("one instance, stickiness for 300 s (the default)", () => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await start();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it("after dear showed cache activity, the same opening goes to dear first (traced), later turns too, until the time is up", async () => {
    const before = await chat(gateway, opening);
    expect(before).toEqual({ provider: "cheap", trace: "test/ok@cheap;ok" });
    // What an answer shows is remembered even when provider.only sent it there.
    expect((await chat(gateway, opening, { provider: { only: ["dear"] } })).provider).toBe("dear");
    expect(await chat(gateway, opening)).toEqual({ provider: "dear", trace: STICKY });
    expect(await chat(gateway, laterTurn, { stream: true })).toEqual({ provider: "dear", trace: STICKY });
    // Each answer with cache activity renews the time: 200 s after the last one it still holds.
    clock.advance(200_000);
    expect((await chat(gateway, laterTurn)).trace).toBe(STICKY);
    clock.advance(300_000);
    expect(await chat(gateway, laterTurn)).toEqual({ provider: "cheap", trace: "test/ok@cheap;ok" });
  });

  it("another organisation, another opening, provider.order and provider.only are not moved", async () => {
    await chat(gateway, opening, { provider: { only: ["dear"] } });
    expect((await chat(gateway, opening)).trace).toBe(STICKY);
    expect(await chat(gateway, opening, {}, OTHER_KEY)).toEqual({ provider: "cheap", trace: "test/ok@cheap;ok" });
    const otherSystem = [{ role: "system", content: "You write release notes." }, opening[1]];
    expect((await chat(gateway, otherSystem)).provider).toBe("cheap");
    const otherFirst = [opening[0], { role: "user", content: "Review the last file." }];
    expect((await chat(gateway, otherFirst)).provider).toBe("cheap");
    expect(await chat(gateway, opening, { provider: { order: ["cheap", "dear"] } })).toEqual({ provider: "cheap", trace: "test/ok@cheap;ok" });
    expect((await chat(gateway, opening, { provider: { only: ["cheap"] } })).provider).toBe("cheap");
  });

  it("an answer without cache activity remembers nothing; a cache breakpoint moved to the newest message keeps the opening (Messages)", async () => {
    upstream.cachedTokens.clear();
    const system = "You translate product pages.";
    const anthropic = new Anthropic({ apiKey: TEST_KEY, baseURL: gateway.url, maxRetries: 0 });
    const first = { role: "user" as const, content: [{ type: "text" as const, text: "Page one.", cache_control: { type: "ephemeral" as const } }] };
    const send = (messages: Anthropic.MessageParam[], provider?: object) =>
      anthropic.messages.create({ model: "test/ok", max_tokens: 10, system, messages, ...(provider ? { provider } : {}) } as never).withResponse();
    await send([first], { only: ["dear"] });
    expect((await send([first])).response.headers.get("x-router-provider")).toBe("cheap");
    upstream.cachedTokens.set("ok-dear", 4);
    await send([first], { only: ["dear"] });
    const next = [
      { role: "user" as const, content: [{ type: "text" as const, text: "Page one." }] },
      { role: "assistant" as const, content: "Seite eins." },
      { role: "user" as const, content: [{ type: "text" as const, text: "Page two.", cache_control: { type: "ephemeral" as const } }] },
    ];
    const sticky = await send(next);
    expect(sticky.response.headers.get("x-router-provider")).toBe("dear");
    expect(sticky.response.headers.get("x-router-trace")).toBe(STICKY);
  });
});

describe("cache_stickiness_seconds: 0", () => {
  it("turns it off", async () => {
    const gateway = await start(0);
    try {
      await chat(gateway, opening, { provider: { only: ["dear"] } });
      expect(await chat(gateway, opening)).toEqual({ provider: "cheap", trace: "test/ok@cheap;ok" });
    } finally {
      await gateway.close();
    }
  });
});

describe("two instances sharing it through Redis", () => {
  let redis: RedisServer;
  const instances: Gateway[] = [];
  beforeAll(async () => {
    redis = await startRedisServer();
    for (let i = 0; i < 2; i++) instances.push(await start(60, { REDIS_URL: redis.url, REDIS_PREFIX: "sticky-test:" }));
  });
  afterAll(async () => {
    for (const instance of instances) await instance.close();
    await redis?.stop();
  });

  it("what one instance saw caching, the other routes to first, for the same organisation, until the time is up", async () => {
    const [a, b] = instances;
    expect((await chat(b, opening)).provider).toBe("cheap");
    await chat(a, opening, { provider: { only: ["dear"] } });
    // Remembering is written in the background: the other instance sees it once Redis has it.
    await vi.waitFor(async () => expect(await chat(b, laterTurn)).toEqual({ provider: "dear", trace: STICKY }));
    expect((await chat(b, opening, {}, OTHER_KEY)).provider).toBe("cheap");
    clock.advance(61_000);
    expect((await chat(a, opening)).provider).toBe("cheap");
    expect((await chat(b, laterTurn)).provider).toBe("cheap");
  });
});
