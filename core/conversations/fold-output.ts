// The answer of a relayed stream as the stored turn's output: one assistant
// message whose parts are the blocks in the order they started. Reasoning
// keeps its signature and redacted data, so a provider that checks them
// (Anthropic thinking) accepts the history sent back. Beside each part, what
// the message types cannot hold: the block's stream id, its type and the
// sources its text cites (OutputBlock).
import { create } from "@bufbuild/protobuf";
import { OutputBlockSchema, type OutputBlock } from "../../gen/router/v1/conversations_pb.js";
import {
  BlockType,
  ContentPartSchema,
  MessageSchema,
  Role,
  type Annotation,
  type BlockDelta,
  type BlockStart,
  type ContentPart,
  type Message,
} from "../../gen/router/v1/inference_pb.js";

export interface OutputFold {
  start(block: BlockStart): void;
  delta(block: BlockDelta): void;
  /** A cited source: on its block when the event names one, else on the last text block. */
  annotate(annotation: Annotation): void;
  /** The assistant message; none when the answer had no block that is kept. */
  messages(): Message[];
  /** One per part of the assistant message, in the same order. */
  blocks(): OutputBlock[];
}

interface Kept {
  part: ContentPart["part"];
  block: OutputBlock;
}

/**
 * Kept: text, reasoning, tool calls, and refusals (as text: the hub's messages
 * have no refusal part, and a provider reads a refusal as what the assistant
 * said; the OutputBlock's type tells it apart). Not kept: media and server
 * tool blocks, which no provider takes back as assistant input.
 */
export function createOutputFold(): OutputFold {
  const parts: ContentPart[] = [];
  const blocks: OutputBlock[] = [];
  // Stream index -> its part; undefined for blocks not kept.
  const byIndex: (Kept | undefined)[] = [];
  let lastText: OutputBlock | undefined;
  return {
    start(start) {
      const part = partFor(start);
      if (!part) return;
      const block = create(OutputBlockSchema, { id: start.id, type: start.type });
      parts.push(part);
      blocks.push(block);
      byIndex[start.index] = { part: part.part, block };
      if (part.part.case === "text") lastText = block;
    },
    delta(delta) {
      const part = byIndex[delta.index]?.part;
      if (!part) return;
      switch (part.case) {
        case "text":
          part.value.text += delta.text;
          break;
        case "reasoning":
          part.value.text += delta.text;
          part.value.signature += delta.signature;
          part.value.redactedData += delta.redactedData;
          break;
        case "toolCall":
          part.value.arguments += delta.text;
          break;
      }
    },
    annotate(annotation) {
      const block = annotation.blockIndex === undefined ? lastText : byIndex[annotation.blockIndex]?.block;
      block?.annotations.push(annotation);
    },
    messages: () => (parts.length === 0 ? [] : [create(MessageSchema, { role: Role.ASSISTANT, content: parts })]),
    blocks: () => blocks,
  };
}

function partFor(block: BlockStart): ContentPart | undefined {
  switch (block.type) {
    case BlockType.TEXT:
    case BlockType.REFUSAL:
      return create(ContentPartSchema, { part: { case: "text", value: { text: "" } } });
    case BlockType.REASONING:
      return create(ContentPartSchema, { part: { case: "reasoning", value: {} } });
    case BlockType.TOOL_CALL:
      return create(ContentPartSchema, { part: { case: "toolCall", value: { id: block.toolCallId, name: block.toolName, arguments: "" } } });
    default:
      return undefined;
  }
}
