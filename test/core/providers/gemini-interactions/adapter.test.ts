// The Gemini Interactions adapter end to end against a real HTTP server speaking the Interactions API.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { modelProviderSchema, providerSchema, type ModelProviderConfig } from "../../../../core/config/schema.ts";
import { createGeminiInteractionsAdapter } from "../../../../core/providers/gemini-interactions/adapter.ts";
import { createHttpClient, type HttpClient } from "../../../../core/providers/http-client.ts";
import { UpstreamError, type ProviderAdapter, type UpstreamCall } from "../../../../core/providers/types.ts";
import { BlockType, FinishReason, GenerateRequestSchema, Modality, ResponseFormat_Type, Role } from "../../../../gen/router/v1/inference_pb.js";
import { viewOf, type EventView } from "../../../support/event-view.ts";
import { FAKE_AUDIO_PARTS, FAKE_CALL_IDS, FAKE_IMAGE, FAKE_SIGNATURE, FAKE_THOUGHT, startFakeGeminiInteractionsUpstream } from "../../../support/fake-gemini-interactions-upstream.ts";
import type { FakeGeminiInteractionsUpstream } from "../../../support/fake-gemini-interactions-upstream.ts";

let upstream: FakeGeminiInteractionsUpstream;
let http: HttpClient;
let adapter: ProviderAdapter;

beforeAll(async () => {
  upstream = await startFakeGeminiInteractionsUpstream();
  http = createHttpClient();
  adapter = createGeminiInteractionsAdapter(http);
});
afterAll(async () => {
  await http.close();
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});

const hi = { role: Role.USER, content: [{ part: { case: "text" as const, value: { text: "Hi" } } }] };
const LEVELS = { minimal: "minimal", low: "low", medium: "medium", high: "high" };

interface CallOptions {
  stream?: boolean;
  apiKey?: string;
  signal?: AbortSignal;
  request?: MessageInitShape<typeof GenerateRequestSchema>;
  route?: Partial<ModelProviderConfig>;
}

function call(model: string, options: CallOptions = {}): UpstreamCall {
  return {
    request: create(GenerateRequestSchema, { messages: [hi], ...options.request }),
    provider: providerSchema.parse({ id: "google", label: "Google", protocol: "gemini-interactions", base_url: upstream.url, timeout_ms: 5000 }),
    route: modelProviderSchema.parse({ provider: "google", provider_model_id: model, pricing: { prompt: "0", completion: "0" }, ...options.route }),
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

/** The start, deltas and stop of one block. */
const blockEvents = (events: EventView[], index: number) => events.filter((event) => "index" in event && event.index === index);

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
    inputByModality: [{ modality: Modality.TEXT, tokens: 10 }],
  },
});

describe.each([false, true])("the caller streams: %s", (stream) => {
  it("posts a streamed, unstored interaction with the key header, and relays the answer", async () => {
    const events = await collect(call("gemini-test", { stream }));
    const [request] = upstream.requests;
    expect(request.path).toBe("/v1beta/interactions");
    expect(request.headers["x-goog-api-key"]).toBe("gemini-secret");
    expect(request.headers.authorization).toBeUndefined();
    // Always a stream upstream: one parser, whatever the caller reads.
    expect(request.headers.accept).toBe("text/event-stream");
    expect(request.body).toEqual({ model: "gemini-test", input: [{ type: "user_input", content: [{ type: "text", text: "Hi" }] }], stream: true, store: false });

    expect(events[0]).toEqual({ type: "block_start", index: 0, blockType: BlockType.TEXT });
    expect(textOf(events, 0)).toBe("Hello from gemini-test");
    expect(events.filter((event) => event.type === "block_delta")).toHaveLength(3);
    expect(events.slice(-3)).toEqual([{ type: "block_stop", index: 0 }, fakeUsage(0), { type: "finish", reason: FinishReason.STOP, rawReason: "completed" }]);
  });

  it("thoughts come as reasoning with their signature, at the route's thinking level", async () => {
    const upstreamCall = call("gemini-3-flash-preview", { stream, request: { reasoning: { effort: "high" } }, route: { reasoning_effort_map: LEVELS } });
    const events = await collect(upstreamCall);
    expect(upstream.requests[0].body.generation_config).toEqual({ thinking_level: "high", thinking_summaries: "auto" });
    expect(events.slice(0, 5)).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.REASONING },
      { type: "block_delta", index: 0, text: FAKE_THOUGHT },
      { type: "block_delta", index: 0, text: "", signature: FAKE_SIGNATURE },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, blockType: BlockType.TEXT },
    ]);
    expect(textOf(events, 1)).toBe("Hello from gemini-3-flash-preview");
    expect(events.at(-2)).toEqual(fakeUsage(3));
  });

  it("a function call, and the next turn sends the thought, the call and its result back", async () => {
    const tools = [{ name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }];
    const request = { tools, reasoning: { effort: "low" } };
    const events = await collect(call("gemini-3-flash-preview", { stream, request, route: { reasoning_effort_map: LEVELS } }));
    expect(upstream.requests[0].body.tools).toEqual([{ type: "function", name: "get_weather", parameters: tools[0].parameters }]);
    expect(events.filter((event) => event.type !== "block_delta" || event.index !== 0)).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.REASONING },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, blockType: BlockType.TOOL_CALL, id: FAKE_CALL_IDS[0], toolCallId: FAKE_CALL_IDS[0], toolName: "get_weather" },
      { type: "block_delta", index: 1, text: '{"cit' },
      { type: "block_delta", index: 1, text: 'y":"Paris"}' },
      { type: "block_stop", index: 1 },
      fakeUsage(3),
      { type: "finish", reason: FinishReason.TOOL_CALLS, rawReason: "requires_action" },
    ]);

    const next = await collect(
      call("gemini-3-flash-preview", {
        stream,
        request: {
          tools,
          messages: [
            hi,
            {
              role: Role.ASSISTANT,
              content: [
                { part: { case: "reasoning", value: { text: FAKE_THOUGHT, signature: FAKE_SIGNATURE, signedBy: "gemini-interactions" } } },
                { part: { case: "toolCall", value: { id: FAKE_CALL_IDS[0], name: "get_weather", arguments: '{"city":"Paris"}' } } },
              ],
            },
            { role: Role.TOOL, content: [{ part: { case: "toolResult", value: { toolCallId: FAKE_CALL_IDS[0], content: [{ part: { case: "text", value: { text: "sunny" } } }] } } }] },
          ],
        },
      }),
    );
    expect(upstream.requests[1].body.input).toEqual([
      { type: "user_input", content: [{ type: "text", text: "Hi" }] },
      { type: "thought", signature: FAKE_SIGNATURE, summary: [{ type: "text", text: FAKE_THOUGHT }] },
      { type: "function_call", id: FAKE_CALL_IDS[0], name: "get_weather", arguments: { city: "Paris" } },
      { type: "function_result", call_id: FAKE_CALL_IDS[0], name: "get_weather", result: "sunny" },
    ]);
    expect(textOf(next, 0)).toBe("Hello from gemini-3-flash-preview");
  });

  it("json_schema answers JSON", async () => {
    const events = await collect(call("gemini-test", { stream, request: { responseFormat: { type: ResponseFormat_Type.JSON_SCHEMA, name: "a", schema: { type: "object" } } } }));
    expect(upstream.requests[0].body.response_format).toEqual({ type: "text", mime_type: "application/json", schema: { type: "object" } });
    expect(textOf(events, 0)).toBe('{"answer":"Hello"}');
  });

  it("an image model's aspect ratio asks for an image beside the text, which comes as an image block with its bytes", async () => {
    const events = await collect(call("gemini-3-pro-image", { stream, request: { media: { aspectRatio: "16:9" } } }));
    expect(upstream.requests[0].body.response_format).toEqual([{ type: "text" }, { type: "image", aspect_ratio: "16:9", delivery: "inline" }]);
    expect(blockEvents(events, 1)).toEqual([
      { type: "block_start", index: 1, blockType: BlockType.IMAGE, mimeType: "image/png" },
      { type: "block_delta", index: 1, text: "", data: Buffer.from(FAKE_IMAGE, "base64") },
      { type: "block_stop", index: 1 },
    ]);
  });

  it("a music model's streamed audio is one audio block of all its pieces", async () => {
    const events = await collect(call("lyria-3.5", { stream, request: { media: { audioPrompt: "calm piano", durationSeconds: 30 } } }));
    expect(upstream.requests[0].body.input.at(-1)).toEqual({ type: "user_input", content: [{ type: "text", text: "Hi" }, { type: "text", text: "calm piano Length: 30 seconds." }] });
    const audio = blockEvents(events, 1);
    expect(audio[0]).toEqual({ type: "block_start", index: 1, blockType: BlockType.AUDIO, mimeType: "audio/mpeg" });
    expect(audio.slice(1, -1)).toEqual(FAKE_AUDIO_PARTS.map((part) => ({ type: "block_delta", index: 1, text: "", data: Buffer.from(part, "base64") })));
    expect(audio.at(-1)).toEqual({ type: "block_stop", index: 1 });
  });

  it.each([
    ["fail-429", 429, true, "fake failure 429 (RESOURCE_EXHAUSTED)"],
    ["fail-503", 503, true, "fake failure 503 (UNAVAILABLE)"],
    ["fail-400", 400, false, "fake failure 400 (INVALID_ARGUMENT)"],
  ])("%s fails with Google's message", async (model, status, retryable, message) => {
    expect(await failure(call(model, { stream }))).toMatchObject({ status, retryable, reason: `http_${status}`, message });
  });
});

describe("a stream that fails", () => {
  it("an error event is a retryable failure with its message", async () => {
    expect(await failure(call("stream-error"))).toMatchObject({ retryable: true, reason: "stream_error", message: "fake failure in the stream (RESOURCE_EXHAUSTED)" });
  });

  it("a destroyed connection is a retryable failure", async () => {
    expect((await failure(call("cut-after-first"))).retryable).toBe(true);
  });

  it("a clean end without interaction.completed is truncated", async () => {
    expect(await failure(call("end-early"))).toMatchObject({ retryable: true, reason: "truncated" });
  });

  it("the caller's abort reaches the upstream", async () => {
    const controller = new AbortController();
    const aborted = upstream.nextAbort();
    const iterator = adapter.stream(call("hang", { stream: true, signal: controller.signal }))[Symbol.asyncIterator]();
    expect(viewOf((await iterator.next()).value!)).toEqual({ type: "block_start", index: 0, blockType: BlockType.TEXT });
    controller.abort();
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

it("a Gemini 3 call from another model goes back behind Google's stand-in signature, which the API takes", async () => {
  const messages = [
    hi,
    { role: Role.ASSISTANT, content: [{ part: { case: "toolCall" as const, value: { id: "toolu_1", name: "get_weather", arguments: '{"city":"Paris"}' } } }] },
    { role: Role.TOOL, content: [{ part: { case: "toolResult" as const, value: { toolCallId: "toolu_1", content: [{ part: { case: "text" as const, value: { text: "sunny" } } }] } } }] },
  ];
  const events = await collect(call("gemini-3-flash-preview", { request: { messages, tools: [{ name: "get_weather" }] } }));
  expect(upstream.requests[0].body.input[1]).toEqual({ type: "thought", signature: "skip_thought_signature_validator" });
  expect(events.at(-1)).toMatchObject({ type: "finish", reason: FinishReason.STOP });
});

it("provider options reach the body as given", async () => {
  const options = { safety_settings: [{ type: "harassment", threshold: "block_none" }], service_tier: "flex", environment: "env_123" };
  await collect(call("gemini-test", { request: { providerOptions: { "gemini-interactions": options } } }));
  expect(upstream.requests[0].body).toMatchObject(options);
});

describe("conversations the upstream keeps", () => {
  const stored = { store: true, messages: [hi] };
  const finishOf = (events: EventView[]) => events.at(-1);
  const followUp = { role: Role.USER, content: [{ part: { case: "text" as const, value: { text: "And then?" } } }] };
  const answer = { role: Role.ASSISTANT, content: [{ part: { case: "text" as const, value: { text: "Hello from gemini-test" } } }] };
  const system = { role: Role.SYSTEM, content: [{ part: { case: "text" as const, value: { text: "Be brief." } } }] };
  const continuing = (upstreamId: string) => ({
    store: true,
    messages: [system, hi, answer, followUp],
    conversation: { previousId: "gen-1", upstream: { provider: "google", upstreamId, historyMessages: 2 } },
  });

  it("a kept answer is stored upstream and its interaction id is the finish's upstream id; a format's default keeps too", async () => {
    const events = await collect(call("gemini-test", { request: stored }));
    expect(upstream.requests[0].body.store).toBe(true);
    expect(finishOf(events)).toMatchObject({ type: "finish", upstreamId: expect.stringMatching(/^v1_fake-stored-\d+$/) });
    await collect(call("gemini-test", { request: { messages: [hi], formatPolicy: { storeByDefault: true } } }));
    expect(upstream.requests[1].body.store).toBe(true);
  });

  it("an answer not kept is stored nowhere and has no upstream id", async () => {
    const events = await collect(call("gemini-test", { request: { store: false, messages: [hi], formatPolicy: { storeByDefault: true } } }));
    expect(upstream.requests[0].body.store).toBe(false);
    expect(finishOf(events)).toEqual({ type: "finish", reason: FinishReason.STOP, rawReason: "completed" });
  });

  it("a continuation names the kept interaction and sends the instruction and its own messages only", async () => {
    const first = finishOf(await collect(call("gemini-test", { request: stored }))) as { upstreamId: string };
    const events = await collect(call("gemini-test", { request: continuing(first.upstreamId) }));
    const body = upstream.requests[1].body;
    expect(body.previous_interaction_id).toBe(first.upstreamId);
    expect(body.system_instruction).toBe("Be brief.");
    expect(body.input).toEqual([{ type: "user_input", content: [{ type: "text", text: "And then?" }] }]);
    expect(textOf(events, 0)).toBe("Hello from gemini-test");
  });

  it("a tool result answering a call of the kept history is named after that call", async () => {
    const withCall = { role: Role.ASSISTANT, content: [{ part: { case: "toolCall" as const, value: { id: "fc_1", name: "get_weather", arguments: "{}" } } }] };
    const result = { role: Role.TOOL, content: [{ part: { case: "toolResult" as const, value: { toolCallId: "fc_1", content: [{ part: { case: "text" as const, value: { text: "sunny" } } }] } } }] };
    const request = create(GenerateRequestSchema, { messages: [hi, withCall, result], conversation: { previousId: "gen-1", upstream: { provider: "google", upstreamId: "v1_x", historyMessages: 2 } } });
    const { convertRequest } = await import("../../../../core/providers/gemini-interactions/convert-request.ts");
    expect(convertRequest({ ...call("gemini-test"), request }).body.input).toEqual([{ type: "function_result", call_id: "fc_1", name: "get_weather", result: "sunny" }]);
  });

  it("an interaction the upstream no longer has is continued with the whole history, once", async () => {
    const events = await collect(call("gemini-test", { request: continuing("v1_gone") }));
    expect(upstream.requests.map((request) => request.body.previous_interaction_id)).toEqual(["v1_gone", undefined]);
    expect(upstream.requests[1].body.input).toHaveLength(3);
    expect(textOf(events, 0)).toBe("Hello from gemini-test");
  });

  it("forgetStored deletes the interaction upstream; one already gone is forgotten too", async () => {
    const first = finishOf(await collect(call("gemini-test", { request: stored }))) as { upstreamId: string };
    const target = call("gemini-test");
    await adapter.forgetStored!(target, first.upstreamId);
    expect(upstream.requests.at(-1)).toMatchObject({ method: "DELETE", path: `/v1beta/interactions/${first.upstreamId}` });
    expect(upstream.requests.at(-1)!.headers["x-goog-api-key"]).toBe("gemini-secret");
    expect(upstream.stored.get("gemini-secret")?.has(first.upstreamId)).toBe(false);
    // Gone already (a 404): nothing left to forget.
    await expect(adapter.forgetStored!(target, first.upstreamId)).resolves.toBeUndefined();
  });
});
