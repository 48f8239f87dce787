// CountTokens in the core, through the gateway's in-process client: exact on
// Anthropic and Gemini routes (their counting endpoints, on the fakes, which
// refuse what the real ones refuse), estimated with gpt-tokenizer elsewhere,
// the route Generate would take, the key told first, and nothing admitted or
// charged (balance, usage log and rate-limit window untouched).
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../../core/config/load.ts";
import { createCore, type Core } from "../../../core/create-core.ts";
import { ConnectError, errorDetailOf } from "../../../core/errors.ts";
import { tokenEstimateOf } from "../../../core/providers/registry.ts";
import { createCoreServer } from "../../../core/server.ts";
import { createInProcessCoreClient, createRemoteCoreClient, type CoreClient } from "../../../gateway/core-client.ts";
import { CountTokensRequestSchema, GenerateRequestSchema, PublicFormat, Role, ToolChoice_Mode, type Message } from "../../../gen/router/v1/inference_pb.js";
import { startFakeAnthropicUpstream } from "../../support/fake-anthropic-upstream.ts";
import { FAKE_COUNTS } from "../../support/fake-count-tokens.ts";
import { startFakeGeminiUpstream } from "../../support/fake-gemini-upstream.ts";
import type { FakeUpstream } from "../../support/recording-server.ts";
import { FORMAT_FIELDS } from "../../support/request-formats.ts";

const KEY = "sk-count-key";
const LIMITED_KEY = "sk-count-limited";
const ORG = "org_count";
// A held clock: the key's one-minute request window cannot roll over mid-test.
const NOW = new Date();

let anthropic: FakeUpstream;
let gemini: FakeUpstream;
let core: Core;
let client: CoreClient;

function config(anthropicUrl: string, geminiUrl: string) {
  const model = (id: string, provider: string, providerModelId: string) => ({
    id,
    name: id,
    created: 1700000000,
    creator: "count",
    context_length: 128000,
    max_completion_tokens: 4096,
    input_modalities: ["text", "image", "file"],
    output_modalities: ["text"],
    supported_parameters: ["max_tokens", "temperature", "stop", "tools", "tool_choice", "response_format", "reasoning"],
    providers: [{ provider, provider_model_id: providerModelId, pricing: { prompt: "0.000001", completion: "0.000002" } }],
  });
  return parseConfig(
    JSON.stringify({
      providers: [
        { id: "simulator", label: "Simulator", protocol: "simulator" },
        { id: "anthropic", label: "Anthropic", protocol: "anthropic", base_url: anthropicUrl, api_key_env: "UPSTREAM_KEY", timeout_ms: 5000 },
        { id: "gemini", label: "Gemini", protocol: "gemini", base_url: geminiUrl, api_key_env: "UPSTREAM_KEY", timeout_ms: 5000 },
        // Never called: an OpenAI-compatible route is estimated.
        { id: "openai", label: "OpenAI", protocol: "openai-compatible", base_url: "http://127.0.0.1:9/v1", api_key_env: "UPSTREAM_KEY" },
      ],
      models: [
        model("count/claude", "anthropic", "claude-count"),
        model("count/claude-down", "anthropic", "fail-503"),
        model("count/claude-refuses", "anthropic", "fail-400"),
        model("count/gemini", "gemini", "gemini-count"),
        model("count/gemini-down", "gemini", "fail-503"),
        model("count/gpt", "openai", "gpt-4o"),
        model("count/gpt4", "openai", "gpt-4"),
        model("count/echo", "simulator", "echo"),
      ],
      organizations: [
        {
          id: ORG,
          name: "Count",
          credits: "10",
          keys: [
            { id: "key_count", env: "COUNT_KEY", rpm: 1 },
            { id: "key_limited", env: "LIMITED_KEY", allowed_models: ["count/echo"] },
          ],
        },
      ],
    }),
  );
}

beforeAll(async () => {
  [anthropic, gemini] = await Promise.all([startFakeAnthropicUpstream(), startFakeGeminiUpstream()]);
  core = await createCore({ config: config(anthropic.url, gemini.url), env: { UPSTREAM_KEY: "upstream-secret", COUNT_KEY: KEY, LIMITED_KEY: LIMITED_KEY }, now: () => NOW });
  client = createInProcessCoreClient(core);
});

afterAll(async () => {
  await core?.close();
  await Promise.all([anthropic?.close(), gemini?.close()]);
});

type RequestInit = MessageInitShape<typeof GenerateRequestSchema>;

const text = (role: Role, value: string): Message =>
  ({ role, content: [{ part: { case: "text", value: { text: value } } }] }) as Message;
const user = (value: string) => text(Role.USER, value);

const WEATHER_TOOL = {
  name: "get_weather",
  description: "The weather in a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

function count(fields: RequestInit, apiKey = KEY, through = client) {
  const request = create(GenerateRequestSchema, { caller: { apiKey }, ...FORMAT_FIELDS.messages, ...fields } as RequestInit);
  return through.inference.countTokens(create(CountTokensRequestSchema, { request }));
}

async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ConnectError)) throw new Error(`expected a ConnectError, got ${String(error)}`);
  return { code: error.code, reason: errorDetailOf(error)?.reason };
}

describe("exact counts from the provider", () => {
  it("asks Anthropic's count_tokens with the Messages body less what only generation reads, and its betas", async () => {
    const sent = anthropic.requests.length;
    const answer = await count({
      model: "count/claude",
      messages: [text(Role.SYSTEM, "Be brief."), user("What is the weather in Paris?")],
      tools: [WEATHER_TOOL],
      toolChoice: { mode: ToolChoice_Mode.AUTO },
      sampling: { temperature: 0.5, maxTokens: 300, stop: ["END"] },
      passthrough: { user: "user-1" },
      providerOptions: { anthropic: { betas: ["token-efficient-tools-2025-02-19", "interleaved-thinking-2025-05-14"] } },
    });
    const requests = anthropic.requests.slice(sent);
    expect(requests.map((r) => r.path)).toEqual(["/v1/messages/count_tokens"]);
    const [{ headers, body }] = requests;
    expect(headers).toMatchObject({ "x-api-key": "upstream-secret", "anthropic-version": "2023-06-01", "anthropic-beta": "token-efficient-tools-2025-02-19,interleaved-thinking-2025-05-14" });
    expect(Object.keys(body).sort()).toEqual(["messages", "model", "system", "tool_choice", "tools"]);
    expect(body).toMatchObject({ model: "claude-count", system: [{ type: "text", text: "Be brief." }], tool_choice: { type: "auto" } });
    expect(answer).toMatchObject({ inputTokens: FAKE_COUNTS.anthropic(body), exact: true, modelId: "count/claude", provider: "anthropic" });
  });

  it("sends Anthropic the thinking the route would think with, and no anthropic-beta when the caller sent none", async () => {
    const sent = anthropic.requests.length;
    await count({ model: "count/claude", messages: [user("Think first.")], reasoning: { maxTokens: 2048 } });
    const [{ headers, body }] = anthropic.requests.slice(sent);
    expect(headers["anthropic-beta"]).toBeUndefined();
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
  });

  it("asks Gemini's countTokens with the prompt of the generateContent body as generateContentRequest", async () => {
    const sent = gemini.requests.length;
    const answer = await count({
      model: "count/gemini",
      messages: [text(Role.SYSTEM, "Be brief."), user("What is the weather in Paris?")],
      tools: [WEATHER_TOOL],
      sampling: { temperature: 0.5, maxTokens: 300 },
    });
    const [{ path, headers, body }] = gemini.requests.slice(sent);
    expect(path).toBe("/v1beta/models/gemini-count:countTokens");
    expect(headers["x-goog-api-key"]).toBe("upstream-secret");
    const inner = body.generateContentRequest;
    expect(Object.keys(body)).toEqual(["generateContentRequest"]);
    // Sampling adds no input tokens: generationConfig stays out.
    expect(Object.keys(inner).sort()).toEqual(["contents", "model", "systemInstruction", "tools"]);
    expect(inner.model).toBe("models/gemini-count");
    expect(answer).toMatchObject({ inputTokens: FAKE_COUNTS.gemini(inner), exact: true, modelId: "count/gemini", provider: "gemini" });
  });

  it("answers the same over Connect, from a core in another process's place", async () => {
    const server = await createCoreServer(core, { host: "127.0.0.1", port: 0 });
    try {
      const fields = { model: "count/claude", messages: [user("Hello over the wire")] };
      expect(await count(fields, KEY, createRemoteCoreClient(server.url))).toEqual(await count(fields));
    } finally {
      await server.close();
    }
  });

  it("counts a longer prompt as more tokens", async () => {
    const short = await count({ model: "count/claude", messages: [user("Hi")] });
    const long = await count({ model: "count/claude", messages: [user("Hi ".repeat(200))] });
    expect(long.inputTokens).toBeGreaterThan(short.inputTokens);
  });
});

describe("upstream failures", () => {
  it("falls back to the estimate when the counting endpoint is unavailable", async () => {
    for (const model of ["count/claude-down", "count/gemini-down"]) {
      const answer = await count({ model, messages: [user("Hello, world!")] });
      expect(answer).toMatchObject({ exact: false, modelId: model });
      expect(answer.inputTokens).toBeGreaterThan(0);
    }
  });

  it("answers a request the provider refuses (400) with the caller's 400, as Generate does", async () => {
    expect(await failure(count({ model: "count/claude-refuses", messages: [user("Hello")] }))).toEqual({ code: 3, reason: "upstream_invalid_request" });
  });
});

describe("estimates with gpt-tokenizer", () => {
  it("counts an OpenAI chat as OpenAI does: 'Hello, world!' is 4 tokens, the role 1, 3 per message and 3 to prime the reply", async () => {
    expect(await count({ model: "count/gpt", messages: [user("Hello, world!")] })).toMatchObject({ inputTokens: 11, exact: false, modelId: "count/gpt", provider: "openai" });
  });

  it("adds each image's fixed cost and counts tools and tool calls", async () => {
    const plain = await count({ model: "count/gpt", messages: [user("Hello, world!")] });
    const withImage = await count({
      model: "count/gpt",
      messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Hello, world!" } } }, { part: { case: "image", value: { url: "https://example.com/cat.png" } } }] }],
    });
    expect(withImage.inputTokens - plain.inputTokens).toBe(tokenEstimateOf("openai-compatible").media.image);
    const withTool = await count({ model: "count/gpt", messages: [user("Hello, world!")], tools: [WEATHER_TOOL] });
    expect(withTool.inputTokens).toBeGreaterThan(plain.inputTokens + 10);
    const toolRound = await count({
      model: "count/gpt",
      tools: [WEATHER_TOOL],
      messages: [
        user("Weather in Paris?"),
        { role: Role.ASSISTANT, content: [{ part: { case: "toolCall", value: { id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' } } }] },
        { role: Role.TOOL, content: [{ part: { case: "toolResult", value: { toolCallId: "call_1", content: [{ part: { case: "text", value: { text: "Sunny, 21 C" } } }] } } }] },
      ],
    });
    expect(toolRound.inputTokens).toBeGreaterThan(withTool.inputTokens);
  });

  it("counts text that looks like a special token as text", async () => {
    const answer = await count({ model: "count/gpt", messages: [user("<|endoftext|> is a special token")] });
    expect(answer.inputTokens).toBeGreaterThan(11);
  });

  it("uses the encoding the library knows for the upstream model (gpt-4: cl100k_base) and o200k_base elsewhere", async () => {
    // The two encodings split this text differently.
    const sample = "Привет, как дела? 今日はいい天気ですね。";
    const [gpt4o, gpt4, echo] = await Promise.all(["count/gpt", "count/gpt4", "count/echo"].map((model) => count({ model, messages: [user(sample)] })));
    expect(gpt4.inputTokens).not.toBe(gpt4o.inputTokens);
    expect(echo).toMatchObject({ inputTokens: gpt4o.inputTokens, exact: false, provider: "simulator" });
  });
});

describe("the route and the caller", () => {
  it("tells a missing or wrong key first, before anything about the request", async () => {
    expect(await failure(count({ model: "count/nope", messages: [user("Hi")] }, ""))).toEqual({ code: 16, reason: "missing_api_key" });
    expect(await failure(count({ model: "count/nope", messages: [user("Hi")] }, "sk-wrong"))).toEqual({ code: 16, reason: "invalid_api_key" });
  });

  it("answers 404 model_not_found for a model not in the catalogue", async () => {
    expect(await failure(count({ model: "count/nope", messages: [user("Hi")] }))).toEqual({ code: 5, reason: "model_not_found" });
  });

  it("applies the key's model allow-list", async () => {
    expect(await failure(count({ model: "count/gpt", messages: [user("Hi")] }, LIMITED_KEY))).toEqual({ code: 7, reason: "model_not_allowed" });
    expect(await count({ model: "count/echo", messages: [user("Hi")] }, LIMITED_KEY)).toMatchObject({ exact: false });
  });

  it("counts a stored conversation's history as part of the prompt, as Generate sends it", async () => {
    const stored = create(GenerateRequestSchema, {
      caller: { apiKey: LIMITED_KEY },
      ...FORMAT_FIELDS.responses,
      requestId: "resp_count_1",
      model: "count/echo",
      messages: [user("Remember the number 42.")],
      stream: true,
    });
    for await (const _ of client.inference.generate(stored));
    await core.conversations.idle();
    const { turn } = await client.conversations.getTurn({ caller: { apiKey: LIMITED_KEY }, id: "resp_count_1" });
    const next = user("Which number?");
    const continued = await count({ model: "count/echo", ...FORMAT_FIELDS.responses, conversation: { previousId: "resp_count_1" }, messages: [next] }, LIMITED_KEY);
    const spelledOut = await count({ model: "count/echo", messages: [...turn!.input, ...turn!.output, next] }, LIMITED_KEY);
    expect(continued.inputTokens).toBe(spelledOut.inputTokens);
    expect(await failure(count({ model: "count/echo", conversation: { previousId: "resp_unknown" }, messages: [next] }, LIMITED_KEY))).toEqual({ code: 3, reason: "previous_response_not_found" });
  });
});

describe("nothing admitted or charged", () => {
  it("leaves the balance, the usage log and the request window as they were", async () => {
    await core.accounts.idle();
    const balance = () => core.accounts.stores.credits.balance(ORG);
    const before = await balance();
    const usageBefore = (await core.accounts.usage.list(ORG, 100)).length;
    for (const model of ["count/claude", "count/gemini", "count/gpt", "count/echo"]) await count({ model, messages: [user("Hello")] });
    await core.accounts.idle();
    expect(await balance()).toBe(before);
    expect((await core.accounts.usage.list(ORG, 100)).length).toBe(usageBefore);
    // The key allows one request a minute: the counts took none of it.
    const generate = () => {
      const request = create(GenerateRequestSchema, { caller: { apiKey: KEY }, ...FORMAT_FIELDS.messages, model: "count/echo", messages: [user("Hi")], stream: true });
      return (async () => {
        for await (const _ of client.inference.generate(request));
      })();
    };
    await generate();
    expect(await failure(generate())).toMatchObject({ code: 8, reason: "rate_limit_exceeded" });
  });
});

describe("the fakes' counting endpoints refuse what the real ones refuse", () => {
  const post = (url: string, headers: Record<string, string>, body: unknown) =>
    fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: await r.json() }));

  it("Anthropic: a field only generation reads is an extra input", async () => {
    const headers = { "x-api-key": "k", "anthropic-version": "2023-06-01" };
    const refused = await post(`${anthropic.url}/messages/count_tokens`, headers, { model: "m", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] });
    expect(refused).toEqual({ status: 400, body: { type: "error", error: { type: "invalid_request_error", message: "max_tokens: Extra inputs are not permitted" } } });
    const counted = await post(`${anthropic.url}/messages/count_tokens`, headers, { model: "m", messages: [{ role: "user", content: "Hi" }] });
    expect(counted).toEqual({ status: 200, body: { input_tokens: FAKE_COUNTS.anthropic({ messages: [{ role: "user", content: "Hi" }] }) } });
  });

  it("Gemini: a generateContentRequest must name the model of the path", async () => {
    const headers = { "x-goog-api-key": "k" };
    const contents = [{ role: "user", parts: [{ text: "Hi" }] }];
    const refused = await post(`${gemini.url}/models/g:countTokens`, headers, { generateContentRequest: { contents } });
    expect(refused.status).toBe(400);
    const counted = await post(`${gemini.url}/models/g:countTokens`, headers, { generateContentRequest: { model: "models/g", contents } });
    expect(counted).toEqual({ status: 200, body: { totalTokens: FAKE_COUNTS.gemini({ contents }) } });
  });
});
