// The semantic cache in the Responses and Messages formats (their official
// SDKs, the same `cache_key` header and `cache` field as chat), across formats
// (one stored answer replayed in another format), and on two gateway
// instances sharing one Redis: what one keeps, the other hits.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeUpstream, type FakeUpstream } from "../../support/fake-openai-upstream.ts";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../support/harness.ts";
import { startRedisServer, type RedisServer } from "../../support/redis-server.ts";

let cacheKeys = 0;
const freshCacheKey = () => `formats-${process.pid}-${++cacheKeys}`;

describe("the semantic cache in the Responses and Messages formats", () => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    gateway = await startGateway(testConfig(upstream.url));
    openai = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: TEST_KEY, baseURL: gateway.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const respond = async (input: string, cacheKey: string, extra: Record<string, unknown> = {}) => {
    await gateway.core.semanticCache.flush();
    return (await openai.responses.create({ model: "test/ok", input, store: false, ...extra } as OpenAI.Responses.ResponseCreateParamsNonStreaming, { headers: { cache_key: cacheKey } })) as OpenAI.Responses.Response & {
      cached?: boolean;
      similarity?: number;
    };
  };

  const message = async (content: string, cacheKey: string, extra: Record<string, unknown> = {}) => {
    await gateway.core.semanticCache.flush();
    return (await anthropic.messages.create({ model: "test/ok", max_tokens: 100, messages: [{ role: "user", content }], ...extra } as Anthropic.MessageCreateParamsNonStreaming, { headers: { cache_key: cacheKey } })) as Anthropic.Message & {
      cached?: boolean;
      similarity?: number;
    };
  };

  it("Responses: a repeated input is a hit, with cached and similarity on the response object", async () => {
    const cacheKey = freshCacheKey();
    const before = upstream.requests.length;
    const original = await respond("What is the capital of Italy?", cacheKey);
    const hit = await respond("What is the capital of Italy?", cacheKey);
    expect(upstream.requests.length - before).toBe(1);
    expect(original.cached).toBe(false);
    expect(hit).toMatchObject({ cached: true, similarity: 1, output_text: original.output_text });
    expect(hit.id).not.toBe(original.id);
  });

  it("Responses: a streamed hit carries the cache's fields on response.created and response.completed", async () => {
    const cacheKey = freshCacheKey();
    await respond("What is the capital of Peru?", cacheKey);
    await gateway.core.semanticCache.flush();
    const stream = await openai.responses.create({ model: "test/ok", input: "What is the capital of Peru?", store: false, stream: true }, { headers: { cache_key: cacheKey } });
    const events = [];
    for await (const event of stream) events.push(event);
    const created = events.find((event) => event.type === "response.created")!;
    const completed = events.find((event) => event.type === "response.completed")!;
    expect(created.response).toMatchObject({ cached: true, similarity: 1 });
    expect(completed.response).toMatchObject({ cached: true, similarity: 1 });
    expect(events.filter((event) => event.type === "response.output_text.delta").map((event) => (event as { delta: string }).delta).join("")).toBe("Hello from ok");
  });

  it("Messages: a repeated message is a hit, with cached and similarity on the message", async () => {
    const cacheKey = freshCacheKey();
    const original = await message("What is the capital of Chile?", cacheKey);
    const hit = await message("What is the capital of Chile?", cacheKey);
    expect(original.cached).toBe(false);
    expect(hit).toMatchObject({ cached: true, similarity: 1, content: original.content });
  });

  it("Messages: the system prompt is in the key", async () => {
    const cacheKey = freshCacheKey();
    await message("What is the capital of Chile?", cacheKey, { system: "Answer in Spanish." });
    expect((await message("What is the capital of Chile?", cacheKey, { system: "Answer in English." })).cached).toBe(false);
    expect((await message("What is the capital of Chile?", cacheKey, { system: "Answer in Spanish." })).cached).toBe(true);
  });

  it("keeps each format's answers apart: the endpoint is in the key", async () => {
    const cacheKey = freshCacheKey();
    await respond("What is the capital of Kenya?", cacheKey);
    expect((await message("What is the capital of Kenya?", cacheKey)).cached).toBe(false);
  });
});

describe("the semantic cache on two instances sharing one Redis", () => {
  let redis: RedisServer;
  let upstream: FakeUpstream;
  const gateways: Gateway[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    upstream = await startFakeUpstream();
    const env = { REDIS_URL: redis.url, REDIS_PREFIX: "semantic-cache:" };
    gateways.push(await startGateway(testConfig(upstream.url), { env }), await startGateway(testConfig(upstream.url), { env }));
  });
  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.close()));
    await upstream?.close();
    await redis?.stop();
  });

  const complete = async (gateway: Gateway, content: string, cacheKey: string) => {
    await Promise.all(gateways.map((each) => each.core.semanticCache.flush()));
    const client = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: "test/ok", messages: [{ role: "user", content }] }, { headers: { cache_key: cacheKey } });
    return completion as OpenAI.ChatCompletion & { cached?: boolean; similarity?: number };
  };

  it("what one instance keeps, the other hits: exactly, and by similarity", async () => {
    const cacheKey = freshCacheKey();
    const before = upstream.requests.length;
    expect((await complete(gateways[0], "How do I sort a dictionary by value in Python?", cacheKey)).cached).toBe(false);
    expect(await complete(gateways[1], "How do I sort a dictionary by value in Python?", cacheKey)).toMatchObject({ cached: true, similarity: 1 });
    const similar = await complete(gateways[1], "How can I sort a dictionary by value in Python?", cacheKey);
    expect(similar.cached).toBe(true);
    expect(similar.similarity).toBeLessThan(1);
    expect(upstream.requests.length - before).toBe(1);
  });

  it("an entry kept later by the other instance is found too (its index catches up)", async () => {
    const cacheKey = freshCacheKey();
    await complete(gateways[1], "What is a monad?", cacheKey);
    await complete(gateways[0], "What is a functor?", cacheKey);
    expect((await complete(gateways[1], "What is a functor?", cacheKey)).cached).toBe(true);
    expect((await complete(gateways[0], "What is a monad?", cacheKey)).cached).toBe(true);
  });
});
