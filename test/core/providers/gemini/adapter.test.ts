// The Gemini adapter end to end against a real HTTP server speaking the Gemini API.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { modelProviderSchema, providerSchema } from "../../../../core/config/schema.ts";
import { createGeminiAdapter } from "../../../../core/providers/gemini/adapter.ts";
import { createHttpClient, type HttpClient } from "../../../../core/providers/http-client.ts";
import { UpstreamError, type ProviderAdapter, type UpstreamCall } from "../../../../core/providers/types.ts";
import { viewOf, type EventView } from "../../../support/event-view.ts";
import { BlockType, FinishReason, GenerateRequestSchema, Modality, ResponseFormat_Type, Role } from "../../../../gen/router/v1/inference_pb.js";
import { FAKE_SIGNATURE, FAKE_THOUGHT, startFakeGeminiUpstream } from "../../../support/fake-gemini-upstream.ts";
import type { FakeUpstream } from "../../../support/fake-openai-upstream.ts";

let upstream: FakeUpstream;
let http: HttpClient;
let adapter: ProviderAdapter;

beforeAll(async () => {
  upstream = await startFakeGeminiUpstream();
  http = createHttpClient();
  adapter = createGeminiAdapter(http);
});
afterAll(async () => {
  await http.close();
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});

const hi = { role: Role.USER, content: [{ part: { case: "text" as const, value: { text: "Hi" } } }] };

function call(model: string, options: { stream?: boolean; apiKey?: string; signal?: AbortSignal; request?: MessageInitShape<typeof GenerateRequestSchema> } = {}): UpstreamCall {
  return {
    request: create(GenerateRequestSchema, { messages: [hi], ...options.request }),
    provider: providerSchema.parse({ id: "google", label: "Google", protocol: "gemini", base_url: upstream.url, timeout_ms: 5000 }),
    route: modelProviderSchema.parse({ provider: "google", provider_model_id: model, pricing: { prompt: "0", completion: "0" } }),
    apiKey: options.apiKey ?? "gemini-secret",
    stream: options.stream ?? false,
    maxCompletionTokens: 8192,
    signal: options.signal ?? new AbortController().signal,
  };
}

async function collect(upstreamCall: UpstreamCall): Promise<EventView[]> {
  const events: EventView[] = [];
  for await (const event of adapter.stream(upstreamCall)) events.push(viewOf(event));
  return events;
}

async function failure(upstreamCall: UpstreamCall): Promise<UpstreamError> {
  const error = await collect(upstreamCall).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

const textOf = (events: EventView[], index: number) =>
  events.flatMap((event) => (event.type === "block_delta" && event.index === index ? [event.text] : [])).join("");

const fakeUsage = (thoughts: number) => ({
  type: "usage",
  usage: {
    inputTokens: 10,
    cachedInputTokens: 2,
    cacheWriteTokens: 0,
    outputTokens: 5 + thoughts,
    reasoningTokens: thoughts,
    // The fake reports its prompt's tokens by modality, as Gemini does.
    inputByModality: [{ modality: Modality.TEXT, tokens: 10 }],
  },
});

describe.each([false, true])("stream: %s", (stream) => {
  it("posts to the model's method with the key header and relays the answer", async () => {
    const events = await collect(call("gemini-test", { stream }));
    const [request] = upstream.requests;
    expect(request.path).toBe(stream ? "/v1beta/models/gemini-test:streamGenerateContent?alt=sse" : "/v1beta/models/gemini-test:generateContent");
    expect(request.headers["x-goog-api-key"]).toBe("gemini-secret");
    expect(request.headers.authorization).toBeUndefined();
    expect(request.headers.accept).toBe(stream ? "text/event-stream" : "application/json");
    expect(request.body).toEqual({ contents: [{ role: "user", parts: [{ text: "Hi" }] }] });

    expect(events[0]).toEqual({ type: "block_start", index: 0, blockType: BlockType.TEXT });
    expect(textOf(events, 0)).toBe("Hello from gemini-test");
    expect(events.filter((event) => event.type === "block_delta")).toHaveLength(stream ? 3 : 1);
    expect(events.slice(-3)).toEqual([{ type: "block_stop", index: 0 }, fakeUsage(0), { type: "finish", reason: FinishReason.STOP, rawReason: "STOP" }]);
  });

  it("thoughts come as reasoning, with the answer's signature", async () => {
    const events = await collect(call("gemini-test", { stream, request: { reasoning: { maxTokens: 1024, enabled: true } } }));
    expect(upstream.requests[0].body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } });
    expect(events.slice(0, 5)).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.REASONING },
      { type: "block_delta", index: 0, text: FAKE_THOUGHT },
      { type: "block_delta", index: 0, text: "", signature: FAKE_SIGNATURE },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, blockType: BlockType.TEXT },
    ]);
    expect(textOf(events, 1)).toBe("Hello from gemini-test");
    expect(events.at(-2)).toEqual(fakeUsage(3));
  });

  it("a tool call, and the next turn sends the call back with its signature", async () => {
    const tools = [{ name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }];
    const events = await collect(call("gemini-test", { stream, request: { tools, reasoning: { maxTokens: 1024, enabled: true } } }));
    expect(events.filter((event) => event.type !== "block_delta" || event.index !== 0)).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.REASONING },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, blockType: BlockType.TOOL_CALL, id: expect.stringMatching(/^call_[0-9a-f]{12}_1$/), toolCallId: expect.stringMatching(/^call_[0-9a-f]{12}_1$/), toolName: "get_weather" },
      { type: "block_delta", index: 1, text: '{"city":"Paris"}' },
      { type: "block_stop", index: 1 },
      fakeUsage(3),
      { type: "finish", reason: FinishReason.TOOL_CALLS, rawReason: "STOP" },
    ]);

    const next = await collect(
      call("gemini-test", {
        stream,
        request: {
          tools,
          messages: [
            hi,
            {
              role: Role.ASSISTANT,
              content: [
                { part: { case: "reasoning", value: { text: FAKE_THOUGHT, signature: FAKE_SIGNATURE } } },
                { part: { case: "toolCall", value: { id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' } } },
              ],
            },
            { role: Role.TOOL, content: [{ part: { case: "toolResult", value: { toolCallId: "call_1", content: [{ part: { case: "text", value: { text: "sunny" } } }] } } }] },
          ],
        },
      }),
    );
    expect(upstream.requests[1].body.contents).toEqual([
      { role: "user", parts: [{ text: "Hi" }] },
      { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: FAKE_SIGNATURE }] },
      { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { output: "sunny" } } }] },
    ]);
    expect(textOf(next, 0)).toBe("Hello from gemini-test");
  });

  it("json_schema answers JSON", async () => {
    const events = await collect(
      call("gemini-test", { stream, request: { responseFormat: { type: ResponseFormat_Type.JSON_SCHEMA, name: "a", schema: { type: "object" } } } }),
    );
    expect(textOf(events, 0)).toBe('{"answer":"Hello"}');
  });

  it.each([
    ["fail-429", 429, true, "fake failure 429 (RESOURCE_EXHAUSTED)"],
    ["fail-503", 503, true, "fake failure 503 (UNAVAILABLE)"],
    ["fail-400", 400, false, "fake failure 400 (INVALID_ARGUMENT)"],
  ])("%s fails with Google's message", async (model, status, retryable, message) => {
    expect(await failure(call(model, { stream }))).toMatchObject({ status, retryable, reason: `http_${status}`, message });
  });
});

describe("a cut stream", () => {
  it("a destroyed connection is a retryable failure", async () => {
    const error = await failure(call("cut-after-first", { stream: true }));
    expect(error.retryable).toBe(true);
  });

  it("a clean end without finishReason is truncated", async () => {
    expect(await failure(call("end-early", { stream: true }))).toMatchObject({ retryable: true, reason: "truncated" });
  });

  it("the caller's abort reaches the upstream", async () => {
    const controller = new AbortController();
    const aborted = upstream.nextAbort();
    const iterator = adapter.stream(call("hang", { stream: true, signal: controller.signal }))[Symbol.asyncIterator]();
    expect(viewOf((await iterator.next()).value!)).toEqual({ type: "block_start", index: 0, blockType: BlockType.TEXT });
    controller.abort();
    // The first chunk's events are already translated; the read after them fails.
    const drain = async () => {
      while (!(await iterator.next()).done);
    };
    await expect(drain()).rejects.toThrow();
    await aborted;
  });
});

it("sends no key header to a keyless server (which Google itself answers with a 403)", async () => {
  const error = await failure(call("gemini-test", { apiKey: "" }));
  expect(upstream.requests[0].headers["x-goog-api-key"]).toBeUndefined();
  expect(error).toMatchObject({ status: 403 });
  expect(error.message).toContain("Method doesn't allow unregistered callers");
});

describe("thinking budgets the model takes", () => {
  it("caps a budget above a 2.5 Flash model's maximum (24576), which Google refuses, and says so", async () => {
    // Routing sizes budgets up to 32000 (Anthropic's and 2.5 Pro's range); Flash stops at 24576.
    const upstreamCall = call("gemini-2.5-flash", { request: { reasoning: { maxTokens: 32000 } } });
    await collect(upstreamCall);
    expect(upstream.requests[0].body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 24576, includeThoughts: true });
    expect(adapter.stream(upstreamCall).warnings?.map((w) => w.message)).toContain("a thinking budget of 32000 tokens is above gemini-2.5-flash's maximum; 24576 was sent");
  });

  it("raises a budget below a 2.5 Pro model's minimum (128) to it", async () => {
    const upstreamCall = call("gemini-2.5-pro", { request: { reasoning: { maxTokens: 100 } } });
    await collect(upstreamCall);
    expect(upstream.requests[0].body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 128, includeThoughts: true });
    expect(adapter.stream(upstreamCall).warnings?.map((w) => w.message)).toContain("a thinking budget of 100 tokens is below gemini-2.5-pro's minimum; 128 was sent");
  });
});

it("sends the caller's safety settings, which the API takes", async () => {
  const safety = [{ category: "HARM_CATEGORY_DANGEROUS_CONTENT", threshold: "BLOCK_LOW_AND_ABOVE" }];
  const events = await collect(call("gemini-test", { request: { providerOptions: { gemini: { safety_settings: safety } } } }));
  expect(upstream.requests[0].body.safetySettings).toEqual(safety);
  expect(events.at(-1)).toMatchObject({ type: "finish", reason: FinishReason.STOP });
});
