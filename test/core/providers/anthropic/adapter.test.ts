// The Anthropic adapter end to end against a real HTTP server speaking the Messages API.
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelProviderSchema, providerSchema } from "../../../../core/config/schema.ts";
import { createAnthropicAdapter } from "../../../../core/providers/anthropic/adapter.ts";
import { ANTHROPIC_VERSION } from "../../../../core/providers/anthropic/endpoint.ts";
import { createHttpClient, type HttpClient } from "../../../../core/providers/http-client.ts";
import { UpstreamError, type ProviderAdapter, type UpstreamCall } from "../../../../core/providers/types.ts";
import { viewOf, type EventView } from "../../../support/event-view.ts";
import { BlockType, GenerateRequestSchema, Role, ToolChoice_Mode } from "../../../../gen/router/v1/inference_pb.js";
import { startFakeAnthropicUpstream } from "../../../support/fake-anthropic-upstream.ts";
import type { FakeUpstream } from "../../../support/fake-openai-upstream.ts";

let upstream: FakeUpstream;
let http: HttpClient;
let adapter: ProviderAdapter;

beforeAll(async () => {
  upstream = await startFakeAnthropicUpstream();
  http = createHttpClient();
  adapter = createAnthropicAdapter(http);
});
afterAll(async () => {
  await http.close();
  await upstream.close();
});

function call(model: string, stream: boolean, apiKey = "anthropic-secret"): UpstreamCall {
  return {
    request: create(GenerateRequestSchema, { messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Hi" } } }] }] }),
    provider: providerSchema.parse({ id: "anthropic", label: "Anthropic", protocol: "anthropic", base_url: upstream.url, timeout_ms: 5000 }),
    route: modelProviderSchema.parse({ provider: "anthropic", provider_model_id: model, pricing: { prompt: "0", completion: "0" } }),
    apiKey,
    stream,
    maxCompletionTokens: 1024,
    signal: new AbortController().signal,
  };
}

async function collect(upstreamCall: UpstreamCall): Promise<EventView[]> {
  const events: EventView[] = [];
  for await (const event of adapter.stream(upstreamCall)) events.push(viewOf(event));
  return events;
}

async function failure(upstreamCall: UpstreamCall): Promise<UpstreamError> {
  const error = await collect(upstreamCall).then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

describe.each([false, true])("Anthropic adapter (stream: %s)", (stream) => {
  it("posts to /v1/messages with the key and API version, and yields the same answer either way", async () => {
    const events = await collect(call("claude-test", stream));
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe("/v1/messages");
    expect(sent.headers["x-api-key"]).toBe("anthropic-secret");
    expect(sent.headers["anthropic-version"]).toBe(ANTHROPIC_VERSION);
    expect(sent.body.stream).toBe(stream ? true : undefined);
    const text = events.flatMap((e) => (e.type === "block_delta" ? [e.text] : [])).join("");
    expect(text).toBe("Hello from claude-test");
    expect(events.at(-2)).toEqual({ type: "usage", usage: { inputTokens: 10, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 5, reasoningTokens: 0 } });
  });

  it("sends no key header for a keyless provider (which Anthropic itself answers with a 401)", async () => {
    const error = await failure(call("claude-test", stream, ""));
    expect(upstream.requests.at(-1)!.headers).not.toHaveProperty("x-api-key");
    expect(error).toMatchObject({ status: 401, reason: "http_401" });
    expect(error.message).toContain("x-api-key header is required");
  });

  it.each([
    [529, true],
    [429, true],
    [401, true],
    [400, false],
  ])("maps HTTP %i with Anthropic's message (retryable: %s)", async (status, retryable) => {
    const error = await failure(call(`fail-${status}`, stream));
    expect(error).toMatchObject({ status, retryable, reason: `http_${status}` });
    expect(error.message).toMatch(new RegExp(`fake failure ${status} \\(\\w+\\)`));
  });
});

describe.each([false, true])("Anthropic adapter and what the Messages API refuses (stream: %s)", (stream) => {
  const tools = [{ name: "get_weather", parameters: { type: "object" } }];
  const withRequest = (request: Record<string, unknown>, model = "claude-test"): UpstreamCall => {
    const base = call(model, stream);
    return { ...base, request: create(GenerateRequestSchema, { ...request, messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Weather?" } } }] }] }) };
  };

  it.each([
    [ToolChoice_Mode.REQUIRED, ""],
    [ToolChoice_Mode.NAMED, "get_weather"],
  ])("answers a thinking request with a forced tool choice (mode %s) by calling the tool, without thinking", async (mode, name) => {
    const upstreamCall = withRequest({ tools, toolChoice: { mode, name }, sampling: { maxTokens: 4096 }, reasoning: { maxTokens: 2048 } });
    const events = await collect(upstreamCall);
    expect(upstream.requests.at(-1)!.body).not.toHaveProperty("thinking");
    expect(events.filter((e) => e.type === "block_start").map((e) => e.type === "block_start" && e.blockType)).toEqual([BlockType.TOOL_CALL]);
    expect(events.at(-1)).toMatchObject({ type: "finish", rawReason: "tool_use" });
  });

  it("answers a thinking tool loop whose assistant turn lost its thinking (a client that kept only the tool calls) without thinking", async () => {
    // The API insists that, with a thinking budget, the tool-calling turn opens with its signed thinking.
    const base = call("claude-test", stream);
    const messages = [
      { role: Role.USER, content: [{ part: { case: "text" as const, value: { text: "Weather?" } } }] },
      { role: Role.ASSISTANT, content: [{ part: { case: "toolCall" as const, value: { id: "toolu_1", name: "get_weather", arguments: "{}" } } }] },
      { role: Role.TOOL, content: [{ part: { case: "toolResult" as const, value: { toolCallId: "toolu_1", content: [{ part: { case: "text" as const, value: { text: "21C" } } }] } } }] },
    ];
    const upstreamCall = { ...base, request: create(GenerateRequestSchema, { messages, tools, sampling: { maxTokens: 4096 }, reasoning: { maxTokens: 2048 } }) };
    const events = await collect(upstreamCall);
    expect(upstream.requests.at(-1)!.body).not.toHaveProperty("thinking");
    expect(events.at(-1)).toMatchObject({ type: "finish", rawReason: "end_turn" });
    expect(adapter.stream(upstreamCall).warnings?.map((w) => w.message)).toContain(
      "reasoning was not sent: with a thinking budget Anthropic wants the tool-calling turn this tool result answers to open with its signed thinking, which the conversation did not carry",
    );
  });

  it("sends a temperature above 1 as 1, which the API accepts", async () => {
    await collect(withRequest({ sampling: { temperature: 1.8 } }));
    expect(upstream.requests.at(-1)!.body.temperature).toBe(1);
  });

  it("relays the reported thinking tokens as reasoning tokens", async () => {
    const events = await collect(call("thinking-usage", stream));
    expect(events.at(-2)).toEqual({ type: "usage", usage: { inputTokens: 10, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 5, reasoningTokens: 3 } });
  });
});

describe("a request the protocol cannot carry", () => {
  it("fails on the first read, not retryable, and nothing is sent", async () => {
    const base = call("claude-test", false);
    const messages = [
      { role: Role.USER, content: [{ part: { case: "text" as const, value: { text: "Hi" } } }] },
      { role: Role.ASSISTANT, content: [{ part: { case: "toolCall" as const, value: { id: "t", name: "w", arguments: "not json" } } }] },
    ];
    const sentBefore = upstream.requests.length;
    const events = adapter.stream({ ...base, request: create(GenerateRequestSchema, { messages }) });
    const error = await failure({ ...base, request: create(GenerateRequestSchema, { messages }) });
    expect(error).toMatchObject({ retryable: false });
    expect(events.warnings ?? []).toEqual([]);
    expect(upstream.requests.length).toBe(sentBefore);
  });
});

describe("Anthropic adapter stream failures", () => {
  it("turns an `event: error` inside the stream into a retryable stream_error", async () => {
    const error = await failure(call("overloaded", true));
    expect(error).toMatchObject({ retryable: true, reason: "stream_error" });
    expect(error.message).toBe("Overloaded (overloaded_error)");
  });

  it("fails a stream cut after its first delta as retryable", async () => {
    const error = await failure(call("cut-after-first", true));
    expect(error.retryable).toBe(true);
  });
});
