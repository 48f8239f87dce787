// The answer of a relayed stream as the stored turn's output: one assistant
// message whose parts are the blocks in the order they started. Reasoning
// keeps its signature and redacted data, so a provider that checks them
// (Anthropic thinking) accepts the history sent back.
import { create } from "@bufbuild/protobuf";
import {
  BlockType,
  ContentPartSchema,
  MessageSchema,
  Role,
  type BlockDelta,
  type BlockStart,
  type ContentPart,
  type Message,
} from "../../gen/router/v1/inference_pb.js";

export interface OutputFold {
  start(block: BlockStart): void;
  delta(block: BlockDelta): void;
  /** The assistant message; none when the answer had no block that is kept. */
  messages(): Message[];
}

/**
 * Kept: text, reasoning, tool calls, and refusals (as text: the hub's messages
 * have no refusal part yet, and a provider reads a refusal as what the
 * assistant said). Not kept: media and server tool blocks, which no provider
 * takes back as assistant input.
 */
export function createOutputFold(): OutputFold {
  const parts: ContentPart[] = [];
  // Stream index -> its part; undefined for blocks not kept.
  const byIndex: (ContentPart["part"] | undefined)[] = [];
  return {
    start(block) {
      const part = partFor(block);
      if (!part) return;
      parts.push(part);
      byIndex[block.index] = part.part;
    },
    delta(block) {
      const part = byIndex[block.index];
      if (!part) return;
      switch (part.case) {
        case "text":
          part.value.text += block.text;
          break;
        case "reasoning":
          part.value.text += block.text;
          part.value.signature += block.signature;
          part.value.redactedData += block.redactedData;
          break;
        case "toolCall":
          part.value.arguments += block.text;
          break;
      }
    },
    messages: () => (parts.length === 0 ? [] : [create(MessageSchema, { role: Role.ASSISTANT, content: parts })]),
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
