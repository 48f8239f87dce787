// Translates Anthropic's stream events (message_start, content_block_start /
// delta / stop, message_delta, message_stop) into the hub's block events. A
// whole JSON message is replayed as the same events, so one translator serves both.
import { z } from "zod";
import { BlockType } from "../../../gen/router/v1/inference_pb.js";
import { BlockWriter } from "../block-writer.ts";
import { createUsageTotals, usageSchema } from "./convert-usage.ts";
import { mapFinishReason } from "./map-finish-reason.ts";
import type { Translator } from "../http-exchange.ts";

const citationSchema = z.looseObject({
  type: z.string(),
  url: z.string().nullish(),
  title: z.string().nullish(),
  cited_text: z.string().nullish(),
});

const blockSchema = z.looseObject({
  type: z.string(),
  text: z.string().nullish(),
  thinking: z.string().nullish(),
  signature: z.string().nullish(),
  data: z.string().nullish(),
  id: z.string().nullish(),
  name: z.string().nullish(),
  input: z.unknown().optional(),
  citations: z.array(citationSchema).nullish(),
  // Server tool results (`web_search_tool_result`): the call they answer and what it found.
  tool_use_id: z.string().nullish(),
  content: z.unknown().optional(),
});

const deltaSchema = z.looseObject({
  type: z.string(),
  text: z.string().nullish(),
  thinking: z.string().nullish(),
  signature: z.string().nullish(),
  partial_json: z.string().nullish(),
  citation: citationSchema.nullish(),
});

const messageSchema = z.looseObject({
  content: z.array(blockSchema).nullish(),
  stop_reason: z.string().nullish(),
  stop_sequence: z.string().nullish(),
  usage: usageSchema.nullish(),
});

export const eventSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("message_start"), message: messageSchema }),
  z.looseObject({ type: z.literal("content_block_start"), index: z.number().int(), content_block: blockSchema }),
  z.looseObject({ type: z.literal("content_block_delta"), index: z.number().int(), delta: deltaSchema }),
  z.looseObject({ type: z.literal("content_block_stop"), index: z.number().int() }),
  z.looseObject({
    type: z.literal("message_delta"),
    delta: z.looseObject({ stop_reason: z.string().nullish(), stop_sequence: z.string().nullish() }),
    usage: usageSchema.nullish(),
  }),
  z.looseObject({ type: z.literal("message_stop") }),
  z.looseObject({ type: z.literal("ping") }),
]);

export type AnthropicEvent = z.infer<typeof eventSchema>;
type Block = z.infer<typeof blockSchema>;

export type EventTranslator = Translator<AnthropicEvent>;

/** The block kinds relayed. Server tool results are named `<tool>_tool_result` (see serverToolResultName). */
const BLOCK_TYPES: Record<string, BlockType> = {
  text: BlockType.TEXT,
  thinking: BlockType.REASONING,
  redacted_thinking: BlockType.REASONING,
  tool_use: BlockType.TOOL_CALL,
  server_tool_use: BlockType.SERVER_TOOL_CALL,
};

export function createEventTranslator(): EventTranslator {
  // Blocks are keyed by Anthropic's index while open; skipped kinds leave no gap in ours.
  const blocks = new BlockWriter();
  const usage = createUsageTotals();
  let stopReason: string | undefined;
  let stopSequence: string | undefined;
  let stopped = false;

  function startBlock(anthropicIndex: number, block: Block) {
    const resultOf = serverToolResultName(block.type);
    if (resultOf !== undefined) {
      // A server tool's result arrives whole; its payload is relayed as JSON text.
      const index = blocks.startBlock(BlockType.SERVER_TOOL_RESULT, { serverToolName: resultOf, serverToolCallId: block.tool_use_id ?? "" }, anthropicIndex);
      blocks.text(index, JSON.stringify(block.content ?? null));
      return;
    }
    const blockType = BLOCK_TYPES[block.type];
    if (blockType === undefined) return;
    const index = blocks.startBlock(blockType, openingOf(blockType, block), anthropicIndex);
    // A whole message carries the block's content here; a stream's start events carry it empty.
    if (block.text) blocks.text(index, block.text);
    if (block.thinking) blocks.text(index, block.thinking);
    if (block.signature) blocks.signature(index, block.signature);
    if (block.type === "redacted_thinking" && block.data) blocks.redactedData(index, block.data);
    if ((blockType === BlockType.TOOL_CALL || blockType === BlockType.SERVER_TOOL_CALL) && isNonEmptyObject(block.input)) blocks.text(index, JSON.stringify(block.input));
    for (const citation of block.citations ?? []) annotate(citation, index);
  }

  function delta(anthropicIndex: number, delta: z.infer<typeof deltaSchema>) {
    const index = blocks.openIndex(anthropicIndex);
    if (index === undefined) return;
    switch (delta.type) {
      case "text_delta":
        if (delta.text) blocks.text(index, delta.text);
        return;
      case "thinking_delta":
        if (delta.thinking) blocks.text(index, delta.thinking);
        return;
      case "signature_delta":
        if (delta.signature) blocks.signature(index, delta.signature);
        return;
      case "input_json_delta":
        if (delta.partial_json) blocks.text(index, delta.partial_json);
        return;
      case "citations_delta":
        if (delta.citation) annotate(delta.citation, index);
        return;
    }
  }

  /** Web search citations carry a URL; document citations (no URL) are not relayed. */
  function annotate(citation: z.infer<typeof citationSchema>, blockIndex: number) {
    if (!citation.url) return;
    blocks.annotation({ url: citation.url, title: citation.title ?? "", ...(citation.cited_text ? { content: citation.cited_text } : {}), blockIndex });
  }

  function stopBlock(anthropicIndex: number) {
    const index = blocks.openIndex(anthropicIndex);
    if (index !== undefined) blocks.stopBlock(index);
  }

  return {
    translate(event) {
      switch (event.type) {
        case "message_start": {
          usage.add(event.message.usage);
          for (const [position, block] of (event.message.content ?? []).entries()) {
            startBlock(position, block);
            stopBlock(position);
          }
          // A whole (non-streamed) message ends here.
          if (event.message.stop_reason) {
            stopReason = event.message.stop_reason;
            stopSequence = event.message.stop_sequence ?? undefined;
            stopped = true;
          }
          break;
        }
        case "content_block_start":
          startBlock(event.index, event.content_block);
          break;
        case "content_block_delta":
          delta(event.index, event.delta);
          break;
        case "content_block_stop":
          stopBlock(event.index);
          break;
        case "message_delta":
          if (event.delta.stop_reason) stopReason = event.delta.stop_reason;
          if (event.delta.stop_sequence) stopSequence = event.delta.stop_sequence;
          usage.add(event.usage);
          break;
        case "message_stop":
          stopped = true;
          break;
      }
      return blocks.take();
    },
    complete: () => stopped && stopReason !== undefined && usage.reported(),
    end() {
      const raw = stopReason ?? "end_turn";
      blocks.end(usage.total(), { reason: mapFinishReason(raw), rawReason: raw, stopSequence });
      return blocks.take();
    },
  };
}

function openingOf(blockType: BlockType, block: Block) {
  if (blockType === BlockType.TOOL_CALL) return { toolCallId: block.id ?? "", toolName: block.name ?? "" };
  if (blockType === BlockType.SERVER_TOOL_CALL) return { id: block.id ?? "", serverToolName: block.name ?? "" };
  return {};
}

/** `web_search_tool_result` -> `web_search`; undefined for other block types. */
function serverToolResultName(type: string): string | undefined {
  return type.endsWith("_tool_result") ? type.slice(0, -"_tool_result".length) : undefined;
}

function isNonEmptyObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && Object.keys(value).length > 0;
}

/** A whole JSON message as the one event that replays it. */
export function messageAsEvent(message: z.infer<typeof messageSchema>): AnthropicEvent {
  return { type: "message_start", message };
}

export { messageSchema };
