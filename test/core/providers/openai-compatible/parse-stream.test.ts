// OpenAI-style streamed tool calls are joined by their `index`: a provider may
// start a second call and then come back to the first one's arguments.
import { describe, expect, it } from "vitest";
import { createChunkTranslator, type OpenAiChunk } from "../../../../core/providers/openai-compatible/parse-stream.ts";
import type { UpstreamEvent } from "../../../../core/providers/types.ts";
import { BlockType } from "../../../../gen/router/v1/inference_pb.js";

const toolDelta = (index: number, fields: { id?: string; name?: string; arguments?: string }): OpenAiChunk =>
  ({
    choices: [
      {
        index: 0,
        delta: { tool_calls: [{ index, ...(fields.id && { id: fields.id, type: "function" }), function: { ...(fields.name && { name: fields.name }), arguments: fields.arguments ?? "" } }] },
      },
    ],
  }) as OpenAiChunk;

function translate(chunks: OpenAiChunk[]): UpstreamEvent[] {
  const translator = createChunkTranslator();
  return [...chunks.flatMap((chunk) => translator.translate(chunk)), ...translator.end()];
}

describe("OpenAI-compatible stream translation", () => {
  it("keeps interleaved tool calls apart, each with its id, name and whole arguments", () => {
    const events = translate([
      toolDelta(0, { id: "call_a", name: "weather" }),
      toolDelta(1, { id: "call_b", name: "time" }),
      toolDelta(0, { arguments: '{"city":' }),
      toolDelta(1, { arguments: '{"zone":"UTC"}' }),
      toolDelta(0, { arguments: '"Paris"}' }),
      { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } } as OpenAiChunk,
    ]);
    const starts = events.filter((e) => e.type === "block_start");
    expect(starts).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.TOOL_CALL, toolCallId: "call_a", toolName: "weather" },
      { type: "block_start", index: 1, blockType: BlockType.TOOL_CALL, toolCallId: "call_b", toolName: "time" },
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
});
