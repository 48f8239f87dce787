// OpenAI-style streamed tool calls are joined by their `index`: a provider may
// start a second call and then come back to the first one's arguments. Every
// fixture's events are also checked against the block lifecycle
// (test/support/block-lifecycle.ts): here tool calls may stay open side by
// side, text and reasoning never beside anything.
import { describe, expect, it } from "vitest";
import { createChunkTranslator, type OpenAiChunk } from "../../../../core/providers/openai-compatible/parse-stream.ts";
import { blockTrace, viewOf, viewsOf, type EventView } from "../../../support/event-view.ts";
import { BlockType, Modality } from "../../../../gen/router/v1/inference_pb.js";
import { expectWellFormedBlocks } from "../../../support/block-lifecycle.ts";

const toolDelta = (index: number, fields: { id?: string; name?: string; arguments?: string }): OpenAiChunk =>
  ({
    choices: [
      {
        index: 0,
        delta: { tool_calls: [{ index, ...(fields.id && { id: fields.id, type: "function" }), function: { ...(fields.name && { name: fields.name }), arguments: fields.arguments ?? "" } }] },
      },
    ],
  }) as OpenAiChunk;

const contentDelta = (content: string): OpenAiChunk => ({ choices: [{ index: 0, delta: { content } }] }) as OpenAiChunk;
const reasoningDelta = (field: "reasoning" | "reasoning_content", text: string): OpenAiChunk =>
  ({ choices: [{ index: 0, delta: { [field]: text } }] }) as OpenAiChunk;
const finish = (reason: string): OpenAiChunk =>
  ({ choices: [{ index: 0, delta: {}, finish_reason: reason }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }) as OpenAiChunk;

/** The translated events of a whole stream, checked against the block lifecycle. */
function translate(chunks: OpenAiChunk[]): EventView[] {
  const translator = createChunkTranslator();
  const events = viewsOf([...chunks.flatMap((chunk) => translator.translate(chunk)), ...translator.end()]);
  expectWellFormedBlocks(events, { toolCallsMayOverlap: true });
  return events;
}

describe("OpenAI-compatible stream translation", () => {
  it("keeps interleaved tool calls apart, each with its id, name and whole arguments", () => {
    const events = translate([
      toolDelta(0, { id: "call_a", name: "weather" }),
      toolDelta(1, { id: "call_b", name: "time" }),
      toolDelta(0, { arguments: '{"city":' }),
      toolDelta(1, { arguments: '{"zone":"UTC"}' }),
      toolDelta(0, { arguments: '"Paris"}' }),
      finish("tool_calls"),
    ]);
    const starts = events.filter((e) => e.type === "block_start");
    expect(starts).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.TOOL_CALL, id: "call_a", toolCallId: "call_a", toolName: "weather" },
      { type: "block_start", index: 1, blockType: BlockType.TOOL_CALL, id: "call_b", toolCallId: "call_b", toolName: "time" },
    ]);
    const argumentsOf = (index: number) =>
      events.flatMap((e) => (e.type === "block_delta" && e.index === index ? [e.text] : [])).join("");
    expect(JSON.parse(argumentsOf(0))).toEqual({ city: "Paris" });
    expect(JSON.parse(argumentsOf(1))).toEqual({ zone: "UTC" });
    // Every block is stopped once, before usage and finish.
    expect(events.filter((e) => e.type === "block_stop").map((e) => (e as { index: number }).index).sort()).toEqual([0, 1]);
    expect(events.at(-1)).toMatchObject({ type: "finish", rawReason: "tool_calls" });
  });

  it("closes the tool calls when text follows them", () => {
    const events = translate([toolDelta(0, { id: "call_a", name: "weather", arguments: "{}" }), { choices: [{ index: 0, delta: { content: "Done" } }] } as OpenAiChunk]);
    expect(events.slice(0, 5).map((e) => e.type)).toEqual(["block_start", "block_delta", "block_stop", "block_start", "block_delta"]);
  });

  it("closes the text block before a tool call starts", () => {
    const events = translate([contentDelta("Let me "), contentDelta("check."), toolDelta(0, { id: "call_a", name: "weather", arguments: '{"city":"Paris"}' }), finish("tool_calls")]);
    expect(blockTrace(events)).toEqual([
      "start 0 TEXT",
      "delta 0 Let me ",
      "delta 0 check.",
      "stop 0",
      "start 1 TOOL_CALL weather",
      'delta 1 {"city":"Paris"}',
      "stop 1",
    ]);
  });

  it.each(["reasoning", "reasoning_content"] as const)("reasoning (in `%s`), then text, then two tool calls: each block closed before the next kind", (field) => {
    const events = translate([
      reasoningDelta(field, "The user wants "),
      reasoningDelta(field, "two cities."),
      contentDelta("Checking both."),
      toolDelta(0, { id: "call_a", name: "weather", arguments: '{"city":"Paris"}' }),
      toolDelta(1, { id: "call_b", name: "weather", arguments: '{"city":"Rome"}' }),
      finish("tool_calls"),
    ]);
    expect(blockTrace(events)).toEqual([
      "start 0 REASONING",
      "delta 0 The user wants ",
      "delta 0 two cities.",
      "stop 0",
      "start 1 TEXT",
      "delta 1 Checking both.",
      "stop 1",
      "start 2 TOOL_CALL weather",
      'delta 2 {"city":"Paris"}',
      "start 3 TOOL_CALL weather",
      'delta 3 {"city":"Rome"}',
      "stop 2",
      "stop 3",
    ]);
  });

  it("reasoning and text in one chunk: the reasoning block is closed before the text opens", () => {
    const events = translate([{ choices: [{ index: 0, delta: { reasoning: "Hmm.", content: "Hi" } }] } as OpenAiChunk, finish("stop")]);
    expect(blockTrace(events)).toEqual(["start 0 REASONING", "delta 0 Hmm.", "stop 0", "start 1 TEXT", "delta 1 Hi", "stop 1"]);
  });

  it("a whole JSON message with reasoning, text and a tool call reads as the same blocks", () => {
    const message = {
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            reasoning_content: "Think.",
            content: "Calling.",
            tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "weather", arguments: "{}" } }],
          },
          finish_reason: "tool_calls",
        },
      ],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    } as OpenAiChunk;
    expect(blockTrace(translate([message]))).toEqual([
      "start 0 REASONING",
      "delta 0 Think.",
      "stop 0",
      "start 1 TEXT",
      "delta 1 Calling.",
      "stop 1",
      "start 2 TOOL_CALL weather",
      "delta 2 {}",
      "stop 2",
    ]);
  });

  it("text after reasoning after text opens new blocks, each closed once", () => {
    const events = translate([contentDelta("A"), reasoningDelta("reasoning", "B"), contentDelta("C"), finish("stop")]);
    expect(blockTrace(events)).toEqual(["start 0 TEXT", "delta 0 A", "stop 0", "start 1 REASONING", "delta 1 B", "stop 1", "start 2 TEXT", "delta 2 C", "stop 2"]);
  });

  it("an answer cut before its finish still leaves no block open once ended", () => {
    const translator = createChunkTranslator();
    const events = viewsOf([contentDelta("Hel"), toolDelta(0, { id: "call_a", name: "weather" })].flatMap((chunk) => translator.translate(chunk)));
    expect(translator.complete()).toBe(false);
    expectWellFormedBlocks(events, { toolCallsMayOverlap: true, truncated: true });
    expectWellFormedBlocks([...events, ...viewsOf(translator.end())], { toolCallsMayOverlap: true });
  });

  it("a refusal is a refusal block of its own, after the text it follows", () => {
    const events = translate([contentDelta("I "), { choices: [{ index: 0, delta: { refusal: "can't help with that." } }] } as OpenAiChunk, finish("stop")]);
    expect(blockTrace(events)).toEqual(["start 0 TEXT", "delta 0 I ", "stop 0", "start 1 REFUSAL", "delta 1 can't help with that.", "stop 1"]);
  });

  it("a message's url citations are tied to its text block", () => {
    const message = {
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "Paris is sunny.",
            annotations: [{ type: "url_citation", url_citation: { url: "https://w.example", title: "W", start_index: 0, end_index: 15 } }],
          },
          finish_reason: "stop",
        },
      ],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    } as OpenAiChunk;
    expect(translate([message]).filter((e) => e.type === "annotation")).toEqual([
      { type: "annotation", annotation: { url: "https://w.example", title: "W", startIndex: 0, endIndex: 15, blockIndex: 0 } },
    ]);
  });

  it("usage keeps the audio and image token details by modality, and the provider's usage object", () => {
    const translator = createChunkTranslator();
    const usage = {
      prompt_tokens: 120,
      completion_tokens: 80,
      total_tokens: 200,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 100 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 60, image_tokens: 0 },
    };
    translator.translate({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage } as OpenAiChunk);
    const end = translator.end().map((event) => viewOf(event, { withRaw: true }));
    expect(end[0]).toEqual({
      type: "usage",
      usage: {
        inputTokens: 120,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 80,
        reasoningTokens: 0,
        inputByModality: [{ modality: Modality.AUDIO, tokens: 100 }],
        outputByModality: [{ modality: Modality.AUDIO, tokens: 60 }],
        raw: usage,
      },
    });
  });
});

