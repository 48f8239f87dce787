// Anthropic's SSE events, as the API sends them, into the hub's block events.
import { describe, expect, it } from "vitest";
import { createEventTranslator, eventSchema, messageAsEvent, messageSchema } from "../../../../core/providers/anthropic/parse-stream.ts";
import type { UpstreamEvent } from "../../../../core/providers/types.ts";
import { BlockType, FinishReason } from "../../../../gen/router/v1/inference_pb.js";

/** Data lines of a real extended-thinking + tool-use stream (ids shortened), with a server tool block to skip. */
const STREAM = [
  { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", content: [], model: "claude-sonnet-4-5", stop_reason: null, usage: { input_tokens: 472, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 2 } } },
  { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
  { type: "ping" },
  { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "The user wants " } },
  { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "the weather." } },
  { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "EqQBCgIYAh" } },
  { type: "content_block_stop", index: 0 },
  { type: "content_block_start", index: 1, content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} } },
  { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"query":"x"}' } },
  { type: "content_block_stop", index: 1 },
  { type: "content_block_start", index: 2, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 2, delta: { type: "text_delta", text: "Checking" } },
  { type: "content_block_delta", index: 2, delta: { type: "citations_delta", citation: { type: "web_search_result_location", url: "https://w.example/paris", title: "Paris weather", cited_text: "Sunny", encrypted_index: "Eo8" } } },
  { type: "content_block_stop", index: 2 },
  { type: "content_block_start", index: 3, content_block: { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} } },
  { type: "content_block_delta", index: 3, delta: { type: "input_json_delta", partial_json: "" } },
  { type: "content_block_delta", index: 3, delta: { type: "input_json_delta", partial_json: '{"city": "Pa' } },
  { type: "content_block_delta", index: 3, delta: { type: "input_json_delta", partial_json: 'ris"}' } },
  { type: "content_block_stop", index: 3 },
  { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 89 } },
  { type: "message_stop" },
];

function translateAll(events: unknown[]) {
  const translator = createEventTranslator();
  const out: UpstreamEvent[] = events.flatMap((event) => translator.translate(eventSchema.parse(event)));
  return { out, translator };
}

describe("Anthropic stream translation", () => {
  it("turns thinking, text with citations and a tool call into hub blocks, skipping server tool blocks", () => {
    const { out, translator } = translateAll(STREAM);
    expect(translator.complete()).toBe(true);
    out.push(...translator.end());
    expect(out).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.REASONING },
      { type: "block_delta", index: 0, text: "The user wants " },
      { type: "block_delta", index: 0, text: "the weather." },
      { type: "block_delta", index: 0, text: "", signature: "EqQBCgIYAh" },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, blockType: BlockType.TEXT },
      { type: "block_delta", index: 1, text: "Checking" },
      { type: "annotation", annotation: { url: "https://w.example/paris", title: "Paris weather", content: "Sunny" } },
      { type: "block_stop", index: 1 },
      { type: "block_start", index: 2, blockType: BlockType.TOOL_CALL, toolCallId: "toolu_1", toolName: "get_weather" },
      { type: "block_delta", index: 2, text: '{"city": "Pa' },
      { type: "block_delta", index: 2, text: 'ris"}' },
      { type: "block_stop", index: 2 },
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
    const message = messageSchema.parse({
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
    const translator = createEventTranslator();
    const out = [...translator.translate(messageAsEvent(message))];
    expect(translator.complete()).toBe(true);
    out.push(...translator.end());
    expect(out).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.REASONING },
      { type: "block_delta", index: 0, text: "", redactedData: "EmwKAhgBEgy3va3pzix" },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, blockType: BlockType.TEXT },
      { type: "block_delta", index: 1, text: "Hello" },
      // A document citation has no URL to relay.
      { type: "block_stop", index: 1 },
      { type: "block_start", index: 2, blockType: BlockType.TOOL_CALL, toolCallId: "toolu_2", toolName: "f" },
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
    expect(translator.end()[0]).toEqual({ type: "usage", usage: { inputTokens: 2572, cachedInputTokens: 2000, cacheWriteTokens: 100, outputTokens: 89, reasoningTokens: 61 } });

    const message = messageSchema.parse({ content: [{ type: "text", text: "Hi" }], stop_reason: "end_turn", usage: { input_tokens: 5, output_tokens: 7, output_tokens_details: { thinking_tokens: 4 } } });
    const json = createEventTranslator();
    json.translate(messageAsEvent(message));
    expect(json.end()[0]).toMatchObject({ usage: { outputTokens: 7, reasoningTokens: 4 } });
  });

  it("reports the 1-hour share of cache writes (usage.cache_creation), priced apart", () => {
    const usage = { input_tokens: 10, cache_creation_input_tokens: 300, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 100 }, output_tokens: 1 };
    const message = messageSchema.parse({ content: [{ type: "text", text: "Hi" }], stop_reason: "end_turn", usage });
    const json = createEventTranslator();
    json.translate(messageAsEvent(message));
    expect(json.end()[0]).toEqual({ type: "usage", usage: { inputTokens: 310, cachedInputTokens: 0, cacheWriteTokens: 300, cacheWrite1hTokens: 100, outputTokens: 1, reasoningTokens: 0 } });
  });

  it("keeps reasoning tokens at 0 when output_tokens_details is absent or null", () => {
    const { translator } = translateAll([STREAM[0], { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 9, output_tokens_details: null } }, { type: "message_stop" }]);
    expect(translator.end()[0]).toMatchObject({ usage: { outputTokens: 9, reasoningTokens: 0 } });
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
    expect(translator.end().at(-1)).toEqual({ type: "finish", reason, rawReason: raw });
  });
});
