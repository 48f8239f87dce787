// The folded event stream as a `chat.completion` object (spec: Chat completion).
import { BlockType } from "../../../gen/router/v1/inference_pb.js";
import type { FoldedBlock, FoldedResponse } from "../../fold.ts";
import { encodeAnnotation, encodeCitations } from "../../formats/shared/encode-annotations.ts";
import { cacheFields } from "../../formats/shared/cache-fields.ts";
import { audioOf, imageOf } from "./encode-media.ts";
import { encodeFinishReason, encodeUsage } from "./encode-usage.ts";

export function encodeChatCompletion(folded: FoldedResponse) {
  const { start } = folded;
  const text = folded.blocks.filter((b) => b.type === BlockType.TEXT).map((b) => b.text).join("");
  const refusal = folded.blocks.filter((b) => b.type === BlockType.REFUSAL).map((b) => b.text).join("");
  const reasoningBlocks = folded.blocks.filter((b) => b.type === BlockType.REASONING);
  const reasoning = encodeReasoning(reasoningBlocks);
  const toolCalls = folded.blocks
    .filter((b) => b.type === BlockType.TOOL_CALL)
    .map((b) => ({ id: b.start.toolCallId, type: "function", function: { name: b.start.toolName, arguments: b.text } }));
  const message: Record<string, unknown> = {
    role: "assistant",
    // OpenAI's shape: null content when the answer is only tool calls or a refusal.
    content: text === "" && (toolCalls.length > 0 || refusal !== "") ? null : text,
    refusal: refusal === "" ? null : refusal,
    annotations: folded.annotations.map((annotation) => encodeAnnotation(annotation, text.length)),
  };
  if (reasoning) {
    message.reasoning = reasoning;
    message.reasoning_details = reasoningBlocks.map((block, index) => encodeReasoningDetail(block, index));
  }
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const images = folded.blocks.filter((b) => b.type === BlockType.IMAGE).map((b) => imageOf(b.start.mimeType, b.data));
  if (images.length > 0) message.images = images;
  // One audio answer in the chat format: a provider that splits it (streamed parts) sends pieces of one file.
  const audio = folded.blocks.filter((b) => b.type === BlockType.AUDIO);
  if (audio.length > 0) message.audio = audioOf(`audio_${start.id}`, Number(start.created), audio[0].start.mimeType, audio.flatMap((b) => b.data));
  return {
    id: start.id,
    object: "chat.completion",
    created: Number(start.created),
    model: start.model,
    provider: start.provider,
    citations: encodeCitations(folded.annotations),
    choices: [{ index: 0, message, logprobs: null, finish_reason: encodeFinishReason(folded.finishReason) ?? "stop" }],
    usage: encodeUsage(folded.usage, start),
    ...cacheFields(start),
  };
}

/**
 * The spec's `message.reasoning {text}`, plus what a client must send back for
 * the provider to accept its earlier reasoning (Anthropic checks it): the
 * signature, and any reasoning the provider sealed (`redacted`). Kept for the
 * clients that read it; it joins the blocks into one, so only
 * `reasoning_details` makes the exact round trip of several blocks.
 */
function encodeReasoning(blocks: readonly FoldedBlock[]) {
  if (blocks.length === 0) return undefined;
  const reasoning: { text: string; signature?: string; redacted?: string[] } = { text: blocks.map((b) => b.text).join("") };
  const signature = blocks.findLast((b) => b.signature)?.signature;
  if (signature) reasoning.signature = signature;
  const redacted = blocks.filter((b) => b.redactedData).map((b) => b.redactedData);
  if (redacted.length > 0) reasoning.redacted = redacted;
  return reasoning;
}

/** One entry of OpenRouter's `reasoning_details`, in its shape. */
export type ReasoningDetail =
  | { type: "reasoning.text"; text: string; signature?: string; index: number }
  | { type: "reasoning.encrypted"; data: string; index: number };

/**
 * A reasoning block (or, in a stream, a piece of one) as a `reasoning_details`
 * entry: sealed reasoning as `reasoning.encrypted`, the rest as `reasoning.text`
 * with its signature. `index` is the block's place among the answer's reasoning
 * blocks, so a client can put streamed pieces together and send each block back
 * as it came, in order (Anthropic checks each thinking block's signature).
 */
export function encodeReasoningDetail(block: Pick<FoldedBlock, "text" | "signature" | "redactedData">, index: number): ReasoningDetail {
  if (block.redactedData) return { type: "reasoning.encrypted", data: block.redactedData, index };
  return { type: "reasoning.text", text: block.text, ...(block.signature && { signature: block.signature }), index };
}
