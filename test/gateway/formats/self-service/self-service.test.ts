// GET /api/v1/key and GET /api/v1/credits, the self-service endpoints OpenRouter clients call
// with their own key (issue 18, 3), through HTTP on memory and Redis stores, in-process and split:
// the key's label, limits, spending and today's free quota; the organisation's credits and
// spending, which move exactly with each settled charge; nothing of another key or organisation.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryAccountStores } from "../../../../core/accounts/memory-store.ts";
import { createRedisAccountStores } from "../../../../core/accounts/redis-store.ts";
import type { AccountStores } from "../../../../core/accounts/store.ts";
import { parseConfig } from "../../../../core/config/load.ts";
import { nanosOf } from "../../../support/exact-money.ts";
import { startGateway, type Gateway } from "../../../support/harness.ts";
import { startRedisServer, type RedisServer } from "../../../support/redis-server.ts";

/** 2026-11-03T12:00:00Z: twelve hours before a UTC midnight. */
const T0 = Date.UTC(2026, 10, 3, 12, 0, 0);
const KEYS = { main: "sk-self-main", limited: "sk-self-limited", other: "sk-self-other", broke: "sk-self-broke" };

/** The key object as OpenRouter's own SDK (@openrouter/sdk, apiKeys.getCurrent) parses it: every field required. */
const openRouterKeyData = z.object({
  label: z.string(),
  limit: z.number().nullable(),
  usage: z.number(),
  usage_daily: z.number(),
  usage_weekly: z.number(),
  usage_monthly: z.number(),
  byok_usage: z.number(),
  byok_usage_daily: z.number(),
  byok_usage_weekly: z.number(),
  byok_usage_monthly: z.number(),
  is_free_tier: z.boolean(),
  is_provisioning_key: z.boolean(),
  limit_remaining: z.number().nullable(),
  limit_reset: z.string().nullable(),
  include_byok_in_limit: z.boolean(),
  rate_limit: z.object({ requests: z.number(), interval: z.string(), note: z.string() }),
});

function config() {
  const model = (id: string, route: Record<string, unknown> = {}) => ({
    id,
    name: id,
    created: 1700000000,
    creator: "sim",
    context_length: 8192,
    max_completion_tokens: 1000,
    input_modalities: ["text"],
    output_modalities: ["text"],
    supported_parameters: ["max_tokens"],
    // A cent per thousand tokens: every charge is a whole number of nano-dollars.
    providers: [{ provider: "simulator", provider_model_id: "echo", pricing: { prompt: "0.00001", completion: "0.00001" }, ...route }],
  });
  return parseConfig(
    JSON.stringify({
      providers: [{ id: "simulator", label: "Simulator", protocol: "simulator", chunk_delay_ms: 0 }],
      models: [model("sim/paid"), model("free/one", { free: { enabled: true, daily_quota: 3 } }), model("free/two", { free: { enabled: true, daily_quota: 5 } })],
      organizations: [
        {
          id: "org_main",
          name: "Main",
          credits: "10",
          keys: [
            { id: "key_main", name: "Main key", env: "MAIN_KEY" },
            { id: "key_limited", env: "LIMITED_KEY", rpm: 60, tpm: 10000, allowed_models: ["sim/paid", "free/two"] },
          ],
        },
        { id: "org_other", name: "Other", credits: "5", keys: [{ id: "key_other", env: "OTHER_KEY" }] },
        { id: "org_broke", name: "Broke", credits: "0", keys: [{ id: "key_broke", env: "BROKE_KEY" }] },
      ],
    }),
  );
}

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});

let prefixes = 0;
const cases: { name: string; split: boolean; stores: () => Promise<AccountStores> }[] = [
  { name: "memory", split: false, stores: async () => createMemoryAccountStores() },
  { name: "redis", split: false, stores: () => createRedisAccountStores({ url: redis.url, prefix: `self-service-${process.pid}-${++prefixes}:` }) },
  { name: "redis, split", split: true, stores: () => createRedisAccountStores({ url: redis.url, prefix: `self-service-${process.pid}-${++prefixes}:` }) },
];

describe.each(cases)("self-service endpoints ($name)", ({ split, stores }) => {
  let gateway: Gateway;
  let clock: number;
  beforeEach(async () => {
    clock = T0;
    const env = { MAIN_KEY: KEYS.main, LIMITED_KEY: KEYS.limited, OTHER_KEY: KEYS.other, BROKE_KEY: KEYS.broke };
    gateway = await startGateway(config(), { split, env, core: { now: () => new Date(clock), stores: await stores() } });
  });
  afterEach(async () => {
    await gateway?.close();
  });

  const get = async (path: string, key?: string) => {
    const response = await fetch(`${gateway.apiUrl}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
    return { status: response.status, json: (await response.json()) as any };
  };
  const chat = async (key: string, model: string) => {
    const response = await fetch(`${gateway.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { usage: { cost: number } };
    await gateway.core.accounts.idle();
    return body.usage.cost;
  };

  it("GET /api/v1/key: a fresh key's label, limits and free quota, in OpenRouter's shape", async () => {
    const { status, json } = await get("/key", KEYS.main);
    expect(status).toBe(200);
    const resetAt = new Date(Date.UTC(2026, 10, 4)).toISOString();
    expect(json).toEqual({
      data: {
        label: "Main key",
        key_id: "key_main",
        limit: null,
        limit_remaining: null,
        limit_reset: null,
        include_byok_in_limit: false,
        usage: 0,
        usage_daily: 0,
        usage_weekly: 0,
        usage_monthly: 0,
        byok_usage: 0,
        byok_usage_daily: 0,
        byok_usage_weekly: 0,
        byok_usage_monthly: 0,
        is_free_tier: false,
        is_provisioning_key: false,
        is_management_key: false,
        rate_limit: { requests: -1, tokens: -1, interval: "1m", note: expect.any(String) },
        allowed_models: null,
        free_quota: [
          { model: "free/one", limit: 3, used: 0, remaining: 3, reset_at: resetAt },
          { model: "free/two", limit: 5, used: 0, remaining: 5, reset_at: resetAt },
        ],
      },
    });
  });

  it("GET /api/v1/key has every field OpenRouter's SDK requires, of its type", async () => {
    for (const key of Object.values(KEYS)) expect(openRouterKeyData.safeParse((await get("/key", key)).json.data).error).toBeUndefined();
  });

  it("GET /api/v1/key: usage_daily, _weekly and _monthly count the key's charges in the current UTC day, week and month", async () => {
    const usage = async () => {
      const { data } = (await get("/key", KEYS.main)).json;
      return [data.usage, data.usage_daily, data.usage_weekly, data.usage_monthly].map((usd: number) => nanosOf(String(usd)));
    };
    // T0 is Tuesday 2026-11-03.
    const tuesday = nanosOf(String(await chat(KEYS.main, "sim/paid")));
    expect(tuesday).toBeGreaterThan(0n);
    expect(await usage()).toEqual([tuesday, tuesday, tuesday, tuesday]);
    clock = Date.UTC(2026, 10, 4, 9);
    expect(await usage()).toEqual([tuesday, 0n, tuesday, tuesday]);
    const wednesday = nanosOf(String(await chat(KEYS.main, "sim/paid")));
    const both = tuesday + wednesday;
    expect(await usage()).toEqual([both, wednesday, both, both]);
    clock = Date.UTC(2026, 10, 9);
    expect(await usage()).toEqual([both, 0n, 0n, both]);
    clock = Date.UTC(2026, 11, 1);
    expect(await usage()).toEqual([both, 0n, 0n, 0n]);
    // Another key's charges are its own.
    expect((await get("/key", KEYS.limited)).json.data.usage_monthly).toBe(0);
  });

  it("GET /api/v1/auth/key, the older path, answers the same", async () => {
    expect(await get("/auth/key", KEYS.main)).toEqual(await get("/key", KEYS.main));
  });

  it("GET /api/v1/key: a key's own limits and allow-list, and only the free models it may use", async () => {
    const { json } = await get("/key", KEYS.limited);
    expect(json.data).toMatchObject({ label: "key_limited", rate_limit: { requests: 60, tokens: 10000, interval: "1m" }, allowed_models: ["sim/paid", "free/two"] });
    expect(json.data.free_quota.map((quota: { model: string }) => quota.model)).toEqual(["free/two"]);
  });

  it("spending moves exactly: the key's usage, the organisation's total_usage, and total_credits - total_usage is the balance", async () => {
    expect((await get("/credits", KEYS.main)).json).toEqual({ data: { total_credits: 10, total_usage: 0 } });
    const first = await chat(KEYS.main, "sim/paid");
    const second = await chat(KEYS.limited, "sim/paid");
    // A cent per thousand tokens: each cost is a whole number of nano-dollars, charged as it is.
    const charged = nanosOf(String(first)) + nanosOf(String(second));
    expect(nanosOf(String((await get("/key", KEYS.main)).json.data.usage))).toBe(nanosOf(String(first)));
    expect(nanosOf(String((await get("/key", KEYS.limited)).json.data.usage))).toBe(nanosOf(String(second)));
    const credits = (await get("/credits", KEYS.main)).json.data;
    expect(nanosOf(String(credits.total_usage))).toBe(charged);
    expect(credits.total_credits).toBe(10);
    const balance = await gateway.core.accounts.stores.credits.balance("org_main");
    expect(balance).toBe(10_000_000_000n - charged);
    expect(nanosOf(String(credits.total_credits)) - nanosOf(String(credits.total_usage))).toBe(balance);
  });

  it("today's free quota counts the organisation's free requests", async () => {
    await chat(KEYS.main, "free/one:free");
    await chat(KEYS.limited, "free/two:free");
    const quotas = (await get("/key", KEYS.main)).json.data.free_quota;
    expect(quotas.map((quota: { model: string; used: number; remaining: number }) => [quota.model, quota.used, quota.remaining])).toEqual([
      ["free/one", 1, 2],
      ["free/two", 1, 4],
    ]);
    // Free work costs nothing.
    expect((await get("/key", KEYS.main)).json.data.usage).toBe(0);
  });

  it("shows nothing of another organisation: its own spending only", async () => {
    await chat(KEYS.main, "sim/paid");
    expect((await get("/credits", KEYS.other)).json).toEqual({ data: { total_credits: 5, total_usage: 0 } });
    expect((await get("/key", KEYS.other)).json.data).toMatchObject({ key_id: "key_other", usage: 0 });
    expect((await get("/key", KEYS.other)).json.data.free_quota.every((quota: { used: number }) => quota.used === 0)).toBe(true);
  });

  it("an organisation with nothing to spend is on the free tier", async () => {
    expect((await get("/key", KEYS.broke)).json.data.is_free_tier).toBe(true);
    expect((await get("/credits", KEYS.broke)).json).toEqual({ data: { total_credits: 0, total_usage: 0 } });
  });

  it.each(["/key", "/auth/key", "/credits"])("GET /api/v1%s needs a valid key: 401 in the spec's shape", async (path) => {
    expect((await get(path)).status).toBe(401);
    const wrong = await get(path, "sk-not-a-key");
    expect(wrong.status).toBe(401);
    expect(wrong.json.error).toMatchObject({ code: "invalid_api_key", type: "invalid_request_error" });
  });
});
