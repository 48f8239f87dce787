// The block-lifecycle check the parser tests rely on must itself catch each
// broken rule; otherwise those tests could not fail.
import { describe, expect, it } from "vitest";
import type { EventView } from "../../support/event-view.ts";
import { BlockType, FinishReason } from "../../../gen/router/v1/inference_pb.js";
import { blockLifecycleViolation } from "../../support/block-lifecycle.ts";

const start = (index: number, blockType = BlockType.TEXT): EventView => ({ type: "block_start", index, blockType });
const delta = (index: number): EventView => ({ type: "block_delta", index, text: "x" });
const stop = (index: number): EventView => ({ type: "block_stop", index });
const usage: EventView = { type: "usage", usage: { inputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 1, reasoningTokens: 0 } };
const finish: EventView = { type: "finish", reason: FinishReason.STOP, rawReason: "stop" };
const TOOL = BlockType.TOOL_CALL;

describe("blockLifecycleViolation", () => {
  it("accepts blocks opened and closed one after another, then usage and finish", () => {
    expect(blockLifecycleViolation([start(0, BlockType.REASONING), delta(0), stop(0), start(1), delta(1), stop(1), start(2, TOOL), delta(2), stop(2), usage, finish])).toBeUndefined();
  });

  it.each<[string, EventView[], string]>([
    ["a text block left open when a tool call starts", [start(0), start(1, TOOL), stop(0), stop(1)], "starts a TOOL_CALL block while TEXT block 0 is open"],
    ["a reasoning block left open when text starts", [start(0, BlockType.REASONING), start(1), stop(1), stop(0)], "starts a TEXT block while REASONING block 0 is open"],
    ["text starting while a tool call is open", [start(0, TOOL), start(1), stop(0), stop(1)], "starts a TEXT block while TOOL_CALL block 0 is open"],
    ["a block never stopped", [start(0), delta(0)], "block(s) 0 never stopped"],
    ["a block stopped twice", [start(0), stop(0), stop(0)], "stops block 0, which is not open"],
    ["a stop for a block never started", [stop(0)], "stops block 0, which is not open"],
    ["a delta before its block starts", [delta(0), start(0), stop(0)], "is a delta for block 0, which is not open"],
    ["a delta after its block stopped", [start(0), stop(0), delta(0)], "is a delta for block 0, which is not open"],
    ["an index started twice while open", [start(0), start(0), stop(0)], "starts block 0, which is still open"],
    ["an index reused after its stop", [start(0), stop(0), start(0), stop(0)], "reuses index 0"],
    ["an index skipped", [start(1), stop(1)], "the next index is 0"],
    ["usage while a block is open", [start(0), usage, stop(0), finish], "are open"],
    ["finish while a block is open", [start(0), finish], "are open"],
    ["a block after finish", [finish, start(0), stop(0)], "comes after finish"],
  ])("refuses %s", (_name, events, message) => {
    expect(blockLifecycleViolation(events, { toolCallsMayOverlap: true })).toContain(message);
  });

  it("lets tool calls overlap only when asked to", () => {
    const events = [start(0, TOOL), start(1, TOOL), delta(0), delta(1), stop(0), stop(1)];
    expect(blockLifecycleViolation(events, { toolCallsMayOverlap: true })).toBeUndefined();
    expect(blockLifecycleViolation(events)).toContain("starts a TOOL_CALL block while TOOL_CALL block 0 is open");
  });

  it("lets a truncated answer end with a block open, but nothing else", () => {
    expect(blockLifecycleViolation([start(0), delta(0)], { truncated: true })).toBeUndefined();
    expect(blockLifecycleViolation([start(0), start(1, TOOL)], { truncated: true })).toContain("while TEXT block 0 is open");
  });
});
