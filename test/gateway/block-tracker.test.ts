// The block tracker gathers each block's pieces once, for the fold and for the
// stream encoders alike.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { createBlockTracker } from "../../gateway/block-tracker.ts";
import { foldEvents } from "../../gateway/fold.ts";
import {
  BlockType,
  FinishReason,
  GenerateResponseSchema,
  ResponseStartSchema,
  type GenerateResponse,
} from "../../gen/router/v1/inference_pb.js";

const event = (value: GenerateResponse["event"]) => create(GenerateResponseSchema, { event: value } as never);
const start = (index: number, type: BlockType, extra: Record<string, unknown> = {}) =>
  event({ case: "blockStart", value: { index, type, ...extra } } as never);
const delta = (index: number, fields: Record<string, unknown>) => event({ case: "blockDelta", value: { index, ...fields } } as never);
const stop = (index: number) => event({ case: "blockStop", value: { index } } as never);
const bytes = (...values: number[]) => new Uint8Array(values);

/** Two interleaved tool calls, reasoning with its signature, a text with a citation, an image in two pieces. */
const answer = [
  start(0, BlockType.REASONING),
  delta(0, { text: "Let me " }),
  delta(0, { text: "think." }),
  delta(0, { signature: "sig-" }),
  delta(0, { signature: "1" }),
  stop(0),
  start(1, BlockType.TOOL_CALL, { toolCallId: "call_a", toolName: "weather" }),
  start(2, BlockType.TOOL_CALL, { toolCallId: "call_b", toolName: "time" }),
  delta(1, { text: '{"city":' }),
  delta(2, { text: "{}" }),
  delta(1, { text: '"Paris"}' }),
  stop(1),
  stop(2),
  start(3, BlockType.TEXT),
  delta(3, { text: "Sunny" }),
  event({ case: "annotation", value: { url: "https://example.com", blockIndex: 3 } } as never),
  delta(3, { text: " today." }),
  stop(3),
  start(4, BlockType.IMAGE, { mimeType: "image/png" }),
  delta(4, { data: bytes(1, 2) }),
  delta(4, { data: bytes(3) }),
  stop(4),
  event({ case: "usage", value: { inputTokens: 3, outputTokens: 9 } } as never),
  event({ case: "finish", value: { reason: FinishReason.STOP, rawReason: "end_turn", stopSequence: "###" } } as never),
];

describe("block tracker", () => {
  it("hands a stream encoder each block whole at its stop, numbered among the blocks of its type", () => {
    const tracker = createBlockTracker();
    const stopped = answer.flatMap((response) => {
      const block = tracker.track(response);
      return response.event.case === "blockStop" && block ? [block] : [];
    });
    expect(stopped.map((b) => [b.start.index, b.type, b.ordinal, b.text, b.stopped])).toEqual([
      [0, BlockType.REASONING, 0, "Let me think.", true],
      [1, BlockType.TOOL_CALL, 0, '{"city":"Paris"}', true],
      [2, BlockType.TOOL_CALL, 1, "{}", true],
      [3, BlockType.TEXT, 0, "Sunny today.", true],
      [4, BlockType.IMAGE, 0, "", true],
    ]);
    expect(stopped[0].signature).toBe("sig-1");
    expect(stopped[1].start.toolCallId).toBe("call_a");
    expect(stopped[3].annotations.map((a) => a.url)).toEqual(["https://example.com"]);
    expect(Buffer.concat(stopped[4].data)).toEqual(Buffer.from([1, 2, 3]));
    // Without keepStoppedBlocks a stream holds nothing past a block's stop.
    expect(tracker.blocks).toEqual([]);
  });

  it("with gather: media (chat's stream) keeps ordinals and media bytes but no text, signature or annotations", () => {
    const tracker = createBlockTracker({ gather: "media" });
    const stopped = answer.flatMap((response) => {
      const block = tracker.track(response);
      return response.event.case === "blockStop" && block ? [block] : [];
    });
    expect(stopped.map((b) => [b.start.index, b.type, b.ordinal, b.text, b.signature, b.redactedData, b.annotations.length])).toEqual([
      [0, BlockType.REASONING, 0, "", "", "", 0],
      [1, BlockType.TOOL_CALL, 0, "", "", "", 0],
      [2, BlockType.TOOL_CALL, 1, "", "", "", 0],
      [3, BlockType.TEXT, 0, "", "", "", 0],
      [4, BlockType.IMAGE, 0, "", "", "", 0],
    ]);
    expect(Buffer.concat(stopped[4].data)).toEqual(Buffer.from([1, 2, 3]));
    // An open block holds no text either, delta after delta.
    tracker.track(start(5, BlockType.TEXT));
    expect(tracker.track(delta(5, { text: "long answer", redactedData: "x" }))?.text).toBe("");
  });

  it("ignores pieces of a block that is not open (never started, or stopped)", () => {
    const tracker = createBlockTracker();
    expect(tracker.track(delta(7, { text: "stray" }))).toBeUndefined();
    tracker.track(start(0, BlockType.TEXT));
    const block = tracker.track(stop(0))!;
    expect(tracker.track(delta(0, { text: "late" }))).toBeUndefined();
    expect(tracker.track(stop(0))).toBeUndefined();
    expect(block.text).toBe("");
  });

  it("is the fold: the whole answer's blocks in start order, with usage, annotations and finish", async () => {
    async function* rest() {
      yield* answer;
    }
    const folded = await foldEvents(create(ResponseStartSchema, { id: "gen_1" }), rest());
    expect(folded.blocks.map((b) => [b.type, b.ordinal, b.text])).toEqual([
      [BlockType.REASONING, 0, "Let me think."],
      [BlockType.TOOL_CALL, 0, '{"city":"Paris"}'],
      [BlockType.TOOL_CALL, 1, "{}"],
      [BlockType.TEXT, 0, "Sunny today."],
      [BlockType.IMAGE, 0, ""],
    ]);
    expect(folded.blocks[4].data).toHaveLength(2);
    expect(folded.annotations.map((a) => a.url)).toEqual(["https://example.com"]);
    expect(folded.usage?.outputTokens).toBe(9);
    expect([folded.finishReason, folded.rawFinishReason, folded.stopSequence]).toEqual([FinishReason.STOP, "end_turn", "###"]);
  });

  it("in the fold, ties an annotation that arrives after its block's stop to that block", async () => {
    async function* rest() {
      yield start(0, BlockType.TEXT);
      yield delta(0, { text: "Grounded." });
      yield stop(0);
      yield event({ case: "annotation", value: { url: "https://late.example", blockIndex: 0 } } as never);
    }
    const folded = await foldEvents(create(ResponseStartSchema, {}), rest());
    expect(folded.blocks[0].annotations.map((a) => a.url)).toEqual(["https://late.example"]);
  });
});
