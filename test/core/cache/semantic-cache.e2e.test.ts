// The semantic cache end to end (docs/cache.md): the official openai SDK
// against the gateway (in-process and split over Connect), a fake OpenAI
// upstream that counts what reaches it, and an injected clock. A hit is an
// answer with `cached: true` that never reached the upstream; each test asks
// in its own cache_key, so no test sees another's entries.
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../../core/config/load.ts";
import { startFakeUpstream, type FakeUpstream } from "../../support/fake-openai-upstream.ts";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../support/harness.ts";

const OTHER_KEY = "sk-other-org-key";

/** The test configuration with a second organisation, org_other, whose key is OTHER_KEY. */
function configWithTwoOrganizations(upstreamUrl: string) {
  const config = testConfig(upstreamUrl);
  return parseConfig(
    JSON.stringify({
      ...config,
      organizations: [...config.organizations, { id: "org_other", name: "Other", credits: "1000", keys: [{ id: "key_other", env: "OTHER_API_KEY" }] }],
    }),
  );
}

interface CachedCompletion extends OpenAI.ChatCompletion {
  cached?: boolean;
  similarity?: number;
  usage: OpenAI.CompletionUsage & { cost: number };
}

let cacheKeys = 0;
/** A cache_key no other test uses. */
const freshCacheKey = () => `test-${process.pid}-${++cacheKeys}`;

const ask = (content: string, extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}): OpenAI.ChatCompletionCreateParamsNonStreaming => ({
  model: "test/ok",
  messages: [
    { role: "system", content: "Answer briefly." },
    { role: "user", content },
  ],
  ...extra,
});

describe.each([{ split: false }, { split: true }])("the semantic cache through the openai SDK (split: $split)", ({ split }) => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  let client: OpenAI;
  let otherClient: OpenAI;
  const clock = { now: Date.parse("2026-11-28T10:00:00Z") };

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    gateway = await startGateway(configWithTwoOrganizations(upstream.url), { split, env: { OTHER_API_KEY: OTHER_KEY }, core: { now: () => new Date(clock.now) } });
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
    otherClient = new OpenAI({ apiKey: OTHER_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  /** One JSON completion with the cache_key header (none: undefined), after the answers being kept are kept. */
  async function complete(body: OpenAI.ChatCompletionCreateParamsNonStreaming, cacheKey: string | undefined, as: OpenAI = client) {
    await gateway.core.semanticCache.flush();
    const { data, response } = await as.chat.completions.create(body, cacheKey === undefined ? {} : { headers: { cache_key: cacheKey } }).withResponse();
    return { completion: data as CachedCompletion, headers: response.headers };
  }

  /** Sends `first`, then `second`, in one fresh cache_key: whether the second was a hit. */
  async function secondHits(first: OpenAI.ChatCompletionCreateParamsNonStreaming, second: OpenAI.ChatCompletionCreateParamsNonStreaming) {
    const cacheKey = freshCacheKey();
    const original = await complete(first, cacheKey);
    expect(original.completion.cached).toBe(false);
    const before = upstream.requests.length;
    const { completion } = await complete(second, cacheKey);
    expect(upstream.requests.length - before, "upstream calls of the second request").toBe(completion.cached ? 0 : 1);
    return completion;
  }

  describe("scope", () => {
    it("is off without the cache_key header: no cached field, every request reaches the provider", async () => {
      const first = await complete(ask("What is the capital of France?"), undefined);
      const second = await complete(ask("What is the capital of France?"), undefined);
      expect(first.completion).not.toHaveProperty("cached");
      expect(second.completion).not.toHaveProperty("cached");
      expect(upstream.requests).toHaveLength(2);
    });

    it("answers a repeated question from the cache at a tenth of the price, and says so in the generation", async () => {
      const cacheKey = freshCacheKey();
      const original = await complete(ask("What is the capital of France?"), cacheKey);
      const hit = await complete(ask("What is the capital of France?"), cacheKey);
      expect(upstream.requests).toHaveLength(1);
      expect(original.completion).toMatchObject({ cached: false });
      expect(original.completion).not.toHaveProperty("similarity");
      expect(hit.completion).toMatchObject({ cached: true, similarity: 1, model: original.completion.model });
      expect(hit.completion.id).not.toBe(original.completion.id);
      expect(hit.headers.get("x-router-trace")).toBe("test/ok@cheap;cache_hit;exact");
      expect(hit.completion.choices).toEqual(original.completion.choices);
      expect(hit.completion.usage.prompt_tokens).toBe(original.completion.usage.prompt_tokens);
      // A tenth, rounded up to the smallest unit (1e-15 USD): exact in decimal here.
      expect(hit.completion.usage.cost).toBeCloseTo(original.completion.usage.cost / 10, 15);
      await gateway.core.accounts.usage.flush();
      const generation = await fetch(`${gateway.apiUrl}/generation?id=${hit.completion.id}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect(((await generation.json()) as { data: unknown }).data).toMatchObject({ id: hit.completion.id, cache_hit: true, cache_similarity: 1, total_cost: hit.completion.usage.cost });
    });

    it("never answers one organisation from another's cache, even with the same cache_key and prompt", async () => {
      const cacheKey = freshCacheKey();
      await complete(ask("Name three primary colours."), cacheKey);
      const other = await complete(ask("Name three primary colours."), cacheKey, otherClient);
      expect(other.completion.cached).toBe(false);
      expect(upstream.requests).toHaveLength(2);
      // Each organisation then hits its own entry.
      expect((await complete(ask("Name three primary colours."), cacheKey, otherClient)).completion.cached).toBe(true);
      expect((await complete(ask("Name three primary colours."), cacheKey)).completion.cached).toBe(true);
    });

    it("never answers from another cache_key", async () => {
      await complete(ask("Name three primary colours."), freshCacheKey());
      expect((await complete(ask("Name three primary colours."), freshCacheKey())).completion.cached).toBe(false);
    });

    it("refuses a cache_key header longer than 256 characters with a 400 naming it", async () => {
      const refused = await client.chat.completions.create(ask("Hi"), { headers: { cache_key: "k".repeat(257) } }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: "invalid_parameter", param: "cache_key" });
      expect((await complete(ask("Hi"), "k".repeat(256))).completion.cached).toBe(false);
    });

    it("tells the caller when `cache` came without the header, and when the top-level cache_control has no effect", async () => {
      const withoutHeader = await complete({ ...ask("Hi"), cache: { expiration_time: 60 } } as OpenAI.ChatCompletionCreateParamsNonStreaming, undefined);
      expect(withoutHeader.headers.get("x-router-warnings")).toContain("the semantic cache needs the cache_key header");
      expect(withoutHeader.completion).not.toHaveProperty("cached");
      const topLevel = await complete({ ...ask("Hi"), cache_control: { type: "ephemeral" } } as OpenAI.ChatCompletionCreateParamsNonStreaming, undefined);
      expect(topLevel.headers.get("x-router-warnings")).toContain("a top-level cache_control has no effect");
    });
  });

  describe("the key", () => {
    const system = (content: string) => ({ role: "system" as const, content });
    const user = (content: string) => ({ role: "user" as const, content });
    const weather: OpenAI.ChatCompletionTool = { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } };

    it.each([
      ["the system message", { messages: [system("Answer in French."), user("What is the capital of France?")] }],
      ["the tools", { tools: [weather] }],
      ["temperature", { temperature: 0.2 }],
      ["top_p", { top_p: 0.5 }],
      ["max_tokens", { max_tokens: 17 }],
      ["stop", { stop: ["\n"] }],
      ["seed", { seed: 7 }],
      ["response_format", { response_format: { type: "json_object" as const } }],
      ["reasoning", { reasoning_effort: "low" as const }],
      ["the model", { model: "test/plain" }],
    ])("misses when %s changes", async (_name, change) => {
      const completion = await secondHits(ask("What is the capital of France?"), { ...ask("What is the capital of France?"), ...change });
      expect(completion.cached).toBe(false);
    });

    it("shares answers across models with filter_on_model false", async () => {
      const cache = { filter_on_model: false };
      const completion = await secondHits(
        { ...ask("What is the capital of France?"), cache } as OpenAI.ChatCompletionCreateParamsNonStreaming,
        { ...ask("What is the capital of France?"), model: "test/plain", cache } as OpenAI.ChatCompletionCreateParamsNonStreaming,
      );
      expect(completion).toMatchObject({ cached: true, model: "ok" });
    });

    it("with filter_on_provider, answers only from the providers the request may use", async () => {
      const onlyDear = { provider: { only: ["dear"] } };
      const filtered = await secondHits(
        { ...ask("What is the capital of Spain?"), cache: { filter_on_provider: true } } as OpenAI.ChatCompletionCreateParamsNonStreaming,
        { ...ask("What is the capital of Spain?"), ...onlyDear, cache: { filter_on_provider: true } } as OpenAI.ChatCompletionCreateParamsNonStreaming,
      );
      expect(filtered.cached).toBe(false);
      // Without it (the default), the cheap provider's answer serves a request for the dear one.
      const unfiltered = await secondHits(ask("What is the capital of Spain?"), { ...ask("What is the capital of Spain?"), ...onlyDear } as OpenAI.ChatCompletionCreateParamsNonStreaming);
      expect(unfiltered).toMatchObject({ cached: true });
    });

    it("keys identically whatever order the request's JSON objects list their keys in", async () => {
      const tool = (parameters: Record<string, unknown>): OpenAI.ChatCompletionTool => ({ type: "function", function: { name: "lookup", parameters } });
      const completion = await secondHits(
        { ...ask("Look up the weather."), tools: [tool({ type: "object", properties: { a: { type: "string" }, b: { type: "number" } } })], tool_choice: "none" },
        { ...ask("Look up the weather."), tools: [tool({ properties: { b: { type: "number" }, a: { type: "string" } }, type: "object" })], tool_choice: "none" },
      );
      expect(completion.cached).toBe(true);
    });
  });

  describe("similarity", () => {
    it("matches a paraphrase under the default threshold, reporting its similarity", async () => {
      // Case, punctuation and contractions alone make no difference at all (similarity 1 without being exact): here a word differs.
      const completion = await secondHits(ask("How do I sort a dictionary by value in Python?"), ask("How can I sort a dictionary by value in Python?"));
      expect(completion.cached).toBe(true);
      expect(completion.similarity).toBeGreaterThan(0);
      expect(completion.similarity).toBeLessThan(1);
    });

    it("matches exactly only with similarity_threshold 1", async () => {
      const cache = { similarity_threshold: 1 };
      const paraphrase = await secondHits(
        { ...ask("What is the capital city of France?"), cache } as OpenAI.ChatCompletionCreateParamsNonStreaming,
        { ...ask("what's the capital city of France"), cache } as OpenAI.ChatCompletionCreateParamsNonStreaming,
      );
      expect(paraphrase.cached).toBe(false);
      const same = await secondHits(
        { ...ask("What is the capital city of France?"), cache } as OpenAI.ChatCompletionCreateParamsNonStreaming,
        { ...ask("What is the capital city of France?"), cache } as OpenAI.ChatCompletionCreateParamsNonStreaming,
      );
      expect(same).toMatchObject({ cached: true, similarity: 1 });
    });

    it("holds the threshold at its edge: a hit at the similarity itself, a miss just above", async () => {
      const cacheKey = freshCacheKey();
      await complete(ask("How do I reverse a list in Python?"), cacheKey);
      const question = "How do I reverse a Python list?";
      const found = await complete({ ...ask(question), cache: { similarity_threshold: 0 } } as OpenAI.ChatCompletionCreateParamsNonStreaming, cacheKey);
      const similarity = found.completion.similarity!;
      expect(similarity).toBeGreaterThan(0.3);
      // The answer shows six decimals: the edge is within a millionth of it.
      const below = await complete({ ...ask(question), cache: { similarity_threshold: similarity - 1e-6 } } as OpenAI.ChatCompletionCreateParamsNonStreaming, cacheKey);
      expect(below.completion.cached).toBe(true);
      const above = await complete({ ...ask(question), cache: { similarity_threshold: Math.min(1, similarity + 1e-6) } } as OpenAI.ChatCompletionCreateParamsNonStreaming, cacheKey);
      expect(above.completion.cached).toBe(false);
    });

    it.each([
      ["one number", "What is 15% of 240?", "What is 15% of 250?"],
      ["one negation", "Should I use a mutex here?", "Should I not use a mutex here?"],
      ["one number, in French", "Combien font 12 fois 7 ?", "Combien font 12 fois 8 ?"],
      ["one negation, in German", "Ist Python eine kompilierte Sprache?", "Ist Python keine kompilierte Sprache?"],
    ])("never matches prompts that differ in %s, even at a threshold of 0.5", async (_name, first, second) => {
      const cache = { similarity_threshold: 0.5 };
      const completion = await secondHits(
        { ...ask(first), cache } as OpenAI.ChatCompletionCreateParamsNonStreaming,
        { ...ask(second), cache } as OpenAI.ChatCompletionCreateParamsNonStreaming,
      );
      expect(completion.cached).toBe(false);
    });

    it("never matches a different question", async () => {
      const completion = await secondHits(ask("What is the capital of France?"), ask("What is the population of France?"));
      expect(completion.cached).toBe(false);
    });
  });

  describe("conversation modes", () => {
    const conversation = (first: string, last: string, cache: Record<string, unknown>) =>
      ({
        model: "test/ok",
        messages: [
          { role: "system", content: "Answer briefly." },
          { role: "user", content: first },
          { role: "assistant", content: "Sure." },
          { role: "user", content: "And the second step?" },
          { role: "assistant", content: "Then mix." },
          { role: "user", content: last },
        ],
        cache,
      }) as OpenAI.ChatCompletionCreateParamsNonStreaming;

    it("full_conversation (the default) compares every turn", async () => {
      const completion = await secondHits(conversation("How do I bake bread?", "How long in the oven?", {}), conversation("How do I bake a cake?", "How long in the oven?", {}));
      expect(completion.cached).toBe(false);
    });

    it("last_message_only compares the last message alone", async () => {
      const cache = { conversation_mode: "last_message_only" };
      const completion = await secondHits(conversation("How do I bake bread?", "How long in the oven?", cache), conversation("How do I bake a cake?", "How long in the oven?", cache));
      expect(completion).toMatchObject({ cached: true, similarity: 1 });
    });

    it("last_n_turns compares the last N user turns and what follows them", async () => {
      const two = { conversation_mode: "last_n_turns", last_n_turns: 2 };
      const hit = await secondHits(conversation("How do I bake bread?", "How long in the oven?", two), conversation("How do I bake a cake?", "How long in the oven?", two));
      expect(hit).toMatchObject({ cached: true, similarity: 1 });
      const three = { conversation_mode: "last_n_turns", last_n_turns: 3 };
      const miss = await secondHits(conversation("How do I bake bread?", "How long in the oven?", three), conversation("How do I bake a cake?", "How long in the oven?", three));
      expect(miss.cached).toBe(false);
    });
  });

  describe("expiry", () => {
    it("serves an entry until expiration_time has passed, by the injected clock", async () => {
      const cacheKey = freshCacheKey();
      const cache = { expiration_time: 60 };
      const body = { ...ask("What is the tallest mountain?"), cache } as OpenAI.ChatCompletionCreateParamsNonStreaming;
      await complete(body, cacheKey);
      clock.now += 59_999;
      expect((await complete(body, cacheKey)).completion.cached).toBe(true);
      clock.now += 1;
      expect((await complete(body, cacheKey)).completion.cached).toBe(false);
    });
  });

  describe("streams", () => {
    /** The `data:` payloads of one streamed chat request with the cache_key header, after the answers being kept are kept. */
    async function streamFrames(body: object, cacheKey: string): Promise<string[]> {
      await gateway.core.semanticCache.flush();
      const response = await fetch(`${gateway.apiUrl}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", cache_key: cacheKey },
        body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
      });
      expect(response.status).toBe(200);
      const text = await response.text();
      return text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice("data: ".length));
    }

    /** A chunk without what differs between two answers of one question: the id, the time, the cache's fields, the cost. */
    function comparable(frame: string) {
      if (frame === "[DONE]") return frame;
      const { id: _id, created: _created, cached: _cached, similarity: _similarity, ...chunk } = JSON.parse(frame);
      if (chunk.usage) chunk.usage = { ...chunk.usage, cost: "(cost)", chat_id: "(id)" };
      return chunk;
    }

    it.each([
      ["text", { model: "test/ok", messages: [{ role: "user", content: "Stream me a greeting." }] }],
      ["tool calls", { model: "test/tool", messages: [{ role: "user", content: "Weather in Paris and London?" }], tools: [
        { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
        { type: "function", function: { name: "get_time", parameters: { type: "object", properties: { city: { type: "string" } } } } },
      ] }],
    ])("replays a streamed answer (%s) frame by frame, with the same framing", async (_name, body) => {
      const cacheKey = freshCacheKey();
      const original = await streamFrames(body, cacheKey);
      const replayed = await streamFrames(body, cacheKey);
      expect(upstream.requests).toHaveLength(1);
      expect(JSON.parse(original[0])).toMatchObject({ cached: false });
      expect(JSON.parse(replayed[0])).toMatchObject({ cached: true, similarity: 1 });
      expect(JSON.parse(replayed.at(-2)!)).toMatchObject({ cached: true, similarity: 1 });
      expect(replayed.map(comparable)).toEqual(original.map(comparable));
      const ids = new Set(replayed.filter((frame) => frame !== "[DONE]").map((frame) => JSON.parse(frame).id));
      expect(ids.size).toBe(1);
      expect(ids.has(JSON.parse(original[0]).id)).toBe(false);
    });

    it("answers a JSON request from a streamed original, and a stream from a JSON original", async () => {
      const cacheKey = freshCacheKey();
      const frames = await streamFrames(ask("Say hello."), cacheKey);
      const streamedText = frames.filter((frame) => frame !== "[DONE]").map((frame) => JSON.parse(frame).choices[0]?.delta?.content ?? "").join("");
      const fromStream = await complete(ask("Say hello."), cacheKey);
      expect(fromStream.completion).toMatchObject({ cached: true, choices: [{ message: { content: streamedText } }] });

      const otherKey = freshCacheKey();
      const json = await complete(ask("Say goodbye."), otherKey);
      const replayed = await streamFrames(ask("Say goodbye."), otherKey);
      expect(JSON.parse(replayed[0])).toMatchObject({ cached: true });
      const replayedText = replayed.filter((frame) => frame !== "[DONE]").map((frame) => JSON.parse(frame).choices[0]?.delta?.content ?? "").join("");
      expect(replayedText).toBe(json.completion.choices[0].message.content);
      expect(upstream.requests).toHaveLength(2);
    });

    it("is read by the SDK's stream helper like any stream", async () => {
      const cacheKey = freshCacheKey();
      await streamFrames(ask("Say hello again."), cacheKey);
      const stream = client.chat.completions.stream({ ...ask("Say hello again."), stream: true }, { headers: { cache_key: cacheKey } });
      const final = await stream.finalChatCompletion();
      expect(final.choices[0].message.content).toBe("Hello from ok");
      expect(upstream.requests).toHaveLength(1);
    });
  });

  describe("what is kept", () => {
    it("keeps nothing of an answer cut mid-stream", async () => {
      const cacheKey = freshCacheKey();
      const body = { model: "test/cut", messages: [{ role: "user" as const, content: "Tell me a story." }], stream: true as const };
      const first = await client.chat.completions.create(body, { headers: { cache_key: cacheKey } });
      await expect(async () => {
        for await (const _chunk of first);
      }).rejects.toThrow();
      await gateway.core.semanticCache.flush();
      const second = await client.chat.completions.create(body, { headers: { cache_key: cacheKey } });
      await expect(async () => {
        for await (const _chunk of second);
      }).rejects.toThrow();
      expect(upstream.requests.filter((request) => (request.body as { model?: string }).model === "cut-after-first")).toHaveLength(2);
    });
  });
});
