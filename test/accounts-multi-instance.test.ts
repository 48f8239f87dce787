// Accounts shared through Redis: two gateway processes (gateway/main.ts, as
// an operator runs it) on one private redis-server and one configuration
// file. Free quotas and credit holds are exact across them under concurrency,
// and a key disabled through one instance's admin service is refused by both
// at once. Then an in-process gateway whose Redis is stopped mid-run: it
// refuses (503 state_unavailable) without waiting for Redis or a timeout and
// serves nothing, and resumes by itself when Redis is back (empty: the store
// seeds the configuration again).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import OpenAI from "openai";
import { ClientOfflineError } from "redis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createRedisAccountStores } from "../core/accounts/redis-store.ts";
import { StoreUnavailableError } from "../core/accounts/store-errors.ts";
import type { AccountStores } from "../core/accounts/store.ts";
import { parseConfig } from "../core/config/load.ts";
import { AccountService } from "../gen/router/v1/accounts_pb.js";
import { femtosOf, nanosOf, nanosRoundedUp } from "./support/exact-money.ts";
import { settlesBefore } from "./support/hang-guard.ts";
import { startGateway, type Gateway } from "./support/harness.ts";
import { startRedisServer, type RedisServer } from "./support/redis-server.ts";
import { GATEWAY_ENTRY, spawnEntry, type SpawnedEntry } from "./support/spawn-entry.ts";

const TIMEOUT = 30_000;
/** How long vi.waitFor keeps asking for something that happens in the background (settlements, reconnection). */
const SETTLED_WITHIN = { timeout: 10_000, interval: 50 };
const ADMIN_TOKEN = "rtr-admin-multi-instance-test";
const FREE_KEY = "sk-multi-free";
const PAID_KEY = "sk-multi-paid";
const KEY_ENV = { FREE_KEY, PAID_KEY };

/**
 * sim/free: the simulator on the free tier with the default daily quota (10).
 * sim/paid: no prompt price, 0.0000000015 per completion token and 0.00000001
 * per request, so the worst-case hold of a request with max_tokens 3 is
 * 3 x 1.5 + 10 = 14.5 nano-dollars, held as 15; the answer to "hi" is
 * "You said: hi", 3 tokens, so it costs exactly that too. org_paid's balance,
 * 0.0000015, is exactly 100 such holds.
 */
const CONFIG = {
  providers: [{ id: "simulator", label: "Simulator", protocol: "simulator" }],
  models: [
    {
      id: "sim/free",
      name: "Free",
      created: 1700000000,
      creator: "sim",
      context_length: 8192,
      max_completion_tokens: 100,
      input_modalities: ["text"],
      output_modalities: ["text"],
      supported_parameters: ["max_tokens"],
      providers: [{ provider: "simulator", provider_model_id: "echo", pricing: { prompt: "0.000001", completion: "0.000001" }, free: { enabled: true } }],
    },
    {
      id: "sim/paid",
      name: "Paid",
      created: 1700000000,
      creator: "sim",
      context_length: 8192,
      max_completion_tokens: 100,
      input_modalities: ["text"],
      output_modalities: ["text"],
      supported_parameters: ["max_tokens"],
      providers: [{ provider: "simulator", provider_model_id: "echo", pricing: { prompt: "0", completion: "0.0000000015", request: "0.00000001" } }],
    },
  ],
  organizations: [
    { id: "org_free", name: "Free", credits: "0", keys: [{ id: "key_free", env: "FREE_KEY" }] },
    { id: "org_paid", name: "Paid", credits: "0.0000015", keys: [{ id: "key_paid", env: "PAID_KEY" }] },
    { id: "org_keys", name: "Keys", credits: "1" },
  ],
};

const HI = [{ role: "user" as const, content: "hi" }];
const HOLD_NANOS = 15n;

interface Answer {
  status: number;
  headers: Headers;
  json: any;
}

async function post(url: string, key: string, body: Record<string, unknown>): Promise<Answer> {
  const response = await fetch(`${url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ messages: HI, ...body }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text.startsWith("{") ? JSON.parse(text) : text };
}

interface StoreFailure {
  call: string;
  error: unknown;
}

/** The same stores, with every failed call recorded: what the gateway's refusals rest on. */
function recordingFailures(stores: AccountStores, failures: StoreFailure[]): AccountStores {
  const record = <F extends (...args: never[]) => Promise<unknown>>(call: string, method: F): F =>
    (async (...args: Parameters<F>) => {
      try {
        return await method(...args);
      } catch (error) {
        failures.push({ call, error });
        throw error;
      }
    }) as F;
  const group = <G extends object>(name: string, methods: G): G =>
    Object.fromEntries(Object.entries(methods).map(([key, method]) => [key, record(`${name}.${key}`, method)])) as G;
  return {
    keys: group("keys", stores.keys),
    organizations: group("organizations", stores.organizations),
    credits: group("credits", stores.credits),
    admission: group("admission", stores.admission),
    usage: group("usage", stores.usage),
    seed: record("seed", stores.seed),
    close: stores.close,
  };
}

const nextUtcMidnight = (ms: number) => ms - (ms % 86_400_000) + 86_400_000;

describe("two gateway processes sharing one Redis", { timeout: TIMEOUT }, () => {
  let redis: RedisServer;
  let dir: string;
  let entries: SpawnedEntry[] = [];
  const instances: { url: string; coreUrl: string }[] = [];
  let admin: Client<typeof AccountService>;
  const auth = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };

  beforeAll(async () => {
    redis = await startRedisServer();
    dir = mkdtempSync(join(tmpdir(), "router-multi-"));
    const configFile = join(dir, "router.json");
    writeFileSync(configFile, JSON.stringify(CONFIG, null, 2));
    const env = { ...KEY_ENV, PORT: "0", GRPC_PORT: "0", REDIS_URL: redis.url, ROUTER_CONFIG: configFile, ROUTER_ADMIN_TOKEN: ADMIN_TOKEN };
    // Two instances, each with its own ephemeral ports; their "listening" lines say which.
    entries = [spawnEntry(GATEWAY_ENTRY, env), spawnEntry(GATEWAY_ENTRY, env)];
    for (const entry of entries) {
      const coreUrl = await entry.waitForListening(/^core listening/);
      const url = await entry.waitForListening(/^gateway listening$/);
      instances.push({ url, coreUrl });
    }
    expect(instances[0].url).not.toBe(instances[1].url);
    admin = createClient(AccountService, createConnectTransport({ baseUrl: instances[0].coreUrl, httpVersion: "2" }));
  }, TIMEOUT);

  afterAll(async () => {
    await Promise.all(entries.map((entry) => entry.stop()));
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("50 concurrent :free calls split across both: exactly 10 answers and 40 429 free_quota_exhausted", async () => {
    const before = Date.now();
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => post(instances[i % 2].url, FREE_KEY, { model: "sim/free:free" })));
    const after = Date.now();

    // One quota in Redis for both: a quota per instance would have let 20 through.
    const served = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    expect({ served: served.length, refused: refused.length }).toEqual({ served: 10, refused: 40 });
    for (const answer of served) {
      expect(answer.json).toMatchObject({ model: "free", usage: { cost: 0 } });
      expect(answer.headers.get("x-ratelimit-limit-requests")).toBe("10");
    }
    // Each unit was handed out once: the remaining counts are 9..0, once each.
    expect(served.map((a) => Number(a.headers.get("x-ratelimit-remaining-requests"))).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);

    const midnights = new Set([nextUtcMidnight(before), nextUtcMidnight(after)].map((ms) => new Date(ms).toISOString()));
    for (const answer of refused) {
      expect(answer.json).toEqual({
        error: { code: "free_quota_exhausted", type: "rate_limit_error", status: 429, param: "model", message: expect.any(String) },
        quota_limit: 10,
        quota_used: 10,
        reset_at: expect.any(String),
      });
      // RFC 3339, UTC, at the next midnight.
      expect(answer.json.reset_at).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00(\.000)?Z$/);
      expect(midnights.has(new Date(answer.json.reset_at).toISOString())).toBe(true);
      const retryAfter = answer.headers.get("retry-after")!;
      expect(retryAfter).toMatch(/^[1-9]\d*$/);
      const resetAt = Date.parse(answer.json.reset_at);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(Math.ceil((resetAt - after) / 1000));
      expect(Number(retryAfter)).toBeLessThanOrEqual(Math.ceil((resetAt - before) / 1000));
    }
    // Free answers never touch credits.
    expect((await admin.getBalance({ organizationId: "org_free" }, auth)).balance).toBe("0");
  });

  it("200 concurrent paid calls on a balance of exactly 100 worst-case holds never overdraw", async () => {
    const initial = nanosOf((await admin.getBalance({ organizationId: "org_paid" }, auth)).balance);
    expect(initial).toBe(100n * HOLD_NANOS);
    const clients = instances.map(({ url }) => new OpenAI({ apiKey: PAID_KEY, baseURL: `${url}/api/v1`, maxRetries: 0, timeout: 20_000 }));
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        clients[i % 2].chat.completions.create({ model: "sim/paid", messages: HI, max_tokens: 3 }).then(
          (completion) => ({ completion, error: undefined }),
          (error: unknown) => ({ completion: undefined, error }),
        ),
      ),
    );

    const completions = outcomes.flatMap((o) => (o.completion ? [o.completion] : []));
    const errors = outcomes.flatMap((o) => (o.error ? [o.error] : []));
    // Each answer costs its hold exactly, so settling gives nothing back: 100 fit, 100 do not.
    expect({ served: completions.length, refused: errors.length }).toEqual({ served: 100, refused: 100 });
    for (const error of errors) {
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error).toMatchObject({ status: 402, code: "insufficient_credits", type: "billing_error" });
    }
    let charged = 0n;
    for (const completion of completions) {
      expect(completion.model).toBe("paid");
      expect(completion.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 3 });
      const cost = (completion.usage as unknown as { cost: number }).cost;
      expect(femtosOf(cost)).toBe(14_500_000n);
      charged += nanosRoundedUp(femtosOf(cost));
    }
    const expected = initial - charged;
    expect(expected).toBe(0n);

    // Settlements run in the background of each process; the balance must come to rest at the expected value.
    const balance = await vi.waitFor(async () => {
      const now = nanosOf((await admin.getBalance({ organizationId: "org_paid" }, auth)).balance);
      expect(now).toBe(expected);
      return now;
    }, SETTLED_WITHIN);
    expect(balance).toBeGreaterThanOrEqual(0n);

    // Both instances' usage logs reach the shared store: one record per answer, each at its exact cost.
    const usage = await vi.waitFor(async () => {
      const now = await admin.getUsage({ organizationId: "org_paid", limit: 1000 }, auth);
      expect(now.records.length).toBe(100);
      return now;
    }, SETTLED_WITHIN);
    for (const record of usage.records) {
      expect(record).toMatchObject({ model: "sim/paid", provider: "simulator", outcome: "ok", cost: "0.0000000145", completionTokens: 3, keyId: "key_paid" });
    }
  });

  it("a key created and then disabled through instance A's admin service is refused by both on the very next request", async () => {
    const { key, apiKey } = await admin.createKey({ organizationId: "org_keys", name: "multi" }, auth);
    for (const { url } of instances) {
      const answer = await post(url, apiKey, { model: "sim/paid", max_tokens: 3 });
      expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    }
    await admin.disableKey({ keyId: key!.keyId }, auth);
    const [onA, onB] = await Promise.all(instances.map(({ url }) => post(url, apiKey, { model: "sim/paid", max_tokens: 3 })));
    for (const answer of [onA, onB]) {
      expect(answer.status).toBe(401);
      expect(answer.json).toEqual({ error: { code: "key_disabled", message: expect.any(String), param: null, type: "invalid_request_error" } });
    }
    // Instance B's admin service sees the same key, and enabling it works everywhere at once too.
    const adminB = createClient(AccountService, createConnectTransport({ baseUrl: instances[1].coreUrl, httpVersion: "2" }));
    expect((await adminB.listKeys({ organizationId: "org_keys" }, auth)).keys).toEqual([expect.objectContaining({ keyId: key!.keyId, disabled: true })]);
    await adminB.enableKey({ keyId: key!.keyId }, auth);
    for (const { url } of instances) expect((await post(url, apiKey, { model: "sim/paid", max_tokens: 3 })).status).toBe(200);
  });
});

describe("Redis stopped mid-run", { timeout: TIMEOUT }, () => {
  let redis: RedisServer;
  let gateway: Gateway;
  const config = parseConfig(JSON.stringify(CONFIG));
  // The store reports the outage when its client sees the connection go.
  const { promise: outageNoticed, resolve: noticeOutage } = Promise.withResolvers<void>();
  const logger = { warn: () => noticeOutage(), info: () => {} };
  const storeFailures: StoreFailure[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    // An hour-long command timeout: a request that waited on a store call
    // instead of being refused at once would hang, never be answered by a timeout.
    const stores = recordingFailures(await createRedisAccountStores({ url: redis.url, prefix: "outage:", logger, commandTimeoutMs: 3_600_000 }), storeFailures);
    gateway = await startGateway(config, { core: { stores }, env: KEY_ENV });
  });

  afterAll(async () => {
    await gateway?.close();
    await redis?.stop();
  });

  const requests: [string, () => Promise<Answer>][] = [
    ["paid", () => post(gateway.url, PAID_KEY, { model: "sim/paid", max_tokens: 3 })],
    ["paid, streamed", () => post(gateway.url, PAID_KEY, { model: "sim/paid", max_tokens: 3, stream: true })],
    [":free", () => post(gateway.url, FREE_KEY, { model: "sim/free:free" })],
    [":free, streamed", () => post(gateway.url, FREE_KEY, { model: "sim/free:free", stream: true })],
    ["router/free", () => post(gateway.url, FREE_KEY, { model: "router/free" })],
    [
      "GET /api/v1/generation",
      async () => {
        const response = await fetch(`${gateway.apiUrl}/generation?id=rtr_x`, { headers: { authorization: `Bearer ${PAID_KEY}` } });
        return { status: response.status, headers: response.headers, json: await response.json() };
      },
    ],
  ];

  it("refuses every request with 503 state_unavailable while Redis is down, without waiting for it, and serves none; resumes once Redis is back", async () => {
    for (const [name, request] of requests.slice(0, 5)) {
      const answer = await request();
      expect(answer.status, `${name}: ${JSON.stringify(answer.json)}`).toBe(200);
    }
    await gateway.core.accounts.idle();

    await redis.stop();
    await settlesBefore(outageNoticed, "the store noticing Redis is gone");
    storeFailures.length = 0;
    // Several rounds, all at once: none is served. Redis stays down until all
    // are answered, and no store call can time out, so answering at all means
    // each was refused at once rather than left waiting for Redis.
    const rounds = await settlesBefore(
      Promise.all(Array.from({ length: 4 }, () => Promise.all(requests.map(async ([name, request]) => ({ name, answer: await request() }))))),
      "requests while Redis is down",
    );
    for (const { name, answer } of rounds.flat()) {
      expect(answer.status, `${name}: ${JSON.stringify(answer.json)}`).toBe(503);
      expect(answer.json.error, name).toMatchObject({ code: "state_unavailable", type: "api_error" });
      expect(answer.json.error.status).toBeUndefined();
      expect(answer.headers.get("retry-after"), name).toBe("1");
    }
    // Why they were prompt: each request met one store call, refused by the
    // Redis client for want of a connection (never sent, never queued), and
    // was answered at that (no retrying while Redis is away).
    expect(storeFailures).toHaveLength(rounds.flat().length);
    for (const { call, error } of storeFailures) {
      expect(error, call).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).cause, call).toBeInstanceOf(ClientOfflineError);
    }

    await redis.start();
    // The client reconnects in the background: until then 503, never an answer.
    const answer = await vi.waitFor(async () => {
      const next = await requests[0][1]();
      expect(next.status).not.toBe(503);
      return next;
    }, SETTLED_WITHIN);
    // The private server kept nothing across the restart; the store seeds the
    // configuration again by itself (docs/accounts.md), so the configured key
    // is served, never refused as unknown.
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    for (const [name, request] of requests.slice(0, 5)) {
      const resumed = await request();
      expect(resumed.status, `${name}: ${JSON.stringify(resumed.json)}`).toBe(200);
    }
    await gateway.core.accounts.idle();
    // Seeded afresh: the starting balance, less the three paid answers since.
    expect(await gateway.core.accounts.stores.credits.balance("org_paid")).toBe(97n * HOLD_NANOS);
  });
});

