// Accounts through the public HTTP API, in-process, with each account store
// (memory, and Redis on a private server): authentication, the free tier's
// rules at their edges, credits (worst-case holds, exact charges, releases),
// rate limits, allow-lists and the usage log. Time and router/free's draw are
// injected, so minutes and UTC days are crossed without waiting.
import OpenAI from "openai";
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createMemoryAccountStores } from "../../../core/accounts/memory-store.ts";
import { createRedisAccountStores } from "../../../core/accounts/redis-store.ts";
import type { AccountStores } from "../../../core/accounts/store.ts";
import { parseConfig } from "../../../core/config/load.ts";
import type { RouterConfig } from "../../../core/config/schema.ts";
import { femtosOf, nanosOf, nanosRoundedUp, rawCostOf } from "../../support/exact-money.ts";
import { DISABLED_KEY, startGateway, TEST_KEY, type Gateway } from "../../support/harness.ts";
import { startRedisServer, type RedisServer } from "../../support/redis-server.ts";

/** 2026-11-03T12:00:00.000Z: a minute boundary, twelve hours before a UTC midnight. */
const T0 = Date.UTC(2026, 10, 3, 12, 0, 0);
const MIDNIGHT = Date.UTC(2026, 10, 4);
const MINUTE = 60_000;

const KEYS = {
  rpm: "sk-acct-rpm",
  tpm: "sk-acct-tpm",
  allow: "sk-acct-allow",
  broke: "sk-acct-broke",
  small: "sk-acct-small",
  limitedOne: "sk-acct-limited-1",
  limitedTwo: "sk-acct-limited-2",
  other: "sk-acct-other",
} as const;

const ENV = {
  RPM_KEY: KEYS.rpm,
  TPM_KEY: KEYS.tpm,
  ALLOW_KEY: KEYS.allow,
  BROKE_KEY: KEYS.broke,
  SMALL_KEY: KEYS.small,
  LIMITED_ONE_KEY: KEYS.limitedOne,
  LIMITED_TWO_KEY: KEYS.limitedTwo,
  OTHER_KEY: KEYS.other,
};

/**
 * Simulator models only. Prices of sim/paid are finer than a nano-dollar, so
 * charges round; sim/flat has no prompt price, so its worst-case hold is
 * exactly max_tokens x 0.000001. Three free models with different
 * capabilities for router/free (catalogue order: text, vision, json).
 */
function accountsConfig(extraModels: Record<string, unknown>[] = []): RouterConfig {
  const model = (id: string, behaviour: string, pricing: Record<string, string>, extra: Record<string, unknown> = {}, route: Record<string, unknown> = {}) => ({
    id,
    name: id,
    created: 1700000000,
    creator: "sim",
    context_length: 8192,
    max_completion_tokens: 1000,
    input_modalities: ["text"],
    output_modalities: ["text"],
    supported_parameters: ["max_tokens", "temperature"],
    providers: [{ provider: "simulator", provider_model_id: behaviour, pricing, ...route }],
    ...extra,
  });
  const cents = { prompt: "0.000001", completion: "0.000001" };
  return parseConfig(
    JSON.stringify({
      providers: [{ id: "simulator", label: "Simulator", protocol: "simulator", chunk_delay_ms: 0 }],
      models: [
        model("sim/paid", "echo", { prompt: "0.0000012345", completion: "0.0000020001" }),
        model("sim/flat", "echo", { prompt: "0", completion: "0.000001" }),
        model("sim/other", "echo", cents),
        model("sim/fail", "error-503", { prompt: "0", completion: "0.000001" }),
        model("sim/slow", "slow", cents),
        model("free/text", "echo", cents, {}, { free: { enabled: true } }),
        model(
          "free/vision",
          "echo",
          cents,
          { input_modalities: ["text", "image"], supported_parameters: ["max_tokens", "tools", "tool_choice"] },
          { free: { enabled: true, daily_quota: 2 } },
        ),
        model("free/json", "echo", cents, { supported_parameters: ["max_tokens", "response_format"] }, { free: { enabled: true, daily_quota: 10 } }),
        ...extraModels.map(({ id, behaviour, quota }) => model(id as string, behaviour as string, cents, {}, { free: { enabled: true, daily_quota: quota } })),
      ],
      organizations: [
        {
          id: "org_test",
          name: "Test",
          credits: "1000",
          keys: [
            { id: "key_test", env: "TEST_API_KEY" },
            { id: "key_disabled", env: "DISABLED_API_KEY", disabled: true },
            { id: "key_rpm", env: "RPM_KEY", rpm: 3 },
            { id: "key_tpm", env: "TPM_KEY", tpm: 10 },
            { id: "key_allow", env: "ALLOW_KEY", allowed_models: ["sim/paid", "free/json"] },
          ],
        },
        { id: "org_broke", name: "Broke", credits: "0", keys: [{ id: "key_broke", env: "BROKE_KEY" }] },
        { id: "org_small", name: "Small", credits: "0.00005", keys: [{ id: "key_small", env: "SMALL_KEY" }] },
        {
          id: "org_limited",
          name: "Limited",
          credits: "10",
          rpm: 2,
          keys: [
            { id: "key_limited_1", env: "LIMITED_ONE_KEY" },
            { id: "key_limited_2", env: "LIMITED_TWO_KEY" },
          ],
        },
        { id: "org_other", name: "Other", credits: "10", keys: [{ id: "key_other", env: "OTHER_KEY" }] },
      ],
    }),
  );
}

const HELLO = [{ role: "user" as const, content: "hello there" }];
/** What sim/paid charges for HELLO: 5 prompt tokens and 4 completion tokens ("You said: hello there"). */
const HELLO_PAID_COST = "0.0000141729";
const TINY_PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});

let prefixes = 0;
const implementations: { name: string; stores: () => Promise<AccountStores> }[] = [
  { name: "memory", stores: async () => createMemoryAccountStores() },
  { name: "redis", stores: () => createRedisAccountStores({ url: redis.url, prefix: `gw-accounts-${process.pid}-${++prefixes}:` }) },
];

describe.each(implementations)("accounts through the gateway ($name stores)", ({ stores }) => {
  let gateway: Gateway;
  let clock: number;
  let draw: number;

  async function start(config: RouterConfig) {
    gateway = await startGateway(config, { core: { now: () => new Date(clock), random: () => draw, stores: await stores() }, env: ENV });
  }

  beforeEach(async () => {
    clock = T0;
    draw = 0;
    await start(accountsConfig());
  });
  afterEach(async () => {
    await gateway?.close();
  });

  async function chat(body: Record<string, unknown>, key: string | null = TEST_KEY, authorization?: string): Promise<Answer> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (authorization !== undefined) headers.authorization = authorization;
    else if (key !== null) headers.authorization = `Bearer ${key}`;
    const response = await fetch(`${gateway.apiUrl}/chat/completions`, { method: "POST", headers, body: JSON.stringify({ messages: HELLO, ...body }) });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, json: text.startsWith("{") ? JSON.parse(text) : undefined };
  }

  async function generation(id: string, key: string | null = TEST_KEY, authorization?: string): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (authorization !== undefined) headers.authorization = authorization;
    else if (key !== null) headers.authorization = `Bearer ${key}`;
    const response = await fetch(`${gateway.apiUrl}/generation?id=${encodeURIComponent(id)}`, { headers });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, json: JSON.parse(text) };
  }

  const sdk = (key: string = TEST_KEY) => new OpenAI({ apiKey: key, baseURL: gateway.apiUrl, maxRetries: 0, timeout: 15_000 });

  /** The API error a call fails with (the SDK throws it; anything else fails the test). */
  async function apiError(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    return error as InstanceType<typeof OpenAI.APIError>;
  }

  /** The balance once every settlement is in. */
  async function balanceOf(organizationId: string): Promise<bigint> {
    await gateway.core.accounts.idle();
    return gateway.core.accounts.stores.credits.balance(organizationId);
  }

  function expectOk(answer: Answer) {
    expect(answer.status, answer.text).toBe(200);
  }

  function expectError(answer: Answer, status: number, code: string, type: string) {
    expect(answer.status, answer.text).toBe(status);
    expect(answer.json.error).toMatchObject({ code, type });
  }

  describe("authentication", () => {
    const cases: [string, { key: string | null; authorization?: string }, string][] = [
      ["a missing key", { key: null }, "missing_api_key"],
      ["a malformed Authorization header", { key: null, authorization: `Basic ${TEST_KEY}` }, "invalid_api_key"],
      ["a bearer with two tokens", { key: null, authorization: `Bearer ${TEST_KEY} extra` }, "invalid_api_key"],
      ["an unknown key", { key: "sk-nobody-has-this" }, "invalid_api_key"],
      ["a disabled key", { key: DISABLED_KEY }, "key_disabled"],
    ];

    /** The spec's 401: code, message, param null, type invalid_request_error, and no status. */
    function expectUnauthorized(answer: Answer, code: string) {
      expect(answer.status, answer.text).toBe(401);
      expect(answer.json).toEqual({ error: { code, message: expect.any(String), param: null, type: "invalid_request_error" } });
      expect(answer.json.error.message.length).toBeGreaterThan(0);
    }

    it.each(cases)("%s gets the spec's 401 body on chat completions", async (_name, { key, authorization }, code) => {
      expectUnauthorized(await chat({ model: "sim/paid" }, key, authorization), code);
    });

    it.each(cases)("%s gets the spec's 401 body on GET /api/v1/generation", async (_name, { key, authorization }, code) => {
      expectUnauthorized(await generation("rtr_anything", key, authorization), code);
    });

    it("tells a bad key before anything about the request (unknown model, free rules)", async () => {
      expectUnauthorized(await chat({ model: "nobody/nothing" }, "sk-nobody-has-this"), "invalid_api_key");
      expectUnauthorized(await chat({ model: "sim/paid:free" }, DISABLED_KEY), "key_disabled");
      expectUnauthorized(await chat({ model: "router/free:free" }, DISABLED_KEY), "key_disabled");
    });

    it("an unknown key is an AuthenticationError for the openai SDK", async () => {
      const error = await apiError(sdk("sk-nobody-has-this").chat.completions.create({ model: "sim/paid", messages: HELLO }));
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(error).toMatchObject({ status: 401, code: "invalid_api_key", type: "invalid_request_error", param: null });
    });
  });

  describe("free tier", () => {
    it(":free on an opted-in model is served from the quota, never from credits: a balance of 0 still gets answers", async () => {
      const completion = await sdk(KEYS.broke).chat.completions.create({ model: "free/text:free", messages: HELLO });
      expect(completion.model).toBe("text");
      expect(completion.choices[0].message.content).toBe("You said: hello there");
      expect((completion.usage as unknown as { cost: number }).cost).toBe(0);
      expect(await balanceOf("org_broke")).toBe(0n);

      const before = await balanceOf("org_test");
      const answer = await chat({ model: "free/text:free" });
      expectOk(answer);
      expect(rawCostOf(answer.text)).toBe("0");
      expect(answer.json.model).toBe("text");
      expect(await balanceOf("org_test")).toBe(before);
    });

    it("streams a :free answer at cost 0 with the base model's name", async () => {
      const answer = await chat({ model: "free/text:free", stream: true });
      expectOk(answer);
      const chunks = answer.text
        .split("\n")
        .filter((line) => line.startsWith("data: {"))
        .map((line) => JSON.parse(line.slice(6)));
      expect(chunks.every((chunk) => chunk.model === "text")).toBe(true);
      expect(chunks.find((chunk) => chunk.usage)?.usage.cost).toBe(0);
      expect(await balanceOf("org_test")).toBe(nanosOf("1000"));
    });

    it("admits the daily quota of 10, then 429 free_quota_exhausted with quota_limit, quota_used, reset_at and Retry-After", async () => {
      for (let used = 1; used <= 10; used++) {
        clock = T0 + used * 1_000;
        const answer = await chat({ model: "free/text:free" }, KEYS.broke);
        expectOk(answer);
        // The quota is a request limit: the answer says how much of it is left.
        expect(answer.headers.get("x-ratelimit-limit-requests")).toBe("10");
        expect(answer.headers.get("x-ratelimit-remaining-requests")).toBe(String(10 - used));
        expect(answer.headers.get("x-ratelimit-reset-requests")).toBe(`${(MIDNIGHT - clock) / 1000}s`);
      }
      clock = T0 + 30_500;
      const refused = await chat({ model: "free/text:free" }, KEYS.broke);
      expect(refused.status).toBe(429);
      expect(refused.json).toEqual({
        error: { code: "free_quota_exhausted", type: "rate_limit_error", status: 429, param: "model", message: expect.any(String) },
        quota_limit: 10,
        quota_used: 10,
        reset_at: "2026-11-04T00:00:00.000Z",
      });
      // Whole seconds until the next UTC midnight, rounded up.
      expect(refused.headers.get("retry-after")).toBe(String(Math.ceil((MIDNIGHT - clock) / 1000)));
      // Hours away: the SDKs' seconds of backoff cannot outwait it, so they are told not to retry.
      expect(refused.headers.get("x-should-retry")).toBe("false");
      // The exhausted quota as the request window, as on the answers before it.
      expect(refused.headers.get("x-ratelimit-limit-requests")).toBe("10");
      expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0");
      expect(refused.headers.get("x-ratelimit-reset-requests")).toBe(`${Math.ceil((MIDNIGHT - clock) / 1000)}s`);
      // The quota is the organisation's per model: the other free models still answer.
      expectOk(await chat({ model: "free/json:free" }, KEYS.broke));
      expect(await balanceOf("org_broke")).toBe(0n);
    });

    it("keeps each organisation's quota apart", async () => {
      for (let i = 0; i < 2; i++) expectOk(await chat({ model: "free/vision:free" }, KEYS.broke));
      expect((await chat({ model: "free/vision:free" }, KEYS.broke)).status).toBe(429);
      expectOk(await chat({ model: "free/vision:free" }, KEYS.other));
    });

    it("rolls over at UTC midnight: exhausted at 23:59:59.999, admitted again at 00:00:00.000", async () => {
      clock = MIDNIGHT - 60_000;
      for (let i = 0; i < 2; i++) expectOk(await chat({ model: "free/vision:free" }));
      clock = MIDNIGHT - 1;
      const refused = await chat({ model: "free/vision:free" });
      expect(refused.status).toBe(429);
      expect(refused.json).toMatchObject({ quota_limit: 2, quota_used: 2, reset_at: "2026-11-04T00:00:00.000Z" });
      expect(refused.headers.get("retry-after")).toBe("1");
      clock = MIDNIGHT;
      const admitted = await chat({ model: "free/vision:free" });
      expectOk(admitted);
      expect(admitted.headers.get("x-ratelimit-remaining-requests")).toBe("1");
      expectOk(await chat({ model: "free/vision:free" }));
      const again = await chat({ model: "free/vision:free" });
      expect(again.status).toBe(429);
      expect(again.json).toMatchObject({ quota_used: 2, reset_at: "2026-11-05T00:00:00.000Z" });
      expect(again.headers.get("retry-after")).toBe("86400");
    });

    it("a :free request that fails before answering gives its unit back; one cut after its first token spends it", async () => {
      await gateway.close();
      await start(
        accountsConfig([
          { id: "free/failing", behaviour: "error-503", quota: 1 },
          { id: "free/cut", behaviour: "cut-mid-stream", quota: 1 },
        ]),
      );
      for (let i = 0; i < 3; i++) {
        // Each failure reaches the provider: the quota of 1 is never used up by them.
        expectError(await chat({ model: "free/failing:free" }, KEYS.broke), 502, "upstream_error", "api_error");
        await gateway.core.accounts.idle();
      }
      const cut = await chat({ model: "free/cut:free", stream: true, messages: [{ role: "user", content: "one two three four five six" }] }, KEYS.broke);
      expectOk(cut);
      expect(cut.text).toContain('"code":"upstream_error"');
      await gateway.core.accounts.idle();
      const spent = await chat({ model: "free/cut:free" }, KEYS.broke);
      expect(spent.status).toBe(429);
      expect(spent.json).toMatchObject({ error: { code: "free_quota_exhausted" }, quota_limit: 1, quota_used: 1 });
      expect(await balanceOf("org_broke")).toBe(0n);
    });

    it(":free on a model that has not opted in is 400 free_slug_disabled", async () => {
      const answer = await chat({ model: "sim/paid:free" });
      expectError(answer, 400, "free_slug_disabled", "invalid_request_error");
      expect(answer.json.error.param).toBe("model");
      expect(await balanceOf("org_test")).toBe(nanosOf("1000"));
    });

    it(":free on a base model outside the catalogue is 404 model_not_found", async () => {
      const answer = await chat({ model: "free/nothing:free" });
      expectError(answer, 404, "model_not_found", "invalid_request_error");
    });

    it.each(["router/free:free", "router/free:flex", "router/free:thinking"])("%s is 400 invalid_request_error: router/free takes no suffix", async (model) => {
      const answer = await chat({ model });
      expectError(answer, 400, "invalid_request_error", "invalid_request_error");
    });

    it.each([
      ["a :free model with a paid one in models", { model: "free/text:free", models: ["sim/paid"] }],
      ["a paid model with a :free one in models", { model: "sim/paid", models: ["free/text:free"] }],
      ["router/free with a paid model in models", { model: "router/free", models: ["sim/paid"] }],
    ])("mixing free and paid in one request is 400 (%s)", async (_name, body) => {
      const answer = await chat(body);
      expectError(answer, 400, "invalid_parameter", "invalid_request_error");
      expect(answer.json.error.param).toBe("models");
    });

    it("router/free picks uniformly by index among the eligible free models, and skips one whose quota is used up", async () => {
      const pick = async (value: number) => {
        draw = value;
        const answer = await chat({ model: "router/free" }, KEYS.broke);
        expectOk(answer);
        expect(rawCostOf(answer.text)).toBe("0");
        return answer.json.model as string;
      };
      // Three eligible (catalogue order): [0, 1/3) text, [1/3, 2/3) vision, [2/3, 1) json.
      expect(await pick(0)).toBe("text");
      expect(await pick(0.3333)).toBe("text");
      expect(await pick(0.3334)).toBe("vision");
      expect(await pick(0.6666)).toBe("vision");
      // free/vision's quota of 2 is used up now: two remain, half of [0, 1) each.
      expect(await pick(0.6667)).toBe("json");
      expect(await pick(0.9999)).toBe("json");
      expect(await pick(0.4999)).toBe("text");
      expect(await pick(0.5)).toBe("json");
      expect(await pick(0.3334)).toBe("text");
      expect(await balanceOf("org_broke")).toBe(0n);
    });

    it("router/free counts the chosen model's quota", async () => {
      draw = 0.5;
      expectOk(await chat({ model: "router/free" }));
      expectOk(await chat({ model: "router/free" }));
      // Both draws took free/vision's units: its own :free is now refused.
      const refused = await chat({ model: "free/vision:free" });
      expect(refused.status).toBe(429);
      expect(refused.json).toMatchObject({ quota_limit: 2, quota_used: 2 });
    });

    it("router/free requires vision for image content, tools for `tools`, structured output for `response_format`", async () => {
      const image = [{ role: "user", content: [{ type: "text", text: "what is this" }, { type: "image_url", image_url: { url: TINY_PNG } }] }];
      const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } }];
      draw = 0.9999;
      const withImage = await chat({ model: "router/free", messages: image });
      expectOk(withImage);
      expect(withImage.json.model).toBe("vision");
      for (const value of [0, 0.9999]) {
        draw = value;
        const withJson = await chat({ model: "router/free", response_format: { type: "json_object" } });
        expectOk(withJson);
        expect(withJson.json.model).toBe("json");
      }
      draw = 0;
      const withTools = await chat({ model: "router/free", tools });
      expectOk(withTools);
      expect(withTools.json.model).toBe("vision");
      // None can take an image and structured output at once.
      const none = await chat({ model: "router/free", messages: image, response_format: { type: "json_object" } });
      expectError(none, 400, "no_free_model_available", "invalid_request_error");
    });

    it("router/free with one eligible model whose quota is used up is 400 no_free_model_available, not the quota's 429", async () => {
      // Only free/json takes structured output.
      for (let i = 0; i < 10; i++) expectOk(await chat({ model: "free/json:free" }));
      const answer = await chat({ model: "router/free", response_format: { type: "json_object" } });
      expectError(answer, 400, "no_free_model_available", "invalid_request_error");
    });

    it("router/free is 400 no_free_model_available once every eligible model's quota is used up", async () => {
      for (let i = 0; i < 10; i++) expectOk(await chat({ model: "free/text:free" }));
      for (let i = 0; i < 2; i++) expectOk(await chat({ model: "free/vision:free" }));
      for (let i = 0; i < 10; i++) expectOk(await chat({ model: "free/json:free" }));
      draw = 0.5;
      const answer = await chat({ model: "router/free" });
      expectError(answer, 400, "no_free_model_available", "invalid_request_error");
      expect(await balanceOf("org_test")).toBe(nanosOf("1000"));
    });
  });

  describe("credits", () => {
    it("a balance that cannot cover the hold is 402 insufficient_credits, type billing_error", async () => {
      const error = await apiError(sdk(KEYS.broke).chat.completions.create({ model: "sim/paid", messages: HELLO, max_tokens: 10 }));
      expect(error).toMatchObject({ status: 402, code: "insufficient_credits", type: "billing_error" });
      const answer = await chat({ model: "sim/paid", max_tokens: 10 }, KEYS.broke);
      expectError(answer, 402, "insufficient_credits", "billing_error");
      expect(answer.json.error.status).toBeUndefined();
      expect(await balanceOf("org_broke")).toBe(0n);
    });

    it("holds the worst case: max_tokens that makes the hold exceed the balance is refused, a smaller one passes", async () => {
      // sim/flat: no prompt price, 0.000001 per completion token; the balance is 0.00005 = 50 tokens.
      const tooMany = await chat({ model: "sim/flat", max_tokens: 51 }, KEYS.small);
      expectError(tooMany, 402, "insufficient_credits", "billing_error");
      expect(tooMany.json.error.metadata).toEqual({ balance: "0.00005", required: "0.000051" });
      // Without max_tokens the hold is the model's whole completion limit (1000 tokens).
      expectError(await chat({ model: "sim/flat" }, KEYS.small), 402, "insufficient_credits", "billing_error");
      expect(await balanceOf("org_small")).toBe(nanosOf("0.00005"));

      // A hold equal to the balance passes; only the real cost (4 completion tokens) is charged.
      const exact = await chat({ model: "sim/flat", max_tokens: 50 }, KEYS.small);
      expectOk(exact);
      expect(rawCostOf(exact.text)).toBe("0.000004");
      expect(await balanceOf("org_small")).toBe(nanosOf("0.000046"));
      expectError(await chat({ model: "sim/flat", max_tokens: 47 }, KEYS.small), 402, "insufficient_credits", "billing_error");
      expectOk(await chat({ model: "sim/flat", max_tokens: 46 }, KEYS.small));
      expect(await balanceOf("org_small")).toBe(nanosOf("0.000042"));
    });

    it("after an answer the balance drops by exactly its cost, rounded up to the nano-dollar (JSON and stream)", async () => {
      const start = await balanceOf("org_test");
      const answer = await chat({ model: "sim/paid" });
      expectOk(answer);
      expect(rawCostOf(answer.text)).toBe(HELLO_PAID_COST);
      const charge = nanosRoundedUp(femtosOf(HELLO_PAID_COST));
      expect(charge).toBe(14_173n);
      expect(await balanceOf("org_test")).toBe(start - charge);

      const streamed = await chat({ model: "sim/paid", stream: true });
      expectOk(streamed);
      expect(rawCostOf(streamed.text)).toBe(HELLO_PAID_COST);
      expect(await balanceOf("org_test")).toBe(start - 2n * charge);

      // The SDK's parsed number carries the same exact cost.
      const completion: ChatCompletion = await sdk().chat.completions.create({ model: "sim/paid", messages: HELLO });
      const cost = (completion.usage as unknown as { cost: number }).cost;
      expect(nanosRoundedUp(femtosOf(cost))).toBe(charge);
      expect(await balanceOf("org_test")).toBe(start - 3n * charge);
    });

    it("an upstream failure releases the hold: balance unchanged", async () => {
      const start = await balanceOf("org_test");
      const answer = await chat({ model: "sim/fail", max_tokens: 100 });
      expectError(answer, 502, "upstream_error", "api_error");
      expect(await balanceOf("org_test")).toBe(start);
      // Also when the balance only just covers the hold (sim/fail: 50 completion tokens at 0.000001): nothing stays held.
      expectError(await chat({ model: "sim/fail", max_tokens: 50 }, KEYS.small), 502, "upstream_error", "api_error");
      expect(await balanceOf("org_small")).toBe(nanosOf("0.00005"));
      expectOk(await chat({ model: "sim/flat", max_tokens: 50 }, KEYS.small));
    });

    it("a client abort mid-stream is charged an estimate of what was relayed, never more than its hold", async () => {
      const start = await balanceOf("org_test");
      const controller = new AbortController();
      const response = await fetch(`${gateway.apiUrl}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "sim/slow", stream: true, max_tokens: 100, messages: [{ role: "user", content: "one two three four five six seven eight nine ten" }] }),
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      const chatId = response.headers.get("x-request-id")!;
      const reader = response.body!.getReader();
      let received = "";
      const decoder = new TextDecoder();
      while (!received.includes('"content":"You')) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`the stream ended before its first token: ${received}`);
        received += decoder.decode(value, { stream: true });
      }
      // In flight, the worst case is held: 100 completion tokens and the prompt's bound at 0.000001 each.
      const held = start - (await gateway.core.accounts.stores.credits.balance("org_test"));
      expect(held).toBeGreaterThanOrEqual(100_000n);
      controller.abort();
      await reader.cancel().catch(() => {});

      // The usage record is written when the request ends (the server sees the
      // abort in its own time), right after its settlement is queued.
      const record = await vi.waitFor(async () => {
        await gateway.core.accounts.idle();
        const written = await gateway.core.accounts.usage.get("org_test", chatId);
        expect(written, "the aborted stream's usage record").toBeDefined();
        return written;
      }, { timeout: 10_000, interval: 5 });
      // The provider never reported usage: the prompt (58 bytes: 48, 8 for the message, 2 for no tools) and the words relayed so far, at about 4 characters a token.
      expect(record).toMatchObject({ outcome: "client_closed", streamed: true, provider: "simulator", promptTokens: 15 });
      expect(record!.completionTokens).toBeGreaterThan(0);
      // The record's tokens explain its cost (sim/slow: 0.000001 a token either way).
      expect(femtosOf(record!.cost)).toBe(BigInt(record!.promptTokens + record!.completionTokens) * 1_000_000_000n);
      const charged = nanosRoundedUp(femtosOf(record!.cost));
      expect(charged).toBeGreaterThan(0n);
      expect(charged).toBeLessThan(held);
      expect(await balanceOf("org_test")).toBe(start - charged);
    });
  });

  describe("rate limits", () => {
    it("a key with rpm 3 gets 3 answers, then 429 rate_limit_exceeded with x-ratelimit-* and Retry-After, until the next minute", async () => {
      clock = T0 + 15_000;
      for (let remaining = 2; remaining >= 0; remaining--) {
        const answer = await chat({ model: "sim/paid" }, KEYS.rpm);
        expectOk(answer);
        expect({
          limit: answer.headers.get("x-ratelimit-limit-requests"),
          remaining: answer.headers.get("x-ratelimit-remaining-requests"),
          reset: answer.headers.get("x-ratelimit-reset-requests"),
        }).toEqual({ limit: "3", remaining: String(remaining), reset: "45s" });
      }
      clock = T0 + 20_000;
      const refused = await chat({ model: "sim/paid" }, KEYS.rpm);
      expect(refused.status).toBe(429);
      expect(refused.json.error).toMatchObject({ code: "rate_limit_exceeded", type: "rate_limit_error", status: 429 });
      expect(refused.json.error.metadata).toMatchObject({ scope: "key", unit: "requests", limit: 3 });
      // Seconds away: the SDKs' own backoff may retry it.
      expect(refused.headers.get("x-should-retry")).toBeNull();
      expect({
        limit: refused.headers.get("x-ratelimit-limit-requests"),
        remaining: refused.headers.get("x-ratelimit-remaining-requests"),
        reset: refused.headers.get("x-ratelimit-reset-requests"),
        retryAfter: refused.headers.get("retry-after"),
      }).toEqual({ limit: "3", remaining: "0", reset: "40s", retryAfter: "40" });

      // The SDK sees a RateLimitError (no retries: maxRetries 0).
      const error = await apiError(sdk(KEYS.rpm).chat.completions.create({ model: "sim/paid", messages: HELLO }));
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      expect(error).toMatchObject({ status: 429, code: "rate_limit_exceeded" });

      clock = T0 + MINUTE - 1;
      expect((await chat({ model: "sim/paid" }, KEYS.rpm)).status).toBe(429);
      clock = T0 + MINUTE;
      const admitted = await chat({ model: "sim/paid" }, KEYS.rpm);
      expectOk(admitted);
      expect(admitted.headers.get("x-ratelimit-remaining-requests")).toBe("2");
      expect(admitted.headers.get("x-ratelimit-reset-requests")).toBe("60s");
    });

    it("refused requests do not count, and are not charged", async () => {
      const start = await balanceOf("org_test");
      for (let i = 0; i < 3; i++) expectOk(await chat({ model: "sim/paid" }, KEYS.rpm));
      for (let i = 0; i < 3; i++) expect((await chat({ model: "sim/paid" }, KEYS.rpm)).status).toBe(429);
      expect(await balanceOf("org_test")).toBe(start - 3n * nanosRoundedUp(femtosOf(HELLO_PAID_COST)));
      clock = T0 + MINUTE;
      for (let i = 0; i < 3; i++) expectOk(await chat({ model: "sim/paid" }, KEYS.rpm));
    });

    it("a key with tpm 10 is refused once the minute's tokens reach it, and admitted in the next minute", async () => {
      // Each answer to HELLO counts 9 tokens (5 prompt, 4 completion), added when it settles.
      const first = await chat({ model: "sim/paid" }, KEYS.tpm);
      expectOk(first);
      expect(first.headers.get("x-ratelimit-limit-tokens")).toBe("10");
      expect(first.headers.get("x-ratelimit-remaining-tokens")).toBe("10");
      expect(first.headers.get("x-ratelimit-reset-tokens")).toBe("60s");
      await gateway.core.accounts.idle();
      const second = await chat({ model: "sim/paid" }, KEYS.tpm);
      expectOk(second);
      expect(second.headers.get("x-ratelimit-remaining-tokens")).toBe("1");
      await gateway.core.accounts.idle();

      clock = T0 + 30_000;
      const refused = await chat({ model: "sim/paid" }, KEYS.tpm);
      expect(refused.status).toBe(429);
      expect(refused.json.error).toMatchObject({ code: "rate_limit_exceeded", type: "rate_limit_error", status: 429 });
      expect(refused.json.error.metadata).toMatchObject({ scope: "key", unit: "tokens", limit: 10 });
      expect({
        limit: refused.headers.get("x-ratelimit-limit-tokens"),
        remaining: refused.headers.get("x-ratelimit-remaining-tokens"),
        reset: refused.headers.get("x-ratelimit-reset-tokens"),
        retryAfter: refused.headers.get("retry-after"),
      }).toEqual({ limit: "10", remaining: "0", reset: "30s", retryAfter: "30" });

      clock = T0 + MINUTE;
      const admitted = await chat({ model: "sim/paid" }, KEYS.tpm);
      expectOk(admitted);
      expect(admitted.headers.get("x-ratelimit-remaining-tokens")).toBe("10");
    });

    it("an organisation's rpm applies across its keys", async () => {
      expectOk(await chat({ model: "sim/paid" }, KEYS.limitedOne));
      const second = await chat({ model: "sim/paid" }, KEYS.limitedTwo);
      expectOk(second);
      expect(second.headers.get("x-ratelimit-remaining-requests")).toBe("0");
      for (const key of [KEYS.limitedOne, KEYS.limitedTwo]) {
        const refused = await chat({ model: "sim/paid" }, key);
        expect(refused.status).toBe(429);
        expect(refused.json.error).toMatchObject({ code: "rate_limit_exceeded", status: 429 });
        expect(refused.json.error.metadata).toMatchObject({ scope: "organization", unit: "requests", limit: 2 });
        expect(refused.headers.get("x-ratelimit-limit-requests")).toBe("2");
        expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0");
      }
      // Another organisation is not affected.
      expectOk(await chat({ model: "sim/paid" }, KEYS.other));
      clock = T0 + MINUTE;
      expectOk(await chat({ model: "sim/paid" }, KEYS.limitedTwo));
    });
  });

  describe("allow-list", () => {
    it("a key with allowed_models refuses another model with 403 model_not_allowed", async () => {
      expectOk(await chat({ model: "sim/paid" }, KEYS.allow));
      const refused = await chat({ model: "sim/other" }, KEYS.allow);
      expect(refused.status).toBe(403);
      expect(refused.json.error).toMatchObject({ code: "model_not_allowed", param: "model" });
      expect(refused.json.error.message).toContain("sim/other");
      // Also when the forbidden model is only a fallback in `models`, and for :free.
      expect((await chat({ model: "sim/paid", models: ["sim/other"] }, KEYS.allow)).json.error?.code).toBe("model_not_allowed");
      expect((await chat({ model: "free/text:free" }, KEYS.allow)).json.error?.code).toBe("model_not_allowed");
      const error = await apiError(sdk(KEYS.allow).chat.completions.create({ model: "sim/other", messages: HELLO }));
      expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    });

    it("router/free only picks allowed free models", async () => {
      for (const value of [0, 0.5, 0.9999]) {
        draw = value;
        const answer = await chat({ model: "router/free" }, KEYS.allow);
        expectOk(answer);
        expect(answer.json.model).toBe("json");
      }
    });
  });

  describe("usage log: GET /api/v1/generation", () => {
    it("returns the record of a paid answer to its own organisation, and 404 to another's", async () => {
      const body: ChatCompletionCreateParamsNonStreaming & { request_tags: string[] } = {
        model: "sim/paid",
        messages: HELLO,
        request_tags: ["nightly", "eval"],
      };
      const completion = await sdk().chat.completions.create(body);
      const expected = {
        id: completion.id,
        model: "sim/paid",
        provider_name: "simulator",
        tokens_prompt: 5,
        tokens_completion: 4,
        tokens_reasoning: 0,
        total_cost: (completion.usage as unknown as { cost: number }).cost,
        outcome: "ok",
        is_free: false,
        streamed: false,
        request_tags: ["nightly", "eval"],
        api_key_id: "key_test",
        organization_id: "org_test",
        created_at: new Date(T0).toISOString(),
      };
      // Readable at once (the batched log serves what waits), and once written to the store.
      for (const settled of [false, true]) {
        if (settled) await gateway.core.accounts.idle();
        const found = await generation(completion.id);
        expect(found.status, found.text).toBe(200);
        expect(found.json.data).toMatchObject(expected);
        expect(rawCostOf(found.text.replace('"total_cost"', '"cost"'))).toBe(HELLO_PAID_COST);
        expect(found.json.data.latency_ms).toEqual(expect.any(Number));
        expect(found.json.data.latency_ms).toBeGreaterThanOrEqual(0);

        const foreign = await generation(completion.id, KEYS.other);
        expect(foreign.status).toBe(404);
        expect(foreign.json.error).toMatchObject({ code: "generation_not_found", type: "invalid_request_error" });
      }
      // Any key of the same organisation may read it.
      expect((await generation(completion.id, KEYS.rpm)).status).toBe(200);
    });

    it("records free answers as free at cost 0, and failures with their outcome", async () => {
      const free = await chat({ model: "free/json:free", stream: true, request_tags: ["free"] });
      expectOk(free);
      const freeId = free.headers.get("x-request-id")!;
      const failed = await chat({ model: "sim/fail" });
      expect(failed.status).toBe(502);
      const failedId = failed.headers.get("x-request-id")!;
      await gateway.core.accounts.idle();

      expect((await generation(freeId)).json.data).toMatchObject({
        id: freeId,
        model: "free/json",
        provider_name: "simulator",
        total_cost: 0,
        is_free: true,
        streamed: true,
        outcome: "ok",
        request_tags: ["free"],
      });
      expect((await generation(failedId)).json.data).toMatchObject({
        id: failedId,
        model: "sim/fail",
        provider_name: null,
        tokens_prompt: 0,
        tokens_completion: 0,
        total_cost: 0,
        is_free: false,
        outcome: "upstream_error",
      });
    });

    it("an unknown id is 404", async () => {
      const answer = await generation("rtr_00000000000000000000000000");
      expect(answer.status).toBe(404);
      expect(answer.json.error).toMatchObject({ code: "generation_not_found" });
    });
  });
});
