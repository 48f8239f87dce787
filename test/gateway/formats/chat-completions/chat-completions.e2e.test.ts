// End to end: the official openai SDK against the gateway (in-process and split
// over Connect/HTTP2), with a real fake OpenAI upstream behind it.
import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FAKE_USAGE, startFakeUpstream, type FakeUpstream } from "../../../support/fake-openai-upstream.ts";
import { DISABLED_KEY, startGateway, TEST_KEY, testConfig, type Gateway } from "../../../support/harness.ts";

/** The router's extra usage fields, which the SDK's types do not know. */
interface RouterUsage extends OpenAI.CompletionUsage {
  cost: number;
  chat_id: string;
  provider: string;
}

const SCALE = 10n ** 15n;

/** An exact decimal string as an integer count of 1e-15 USD. */
function toUnits(decimal: string): bigint {
  const [whole, fraction = ""] = decimal.split(".");
  return BigInt(whole) * SCALE + BigInt(fraction.padEnd(15, "0"));
}

function fromUnits(units: bigint): string {
  const fraction = (units % SCALE).toString().padStart(15, "0").replace(/0+$/, "");
  return (units / SCALE).toString() + (fraction ? "." + fraction : "");
}

const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "The weather in a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];

describe.each([{ split: false }, { split: true }])("chat completions through the openai SDK (split: $split)", ({ split }) => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  let client: OpenAI;
  /** The exact cost of FAKE_USAGE at the cheap route of test/ok, as a decimal string. */
  let expectedCost: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    const config = testConfig(upstream.url);
    gateway = await startGateway(config, { split });
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
    const pricing = config.models.find((m) => m.id === "test/ok")!.providers.find((p) => p.provider === "cheap")!.pricing;
    const cached = FAKE_USAGE.prompt_tokens_details.cached_tokens;
    expectedCost = fromUnits(
      BigInt(FAKE_USAGE.prompt_tokens - cached) * toUnits(pricing.prompt) +
        BigInt(cached) * toUnits(pricing.input_cache_read!) +
        BigInt(FAKE_USAGE.completion_tokens) * toUnits(pricing.completion) +
        toUnits(pricing.request),
    );
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  beforeEach(() => {
    upstream.requests.length = 0;
  });

  describe("JSON completion", () => {
    it("answers with the upstream's text, the bare model, and usage with exact cost, chat_id and provider", async () => {
      const completion = await client.chat.completions.create({
        model: "test/ok",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Hi" },
        ],
        max_tokens: 50,
        temperature: 0.5,
        top_p: 0.9,
        stop: ["\n\n"],
      });
      expect(completion.object).toBe("chat.completion");
      expect(completion.model).toBe("ok");
      expect(completion.choices).toHaveLength(1);
      expect(completion.choices[0].message.role).toBe("assistant");
      expect(completion.choices[0].message.content).toBe("Hello from ok");
      expect(completion.choices[0].finish_reason).toBe("stop");
      const usage = completion.usage as RouterUsage;
      expect(usage.prompt_tokens).toBe(FAKE_USAGE.prompt_tokens);
      expect(usage.completion_tokens).toBe(FAKE_USAGE.completion_tokens);
      expect(usage.total_tokens).toBe(FAKE_USAGE.prompt_tokens + FAKE_USAGE.completion_tokens);
      expect(usage.prompt_tokens_details?.cached_tokens).toBe(FAKE_USAGE.prompt_tokens_details.cached_tokens);
      expect(usage.completion_tokens_details?.reasoning_tokens).toBe(FAKE_USAGE.completion_tokens_details.reasoning_tokens);
      expect(expectedCost).toBe("0.0000182");
      expect(usage.cost).toBe(Number(expectedCost));
      expect(usage.chat_id).toBe(completion.id);
      expect(usage.provider).toBe("cheap");
    });

    it("writes the cost as an exact decimal literal in the JSON", async () => {
      const response = await fetch(`${gateway.apiUrl}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "test/ok", messages: [{ role: "user", content: "Hi" }] }),
      });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain(`"cost":${expectedCost}`);
    });

    it("forwards the request upstream with the provider's model id and key, and no router-only fields", async () => {
      const body = {
        model: "test/ok",
        models: ["test/ok"],
        request_tags: ["e2e"],
        provider: { order: ["cheap", "dear"] },
        messages: [{ role: "user", content: "Hi" }],
        max_tokens: 50,
        temperature: 0.5,
        top_p: 0.9,
        frequency_penalty: 0.1,
        presence_penalty: 0.2,
        seed: 7,
        stop: ["\n\n"],
        user: "end-user-1",
      } as OpenAI.ChatCompletionCreateParamsNonStreaming;
      await client.chat.completions.create(body);
      expect(upstream.requests).toHaveLength(1);
      const [received] = upstream.requests;
      expect(received.path).toBe("/v1/chat/completions");
      expect(received.headers.authorization).toBe("Bearer cheap-secret");
      expect(received.body).toEqual({
        model: "ok",
        messages: [{ role: "user", content: "Hi" }],
        max_tokens: 50,
        temperature: 0.5,
        top_p: 0.9,
        frequency_penalty: 0.1,
        presence_penalty: 0.2,
        seed: 7,
        stop: ["\n\n"],
        user: "end-user-1",
      });
      for (const field of ["provider", "models", "request_tags", "stream"]) expect(received.body).not.toHaveProperty(field);
    });
  });

  describe("streaming", () => {
    it("streams chunks that concatenate to the text, then a usage chunk with cost, chat_id and provider", async () => {
      const stream = await client.chat.completions.create({
        model: "test/ok",
        messages: [{ role: "user", content: "Hi" }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      // The loop ending is the stream ending ([DONE], then close).
      expect(chunks.length).toBeGreaterThan(2);
      for (const chunk of chunks) {
        expect(chunk.object).toBe("chat.completion.chunk");
        expect(chunk.model).toBe("ok");
        expect(chunk.id).toBe(chunks[0].id);
      }
      const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
      expect(text).toBe("Hello from ok");
      expect(chunks.flatMap((c) => c.choices.map((choice) => choice.finish_reason)).filter(Boolean)).toEqual(["stop"]);
      const last = chunks.at(-1)!;
      expect(last.choices).toEqual([]);
      const usage = last.usage as RouterUsage;
      expect(usage.prompt_tokens).toBe(FAKE_USAGE.prompt_tokens);
      expect(usage.completion_tokens).toBe(FAKE_USAGE.completion_tokens);
      expect(usage.total_tokens).toBe(FAKE_USAGE.total_tokens);
      expect(usage.cost).toBe(Number(expectedCost));
      expect(usage.chat_id).toBe(last.id);
      expect(usage.provider).toBe("cheap");
      expect(upstream.requests[0].body).toMatchObject({ model: "ok", stream: true });
    });

    it("works with the SDK's stream helper and its finalChatCompletion()", async () => {
      const stream = client.chat.completions.stream({
        model: "test/ok",
        messages: [{ role: "user", content: "Hi" }],
        stream_options: { include_usage: true },
      });
      const deltas: string[] = [];
      stream.on("content.delta", ({ delta }) => deltas.push(delta));
      const completion = await stream.finalChatCompletion();
      expect(deltas.join("")).toBe("Hello from ok");
      expect(completion.model).toBe("ok");
      expect(completion.choices[0].message.content).toBe("Hello from ok");
      expect(completion.choices[0].finish_reason).toBe("stop");
      const usage = completion.usage as RouterUsage;
      expect(usage.total_tokens).toBe(FAKE_USAGE.total_tokens);
      expect(usage.cost).toBe(Number(expectedCost));
      expect(usage.chat_id).toBe(completion.id);
      expect(usage.provider).toBe("cheap");
    });
  });

  describe("tool calls", () => {
    it("streams a tool call the SDK helper assembles, with finish_reason tool_calls", async () => {
      const stream = client.chat.completions.stream({
        model: "test/tool",
        messages: [{ role: "user", content: "Weather in Paris?" }],
        tools,
        tool_choice: "auto",
      });
      const completion = await stream.finalChatCompletion();
      const choice = completion.choices[0];
      expect(choice.finish_reason).toBe("tool_calls");
      expect(choice.message.tool_calls).toHaveLength(1);
      const call = choice.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(call.id).toBe("call_fake1");
      expect(call.type).toBe("function");
      expect(call.function.name).toBe("get_weather");
      expect(JSON.parse(call.function.arguments)).toEqual({ city: "Paris" });
      const sent = upstream.requests[0].body;
      expect(sent.tools).toEqual(tools);
      expect(sent.tool_choice).toBe("auto");
    });

    it("accepts the tool result turn and forwards it upstream as a tool message with its tool_call_id", async () => {
      const completion = await client.chat.completions.create({
        model: "test/tool",
        messages: [
          { role: "user", content: "Weather in Paris?" },
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "call_fake1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
          },
          { role: "tool", tool_call_id: "call_fake1", content: '{"celsius":21}' },
        ],
        tools,
      });
      expect(completion.choices).toHaveLength(1);
      const messages = upstream.requests[0].body.messages;
      expect(messages).toEqual([
        { role: "user", content: "Weather in Paris?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_fake1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
        },
        { role: "tool", tool_call_id: "call_fake1", content: '{"celsius":21}' },
      ]);
    });
  });

  describe("errors as the SDK's typed errors", () => {
    const hi = { model: "test/ok", messages: [{ role: "user" as const, content: "Hi" }] };

    /** The rejection of a promise (the test fails if it resolves). */
    async function rejectionOf(promise: Promise<unknown>): Promise<APIError> {
      const error = await promise.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(OpenAI.APIError);
      return error as APIError;
    }

    it("missing key: AuthenticationError 401", async () => {
      const error = await rejectionOf(client.chat.completions.create(hi, { headers: { Authorization: null } }));
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(error.status).toBe(401);
      expect(error.code).toBe("missing_api_key");
      expect(error.type).toBe("invalid_request_error");
    });

    it("missing key: the raw body has code, message, param and type, and no status", async () => {
      const response = await fetch(`${gateway.apiUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(hi),
      });
      expect(response.status).toBe(401);
      const body = (await response.json()) as { error: Record<string, unknown> };
      expect(Object.keys(body)).toEqual(["error"]);
      expect(body.error).toEqual({ message: expect.any(String), type: "invalid_request_error", param: null, code: "missing_api_key" });
      expect(body.error).not.toHaveProperty("status");
    });

    it.each([
      ["unknown", "sk-not-a-key", "invalid_api_key"],
      ["disabled", DISABLED_KEY, "key_disabled"],
    ])("%s key: AuthenticationError 401", async (_what, apiKey, code) => {
      const other = new OpenAI({ apiKey, baseURL: gateway.apiUrl, maxRetries: 0 });
      const error = await rejectionOf(other.chat.completions.create(hi));
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(error.status).toBe(401);
      expect(error.code).toBe(code);
      expect(error.error).not.toHaveProperty("status");
      expect(upstream.requests).toHaveLength(0);
    });

    it("invalid parameter: BadRequestError naming the parameter", async () => {
      const error = await rejectionOf(client.chat.completions.create({ ...hi, temperature: 3 }));
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.status).toBe(400);
      expect(error.param).toBe("temperature");
      expect(error.type).toBe("invalid_request_error");
      expect(error.message).toContain("temperature");
      expect(upstream.requests).toHaveLength(0);
    });

    it("unknown model: NotFoundError model_not_found", async () => {
      const error = await rejectionOf(client.chat.completions.create({ ...hi, model: "test/does-not-exist" }));
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error.status).toBe(404);
      expect(error.code).toBe("model_not_found");
      expect(error.param).toBe("model");
    });

    it("every provider rate limited: RateLimitError 429 with error.status 429", async () => {
      const error = await rejectionOf(client.chat.completions.create({ ...hi, model: "test/all-429" }));
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      expect(error.status).toBe(429);
      expect(error.type).toBe("rate_limit_error");
      expect((error.error as { status?: number }).status).toBe(429);
      expect(upstream.requests.map((r) => r.headers.authorization)).toEqual(["Bearer cheap-secret", "Bearer dear-secret"]);
    });

    it("upstream 400: BadRequestError, not retried on the second provider", async () => {
      const error = await rejectionOf(client.chat.completions.create({ ...hi, model: "test/bad-request" }));
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.status).toBe(400);
      expect(error.message).toContain("fake failure 400");
      expect(upstream.requests.map((r) => r.body.model)).toEqual(["fail-400"]);
    });

    it("model whose only provider has no key: 503 no_provider_available naming the missing variable", async () => {
      const error = await rejectionOf(client.chat.completions.create({ ...hi, model: "test/unkeyed" }));
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect(error.status).toBe(503);
      expect(error.code).toBe("no_provider_available");
      expect(error.message).toContain("NOKEY_KEY");
      expect(upstream.requests).toHaveLength(0);
    });

    it("no_provider_available is a configuration error: x-should-retry false, so the SDK asks once", async () => {
      const sent: string[] = [];
      const counting: typeof fetch = (input, init) => {
        sent.push(String(input));
        return fetch(input, init);
      };
      // One retry is enough to tell (the SDK would wait about a second before it).
      const retrying = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 1, fetch: counting });
      const error = await rejectionOf(retrying.chat.completions.create({ ...hi, model: "test/unkeyed" }));
      expect(error.status).toBe(503);
      expect(error.headers?.get("x-should-retry")).toBe("false");
      expect(sent).toHaveLength(1);
    });
  });

  describe("simulator", () => {
    const echo = { model: "simulator/echo", messages: [{ role: "user" as const, content: "ping pong" }] };

    it("answers JSON deterministically", async () => {
      const first = await client.chat.completions.create(echo);
      const second = await client.chat.completions.create(echo);
      expect(first.model).toBe("echo");
      expect(first.choices[0].message.content).toBe("You said: ping pong");
      expect(second.choices[0].message.content).toBe(first.choices[0].message.content);
      expect(second.usage).toMatchObject({ prompt_tokens: first.usage!.prompt_tokens, completion_tokens: first.usage!.completion_tokens });
      expect((first.usage as RouterUsage).provider).toBe("simulator");
    });

    it("streams the same answer", async () => {
      const stream = await client.chat.completions.create({ ...echo, stream: true });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      expect(text).toBe("You said: ping pong");
    });
  });
});
