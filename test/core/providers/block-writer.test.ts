// The block lifecycle is written once, in BlockWriter: these cases pin down its
// rules so every translator that uses it gets them.
import { describe, expect, it } from "vitest";
import { BlockWriter } from "../../../core/providers/block-writer.ts";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { BlockType, FinishReason, GenerateResponseSchema } from "../../../gen/router/v1/inference_pb.js";
import { expectWellFormedBlocks } from "../../support/block-lifecycle.ts";
import { viewsOf } from "../../support/event-view.ts";

const STOP = { reason: FinishReason.STOP, rawReason: "stop" };

describe("BlockWriter", () => {
  it("continues a text block, and a new kind of content stops it before starting", () => {
    const blocks = new BlockWriter();
    blocks.text(blocks.continueBlock(BlockType.REASONING), "Hmm");
    blocks.text(blocks.continueBlock(BlockType.TEXT), "Hel");
    blocks.text(blocks.continueBlock(BlockType.TEXT), "lo");
    blocks.text(blocks.continueBlock(BlockType.REFUSAL), "No.");
    blocks.end(undefined, STOP);
    const events = viewsOf(blocks.take());
    expectWellFormedBlocks(events);
    expect(events.map((e) => (e.type === "block_start" ? `start ${e.index} ${BlockType[e.blockType]}` : e.type === "block_stop" ? `stop ${e.index}` : e.type))).toEqual([
      "start 0 REASONING",
      "block_delta",
      "stop 0",
      "start 1 TEXT",
      "block_delta",
      "block_delta",
      "stop 1",
      "start 2 REFUSAL",
      "block_delta",
      "stop 2",
      "finish",
    ]);
  });

  it("keeps keyed blocks open side by side until other content, then a key starts a new block", () => {
    const blocks = new BlockWriter();
    const a = blocks.startBlock(BlockType.TOOL_CALL, { toolCallId: "call_a", toolName: "f" }, 0);
    const b = blocks.startBlock(BlockType.TOOL_CALL, { toolCallId: "call_b", toolName: "g" }, 1);
    expect([blocks.openIndex(0), blocks.openIndex(1)]).toEqual([a, b]);
    blocks.text(blocks.continueBlock(BlockType.TEXT), "done");
    expect(blocks.openIndex(0)).toBeUndefined();
    blocks.end(undefined, STOP);
    const events = viewsOf(blocks.take());
    expectWellFormedBlocks(events, { toolCallsMayOverlap: true });
    expect(events.filter((e) => e.type === "block_stop").map((e) => (e as { index: number }).index)).toEqual([0, 1, 2]);
  });

  it("gives tool blocks their call id as block id and leaves the others' to the core", () => {
    const blocks = new BlockWriter();
    blocks.wholeBlock(BlockType.TOOL_CALL, { toolCallId: "call_a", toolName: "f" }, "{}");
    blocks.startBlock(BlockType.SERVER_TOOL_CALL, { id: "srvtoolu_1", serverToolName: "web_search" });
    blocks.continueBlock(BlockType.TEXT);
    const starts = blocks.take().flatMap((e) => (e.event.case === "blockStart" ? [e.event.value.id] : []));
    expect(starts).toEqual(["call_a", "srvtoolu_1", ""]);
  });

  it("ties an annotation to the latest text block unless told otherwise", () => {
    const blocks = new BlockWriter();
    blocks.annotation({ url: "https://a.example", title: "" });
    blocks.text(blocks.continueBlock(BlockType.TEXT), "cited");
    blocks.annotation({ url: "https://b.example", title: "" });
    blocks.annotation({ url: "https://c.example", title: "", blockIndex: 7 });
    const indexes = blocks.take().flatMap((e) => (e.event.case === "annotation" ? [e.event.value.blockIndex] : []));
    expect(indexes).toEqual([undefined, 0, 7]);
  });

  it("ends with every block stopped, then usage (its cost left to the core), then finish with the stop sequence", () => {
    const blocks = new BlockWriter();
    blocks.data(blocks.startBlock(BlockType.AUDIO, { mimeType: "audio/wav" }), new Uint8Array([1, 2]));
    blocks.end(
      { inputTokens: 3, cachedInputTokens: 0, cacheWriteTokens: 2, cacheWrite1hTokens: 1, outputTokens: 4, reasoningTokens: 0, raw: { input_tokens: 1 } },
      { reason: FinishReason.STOP, rawReason: "stop_sequence", stopSequence: "END" },
    );
    const events = blocks.take();
    expectWellFormedBlocks(events);
    const usage = events.at(-2)!.event;
    expect(usage.case === "usage" && [usage.value.cacheWrite1hTokens, usage.value.raw, usage.value.cost]).toEqual([1, { input_tokens: 1 }, ""]);
    const finish = events.at(-1)!.event;
    expect(finish.case === "finish" && finish.value.stopSequence).toBe("END");
    expect(blocks.take()).toEqual([]);
  });

  it("writes plain message objects that serialize like created ones (the split deployment sends them over Connect)", () => {
    const blocks = new BlockWriter();
    blocks.text(blocks.continueBlock(BlockType.TEXT), "Hi");
    blocks.signature(blocks.continueBlock(BlockType.REASONING), "sig");
    blocks.data(blocks.startBlock(BlockType.IMAGE, { mimeType: "image/png" }), new Uint8Array([137, 80]));
    blocks.end({ inputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 2, reasoningTokens: 0, raw: { a: [1, "x", null] } }, STOP);
    for (const event of blocks.take()) {
      expect(fromBinary(GenerateResponseSchema, toBinary(GenerateResponseSchema, event))).toEqual(event);
    }
  });
});
