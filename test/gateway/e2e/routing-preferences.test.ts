// The routing preferences through the gateway, in every format: measured
// latency and throughput (an injected clock, moved by a fake upstream) decide
// provider.sort and :nitro and show in /api/v1/modelProviderData; each
// preference's mistakes are a 400 naming it; and two instances on one Redis
// sort by the same measurements.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../support/harness.ts";
import { startRedisServer, type RedisServer } from "../../support/redis-server.ts";
import { startTimedUpstream, testClock, type TimedUpstream } from "../../support/timed-upstream.ts";

const clock = testClock();
let upstream: TimedUpstream;
let gateway: Gateway;

beforeAll(async () => {
  upstream = await startTimedUpstream(clock);
  gateway = await startGateway(testConfig(upstream.url), { core: { now: clock.now } });
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const openai = () => new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });

async function post(path: string, body: object, target = gateway) {
  const response = await fetch(`${target.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const json = response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text;
  return { status: response.status, provider: response.headers.get("x-router-provider"), trace: response.headers.get("x-router-trace"), body: json };
}

async function measuredOf(model: string, target = gateway) {
  const response = await fetch(`${target.url}/api/v1/modelProviderData?id=${encodeURIComponent(model)}`);
  const body = (await response.json()) as { provider_data: { provider_id: string; measured: unknown }[] };
  return Object.fromEntries(body.provider_data.map((entry) => [entry.provider_id, entry.measured]));
}

describe("measured routes", () => {
  it("a stream measures first-token latency, an answer not streamed its throughput, weighted; shown per provider", async () => {
    expect(await measuredOf("test/ok")).toEqual({ cheap: null, dear: null });
    upstream.timings.set("ok", { latencyMs: 800, durationMs: 2000, completionTokens: 100 });
    upstream.timings.set("ok-dear", { latencyMs: 100, durationMs: 500, completionTokens: 100 });
    // Default order: cheap first; provider.only reaches dear.
    for (const only of [["cheap"], ["dear"]]) {
      for (const stream of [true, false]) {
        const { status } = await post("/api/v1/chat/completions", { model: "test/ok", stream, provider: { only }, messages: [{ role: "user", content: "Hi" }] });
        expect(status).toBe(200);
      }
    }
    expect(await measuredOf("test/ok")).toEqual({
      cheap: { first_token_latency_ms: 800, throughput_tokens_per_second: 50, samples: 2 },
      dear: { first_token_latency_ms: 100, throughput_tokens_per_second: 200, samples: 2 },
    });
    // A slower stream moves the average by the weight (0.3): 800 + 0.3 * (1800 - 800).
    upstream.timings.set("ok", { latencyMs: 1800, durationMs: 2000, completionTokens: 100 });
    await post("/api/v1/chat/completions", { model: "test/ok", stream: true, provider: { only: ["cheap"] }, messages: [{ role: "user", content: "Hi" }] });
    expect(((await measuredOf("test/ok")).cheap as { first_token_latency_ms: number }).first_token_latency_ms).toBe(1100);
  });

  it("sort throughput and latency, and :nitro, go to the measured fastest; :floor and sort price to the cheapest, in every format", async () => {
    const anthropic = new Anthropic({ apiKey: TEST_KEY, baseURL: gateway.url, maxRetries: 0 });
    const chat = await openai().chat.completions.create({ model: "test/ok:nitro", messages: [{ role: "user", content: "Hi" }] }).withResponse();
    expect(chat.response.headers.get("x-router-provider")).toBe("dear");
    const floor = await openai().chat.completions.create({ model: "test/ok:floor", messages: [{ role: "user", content: "Hi" }] }).withResponse();
    expect(floor.response.headers.get("x-router-provider")).toBe("cheap");
    for (const sort of ["latency", "throughput"]) {
      expect((await post("/api/v1/responses", { model: "test/ok", input: "Hi", provider: { sort } })).provider).toBe("dear");
      const messages = await anthropic.messages
        .create({ model: "test/ok", max_tokens: 10, messages: [{ role: "user", content: "Hi" }], provider: { sort } } as never)
        .withResponse();
      expect(messages.response.headers.get("x-router-provider")).toBe("dear");
    }
    expect((await post("/api/v1/responses", { model: "test/ok", input: "Hi", provider: { sort: "price" } })).provider).toBe("cheap");
  });
});

describe("each preference validated with a 400 naming it, in every format", () => {
  const formats = [
    ["/api/v1/chat/completions", { messages: [{ role: "user", content: "Hi" }] }],
    ["/api/v1/responses", { input: "Hi" }],
    ["/v1/messages", { max_tokens: 10, messages: [{ role: "user", content: "Hi" }] }],
  ] as const;
  it.each([
    [{ provider: { sort: "fastest" } }, "provider.sort"],
    [{ provider: { ignore: ["nope"] } }, "provider.ignore"],
    [{ provider: { ignore: [] } }, "provider.ignore"],
    [{ provider: { max_price: { prompt: -1 } } }, "provider.max_price.prompt"],
    [{ provider: { max_price: {} } }, "provider.max_price"],
    [{ provider: { max_price: { prompt: 0.5 } } }, "provider.max_price"],
    [{ provider: { require_parameters: "yes" } }, "provider.require_parameters"],
    [{ model: "test/ok:nitro:floor" }, "model"],
    [{ model: "test/ok:nitro", provider: { sort: "price" } }, "provider.sort"],
  ])("%j: 400 with param %s", async (fields, param) => {
    for (const [path, body] of formats) {
      const { status, body: answer } = await post(path, { model: "test/ok", ...body, ...fields });
      expect(status, path).toBe(400);
      const error = answer.error as { param?: string; message: string };
      // Anthropic's error envelope has no param: the message names it.
      if (path === "/v1/messages") expect(error.message).toContain("model" in fields ? fields.model : param.split(".").slice(0, 2).join("."));
      else expect(error.param, path).toBe(param);
    }
  });

  it("require_parameters: the route lacking a parameter is skipped and traced; max_price that fits serves", async () => {
    const fit = await post("/api/v1/chat/completions", { model: "test/ok", provider: { max_price: { prompt: 2, completion: 2 } }, messages: [{ role: "user", content: "Hi" }] });
    expect(fit.status).toBe(200);
    const both = await post("/api/v1/chat/completions", {
      model: "test/plain",
      models: ["test/ok"],
      top_p: 0.5,
      provider: { require_parameters: true },
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(both.status).toBe(200);
    expect(both.trace).toContain("test/plain@cheap;skipped;require_parameters");
  });
});

describe("two instances sharing the measurements through Redis", () => {
  let redis: RedisServer;
  const instances: Gateway[] = [];
  beforeAll(async () => {
    redis = await startRedisServer();
    for (let i = 0; i < 2; i++) {
      instances.push(await startGateway(testConfig(upstream.url), { core: { now: clock.now }, env: { REDIS_URL: redis.url, REDIS_PREFIX: "prefs-test:" } }));
    }
  });
  afterAll(async () => {
    for (const instance of instances) await instance.close();
    await redis?.stop();
  });

  it("what one instance measured, the other sorts by and shows, after one sync each", async () => {
    const [a, b] = instances;
    upstream.timings.set("ok", { latencyMs: 50, durationMs: 100, completionTokens: 100 });
    upstream.timings.set("ok-dear", { latencyMs: 900, durationMs: 5000, completionTokens: 100 });
    for (const only of [["cheap"], ["dear"]]) {
      expect((await post("/api/v1/chat/completions", { model: "test/ok", stream: true, provider: { only }, messages: [{ role: "user", content: "Hi" }] }, a)).status).toBe(200);
    }
    expect(await measuredOf("test/ok", b)).toEqual({ cheap: null, dear: null });
    await a.core.measurements.sync();
    await b.core.measurements.sync();
    expect(await measuredOf("test/ok", b)).toEqual({
      cheap: { first_token_latency_ms: 50, throughput_tokens_per_second: null, samples: 1 },
      dear: { first_token_latency_ms: 900, throughput_tokens_per_second: null, samples: 1 },
    });
    // Slower now on cheap: b's own samples and a's meet in one weighted average.
    upstream.timings.set("ok", { latencyMs: 1050, durationMs: 100, completionTokens: 100 });
    await post("/api/v1/chat/completions", { model: "test/ok", stream: true, provider: { only: ["cheap"] }, messages: [{ role: "user", content: "Hi" }] }, b);
    await post("/api/v1/chat/completions", { model: "test/ok", stream: true, provider: { only: ["cheap"] }, messages: [{ role: "user", content: "Hi" }] }, b);
    await b.core.measurements.sync();
    await a.core.measurements.sync();
    // 50 -> 350 -> 560, against dear's 900: cheap is still the lower latency, on both.
    expect(((await measuredOf("test/ok", a)).cheap as { first_token_latency_ms: number }).first_token_latency_ms).toBeCloseTo(560, 6);
    for (const instance of [a, b]) {
      expect((await post("/api/v1/chat/completions", { model: "test/ok", provider: { sort: "latency" }, messages: [{ role: "user", content: "Hi" }] }, instance)).provider).toBe("cheap");
    }
  });
});
