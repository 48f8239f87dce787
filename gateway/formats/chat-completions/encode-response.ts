// The folded event stream as a `chat.completion` object (spec: Chat completion).
import { BlockType } from "../../../gen/router/v1/inference_pb.js";
import type { FoldedResponse } from "../../fold.ts";
import { encodeFinishReason, encodeUsage } from "./encode-usage.ts";

export function encodeChatCompletion(folded: FoldedResponse) {
  const { start } = folded;
  const text = folded.blocks.filter((b) => b.type === BlockType.TEXT).map((b) => b.text).join("");
  const reasoning = folded.blocks.filter((b) => b.type === BlockType.REASONING).map((b) => b.text).join("");
  const toolCalls = folded.blocks
    .filter((b) => b.type === BlockType.TOOL_CALL)
    .map((b) => ({ id: b.toolCallId, type: "function", function: { name: b.toolName, arguments: b.text } }));
  const message: Record<string, unknown> = {
    role: "assistant",
    // OpenAI's shape: null content when the answer is only tool calls.
    content: text === "" && toolCalls.length > 0 ? null : text,
    refusal: null,
    annotations: [],
  };
  if (reasoning) message.reasoning = { text: reasoning };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: start.id,
    object: "chat.completion",
    created: Number(start.created),
    model: start.model,
    provider: start.provider,
    citations: null,
    choices: [{ index: 0, message, logprobs: null, finish_reason: encodeFinishReason(folded.finishReason) ?? "stop" }],
    usage: encodeUsage(folded.usage, start),
  };
}
