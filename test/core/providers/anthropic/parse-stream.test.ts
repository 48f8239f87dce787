// Anthropic's SSE events, as the API sends them, into the hub's block events.
// Every fixture's events are also checked against the block lifecycle
// (test/support/block-lifecycle.ts): one block open at a time, each closed once.
import { describe, expect, it } from "vitest";
import { createEventTranslator, eventSchema, messageAsEvent, messageSchema } from "../../../../core/providers/anthropic/parse-stream.ts";
import { blockTrace, viewOf, viewsOf, type EventView } from "../../../support/event-view.ts";
import { BlockType, FinishReason } from "../../../../gen/router/v1/inference_pb.js";
import { expectWellFormedBlocks } from "../../../support/block-lifecycle.ts";
import { recordedEvents } from "../../../support/upstream-recording.ts";

/** An Anthropic stream event as recorded (message_start carries the message and its usage). */
type RecordedEvent = { type: string; message?: { usage: Record<string, unknown> } & Record<string, unknown> } & Record<string, unknown>;

/** A search result the recorded stream below carries (its results block, relayed as JSON text). */
const SEARCH_RESULT = { type: "web_search_result", url: "https://w.example/paris", title: "Paris weather", encrypted_content: "EqgfCioIARgB", page_age: null };

/** The data lines of a recorded extended-thinking + tool-use stream (ids shortened), with a server tool block to skip. */
const STREAM = recordedEvents("anthropic/thinking-web-search-citation-tool-use.sse") as RecordedEvent[];

/** The translated events so far (end() not called), checked against the block lifecycle with the end they would get. */
function translateAll(events: unknown[]) {
  const translator = createEventTranslator();
  const out: EventView[] = viewsOf(events.flatMap((event) => translator.translate(eventSchema.parse(event))));
  expectLifecycle(translator, out);
  return { out, translator };
}

/** A whole JSON message, replayed, checked the same way. */
function translateMessage(message: unknown) {
  const translator = createEventTranslator();
  const out = viewsOf(translator.translate(messageAsEvent(messageSchema.parse(message))));
  expectLifecycle(translator, out);
  return { out, translator };
}

/** end() only reads the translator's state, so calling it here leaves the test's own call unchanged. */
function expectLifecycle(translator: ReturnType<typeof createEventTranslator>, out: EventView[]) {
  const complete = translator.complete();
  expectWellFormedBlocks(complete ? [...out, ...viewsOf(translator.end())] : out, { truncated: !complete });
}

/** A streamed text, thinking or tool_use block: start, deltas, stop. */
function streamedBlock(index: number, block: Record<string, unknown>, deltas: Record<string, unknown>[]): unknown[] {
  return [
    { type: "content_block_start", index, content_block: block },
    ...deltas.map((delta) => ({ type: "content_block_delta", index, delta })),
    { type: "content_block_stop", index },
  ];
}

const END_WITH = (stopReason: string) => [
  { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 9 } },
  { type: "message_stop" },
];

describe("Anthropic stream translation", () => {
  it("turns thinking, a web search with its results, text with citations and a tool call into hub blocks", () => {
    const { out, translator } = translateAll(STREAM);
    expect(translator.complete()).toBe(true);
    out.push(...viewsOf(translator.end()));
    expect(out).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.REASONING },
      { type: "block_delta", index: 0, text: "The user wants " },
      { type: "block_delta", index: 0, text: "the weather." },
      { type: "block_delta", index: 0, text: "", signature: "EqQBCgIYAh" },
      { type: "block_stop", index: 0 },
      // The search the provider ran itself, with its own id, then its results as JSON text.
      { type: "block_start", index: 1, blockType: BlockType.SERVER_TOOL_CALL, id: "srvtoolu_1", serverToolName: "web_search" },
      { type: "block_delta", index: 1, text: '{"query":"x"}' },
      { type: "block_stop", index: 1 },
      { type: "block_start", index: 2, blockType: BlockType.SERVER_TOOL_RESULT, serverToolName: "web_search", serverToolCallId: "srvtoolu_1" },
      { type: "block_delta", index: 2, text: JSON.stringify([SEARCH_RESULT]) },
      { type: "block_stop", index: 2 },
      { type: "block_start", index: 3, blockType: BlockType.TEXT },
      { type: "block_delta", index: 3, text: "Checking" },
      { type: "annotation", annotation: { url: "https://w.example/paris", title: "Paris weather", content: "Sunny", blockIndex: 3 } },
      { type: "block_stop", index: 3 },
      { type: "block_start", index: 4, blockType: BlockType.TOOL_CALL, id: "toolu_1", toolCallId: "toolu_1", toolName: "get_weather" },
      { type: "block_delta", index: 4, text: '{"city": "Pa' },
      { type: "block_delta", index: 4, text: 'ris"}' },
      { type: "block_stop", index: 4 },
      // Cache reads and writes are added to input_tokens; output is the running total of message_delta.
      { type: "usage", usage: { inputTokens: 2572, cachedInputTokens: 2000, cacheWriteTokens: 100, outputTokens: 89, reasoningTokens: 0 } },
      { type: "finish", reason: FinishReason.TOOL_CALLS, rawReason: "tool_use" },
    ]);
  });

  it("is incomplete without message_stop (a cut connection)", () => {
    const { translator } = translateAll(STREAM.slice(0, -2));
    expect(translator.complete()).toBe(false);
  });

  it("replays a whole JSON message, redacted thinking included, as the same events", () => {
    const { out, translator } = translateMessage({
      id: "msg_2",
      type: "message",
      role: "assistant",
      content: [
        { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix" },
        { type: "text", text: "Hello", citations: [{ type: "char_location", cited_text: "x", document_index: 0 }] },
        { type: "tool_use", id: "toolu_2", name: "f", input: { a: 1 } },
      ],
      stop_reason: "max_tokens",
      usage: { input_tokens: 5, output_tokens: 7 },
    });
    expect(translator.complete()).toBe(true);
    out.push(...viewsOf(translator.end()));
    expect(out).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.REASONING },
      { type: "block_delta", index: 0, text: "", redactedData: "EmwKAhgBEgy3va3pzix" },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, blockType: BlockType.TEXT },
      { type: "block_delta", index: 1, text: "Hello" },
      // A document citation has no URL to relay.
      { type: "block_stop", index: 1 },
      { type: "block_start", index: 2, blockType: BlockType.TOOL_CALL, id: "toolu_2", toolCallId: "toolu_2", toolName: "f" },
      { type: "block_delta", index: 2, text: '{"a":1}' },
      { type: "block_stop", index: 2 },
      { type: "usage", usage: { inputTokens: 5, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 7, reasoningTokens: 0 } },
      { type: "finish", reason: FinishReason.LENGTH, rawReason: "max_tokens" },
    ]);
  });

  it("reports the thinking share of output as reasoning tokens (usage.output_tokens_details.thinking_tokens)", () => {
    // The current API's shape: message_start carries a first count, message_delta the running totals.
    const start = { ...STREAM[0], message: { ...STREAM[0].message, usage: { ...STREAM[0].message!.usage, output_tokens_details: { thinking_tokens: 0 } } } };
    const end = { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 89, output_tokens_details: { thinking_tokens: 61 } } };
    const { translator } = translateAll([start, end, { type: "message_stop" }]);
    expect(viewOf(translator.end()[0]!)).toEqual({ type: "usage", usage: { inputTokens: 2572, cachedInputTokens: 2000, cacheWriteTokens: 100, outputTokens: 89, reasoningTokens: 61 } });

    const { translator: json } = translateMessage({ content: [{ type: "text", text: "Hi" }], stop_reason: "end_turn", usage: { input_tokens: 5, output_tokens: 7, output_tokens_details: { thinking_tokens: 4 } } });
    expect(viewOf(json.end()[0]!)).toMatchObject({ usage: { outputTokens: 7, reasoningTokens: 4 } });
  });

  it("reports the 1-hour share of cache writes (usage.cache_creation), priced apart", () => {
    const usage = { input_tokens: 10, cache_creation_input_tokens: 300, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 100 }, output_tokens: 1 };
    const { translator: json } = translateMessage({ content: [{ type: "text", text: "Hi" }], stop_reason: "end_turn", usage });
    expect(viewOf(json.end()[0]!)).toEqual({ type: "usage", usage: { inputTokens: 310, cachedInputTokens: 0, cacheWriteTokens: 300, cacheWrite1hTokens: 100, outputTokens: 1, reasoningTokens: 0 } });
  });

  it("keeps the provider's usage object, later reports updating earlier ones", () => {
    const { translator } = translateAll([STREAM[0], { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 9, server_tool_use: { web_search_requests: 1 } } }, { type: "message_stop" }]);
    expect(viewOf(translator.end()[0]!, { withRaw: true })).toMatchObject({
      usage: { raw: { input_tokens: 472, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 9, server_tool_use: { web_search_requests: 1 } } },
    });
  });

  it("the stop sequence that ended the answer reaches Finish, streamed or whole", () => {
    const { translator } = translateAll([STREAM[0], { type: "message_delta", delta: { stop_reason: "stop_sequence", stop_sequence: "###" }, usage: { output_tokens: 1 } }, { type: "message_stop" }]);
    expect(viewOf(translator.end().at(-1)!)).toEqual({ type: "finish", reason: FinishReason.STOP, rawReason: "stop_sequence", stopSequence: "###" });
    const { translator: json } = translateMessage({ content: [{ type: "text", text: "Hi" }], stop_reason: "stop_sequence", stop_sequence: "END", usage: { input_tokens: 1, output_tokens: 1 } });
    expect(viewOf(json.end().at(-1)!)).toMatchObject({ stopSequence: "END" });
  });

  it("keeps reasoning tokens at 0 when output_tokens_details is absent or null", () => {
    const { translator } = translateAll([STREAM[0], { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 9, output_tokens_details: null } }, { type: "message_stop" }]);
    expect(viewOf(translator.end()[0]!)).toMatchObject({ usage: { outputTokens: 9, reasoningTokens: 0 } });
  });

  it.each([
    ["end_turn", FinishReason.STOP],
    ["stop_sequence", FinishReason.STOP],
    ["pause_turn", FinishReason.STOP],
    ["max_tokens", FinishReason.LENGTH],
    ["model_context_window_exceeded", FinishReason.LENGTH],
    ["tool_use", FinishReason.TOOL_CALLS],
    ["refusal", FinishReason.CONTENT_FILTER],
    ["something_new", FinishReason.STOP],
  ])("maps stop_reason %s", (raw, reason) => {
    const { translator } = translateAll([{ ...STREAM[0] }, { type: "message_delta", delta: { stop_reason: raw }, usage: { output_tokens: 1 } }, { type: "message_stop" }]);
    expect(viewOf(translator.end().at(-1)!)).toEqual({ type: "finish", reason, rawReason: raw });
  });

  it("text, then a tool call: the text block is stopped before the tool call starts", () => {
    const { out } = translateAll([
      STREAM[0],
      ...streamedBlock(0, { type: "text", text: "" }, [{ type: "text_delta", text: "Let me check." }]),
      ...streamedBlock(1, { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} }, [{ type: "input_json_delta", partial_json: '{"city":"Paris"}' }]),
      ...END_WITH("tool_use"),
    ]);
    expect(blockTrace(out)).toEqual(["start 0 TEXT", "delta 0 Let me check.", "stop 0", "start 1 TOOL_CALL get_weather", 'delta 1 {"city":"Paris"}', "stop 1"]);
  });

  it("thinking, then text, then two tool calls, each block stopped before the next", () => {
    const { out } = translateAll([
      STREAM[0],
      ...streamedBlock(0, { type: "thinking", thinking: "", signature: "" }, [
        { type: "thinking_delta", thinking: "Two cities." },
        { type: "signature_delta", signature: "EqQB" },
      ]),
      ...streamedBlock(1, { type: "text", text: "" }, [{ type: "text_delta", text: "Checking both." }]),
      ...streamedBlock(2, { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} }, [{ type: "input_json_delta", partial_json: '{"city":"Paris"}' }]),
      ...streamedBlock(3, { type: "tool_use", id: "toolu_2", name: "get_weather", input: {} }, [{ type: "input_json_delta", partial_json: '{"city":"Rome"}' }]),
      ...END_WITH("tool_use"),
    ]);
    expect(blockTrace(out)).toEqual([
      "start 0 REASONING",
      "delta 0 Two cities.",
      "delta 0  sig:EqQB",
      "stop 0",
      "start 1 TEXT",
      "delta 1 Checking both.",
      "stop 1",
      "start 2 TOOL_CALL get_weather",
      'delta 2 {"city":"Paris"}',
      "stop 2",
      "start 3 TOOL_CALL get_weather",
      'delta 3 {"city":"Rome"}',
      "stop 3",
    ]);
  });

  it("a streamed redacted thinking block carries its data in one delta", () => {
    const { out } = translateAll([STREAM[0], ...streamedBlock(0, { type: "redacted_thinking", data: "EmwK" }, []), ...streamedBlock(1, { type: "text", text: "" }, [{ type: "text_delta", text: "Hi" }]), ...END_WITH("end_turn")]);
    expect(blockTrace(out)).toEqual(["start 0 REASONING", "delta 0  redacted:EmwK", "stop 0", "start 1 TEXT", "delta 1 Hi", "stop 1"]);
  });

  it("a whole JSON message with thinking, text and a tool call replays as blocks one after another", () => {
    const { out } = translateMessage({
      content: [
        { type: "thinking", thinking: "Think.", signature: "sig" },
        { type: "text", text: "Calling." },
        { type: "tool_use", id: "toolu_3", name: "f", input: {} },
      ],
      stop_reason: "tool_use",
      usage: { input_tokens: 1, output_tokens: 1 },
    });
    expect(blockTrace(out)).toEqual(["start 0 REASONING", "delta 0 Think.", "delta 0  sig:sig", "stop 0", "start 1 TEXT", "delta 1 Calling.", "stop 1", "start 2 TOOL_CALL f", "stop 2"]);
  });
});
