// The Message object (Anthropic's Messages API), built from the answer's
// blocks: for the JSON answer from the fold, for the stream from the start's
// and each block's events (encode-stream.ts). Block by block:
//   text -> text (with the sources it cites), refusal -> text,
//   reasoning -> thinking with its signature, or redacted_thinking,
//   tool call -> tool_use with its parsed input,
//   server tool call and result -> server_tool_use and web_search_tool_result.
// Media blocks have no content block in this format and are left out.
import { cacheFields } from "../../formats/shared/cache-fields.ts";
import { type Annotation, BlockType, FinishReason, type ResponseStart, type Usage } from "../../../gen/router/v1/inference_pb.js";
import { signatureOf, type Signer } from "../../formats/shared/reasoning-signature.ts";
import type { TrackedBlock } from "../../block-tracker.ts";
import type { FoldedResponse } from "../../fold.ts";
import { exactNumber } from "../../json.ts";

export function encodeMessage(folded: FoldedResponse) {
  const stopReason = stopReasonOf(folded.finishReason, folded.rawFinishReason, folded.stopSequence);
  return {
    ...messageHead(folded.start),
    content: folded.blocks.flatMap((block) => contentBlockOf(block, folded.start) ?? []),
    stop_reason: stopReason,
    stop_sequence: folded.stopSequence || null,
    stop_details: stopDetailsOf(stopReason),
    usage: encodeUsage(folded.usage, folded.start),
  };
}

/**
 * The message's fields before any content (message_start's message). The
 * SDK's Message type declares `container`, `stop_details` and `diagnostics`
 * as always present (null when they do not apply), so they are sent as null.
 */
export function messageHead(start: ResponseStart) {
  return {
    id: start.id,
    type: "message",
    role: "assistant",
    model: start.model,
    content: [] as unknown[],
    stop_reason: null,
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    ...cacheFields(start),
  };
}

/** A refusal's details (Anthropic's RefusalStopDetails): the hub knows no category or explanation. */
export function stopDetailsOf(stopReason: string) {
  return stopReason === "refusal" ? { type: "refusal", category: null, explanation: null } : null;
}

const ANTHROPIC_STOP_REASONS = new Set(["end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal", "model_context_window_exceeded"]);

/** Anthropic's own stop reason when the provider gave one, else the hub's reason in Anthropic's words. */
export function stopReasonOf(reason: FinishReason, raw: string, stopSequence: string): string {
  if (ANTHROPIC_STOP_REASONS.has(raw)) return raw;
  switch (reason) {
    case FinishReason.LENGTH:
      return "max_tokens";
    case FinishReason.TOOL_CALLS:
      return "tool_use";
    case FinishReason.CONTENT_FILTER:
      return "refusal";
    default:
      return stopSequence ? "stop_sequence" : "end_turn";
  }
}

/**
 * Anthropic's usage: its input_tokens leave out the cache reads and writes,
 * which have their own counts (the hub's include them); reasoning tokens as
 * `output_tokens_details.thinking_tokens`; the SDK's other always-present
 * fields null (the hub does not know them); plus the spec's `cost`, `chat_id`
 * and `provider`.
 */
export function encodeUsage(usage: Usage | undefined, start: ResponseStart) {
  const cached = usage?.cachedInputTokens ?? 0;
  const written = usage?.cacheWriteTokens ?? 0;
  const written1h = usage?.cacheWrite1hTokens ?? 0;
  const thinking = usage?.reasoningTokens ?? 0;
  return {
    input_tokens: Math.max(0, (usage?.inputTokens ?? 0) - cached - written),
    output_tokens: usage?.outputTokens ?? 0,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
    cache_creation: { ephemeral_5m_input_tokens: written - written1h, ephemeral_1h_input_tokens: written1h },
    output_tokens_details: thinking > 0 ? { thinking_tokens: thinking } : null,
    server_tool_use: null,
    service_tier: null,
    inference_geo: null,
    speed: null,
    cost: exactNumber(usage?.cost || "0"),
    chat_id: start.id,
    provider: start.provider,
  };
}

/** The content block of a whole block; undefined for blocks this format has none for. */
export function contentBlockOf(block: TrackedBlock, signer: Signer): Record<string, unknown> | undefined {
  const start = contentBlockStart(block, signer);
  if (!start) return undefined;
  switch (start.type) {
    case "text":
      return { ...start, text: block.text, citations: block.annotations.length > 0 ? block.annotations.map(citationOf) : null };
    case "thinking":
      return { ...start, thinking: block.text, signature: block.signature && signatureOf(block.signature, signer) };
    case "tool_use":
    case "server_tool_use":
      return { ...start, input: parsedInput(block.text) };
    default:
      return start;
  }
}

/**
 * The content block as content_block_start shows it, before its deltas: text
 * and thinking empty, tool input `{}`. A reasoning block is redacted_thinking
 * once its sealed data is known (it comes whole), a server tool result whole.
 */
export function contentBlockStart(block: TrackedBlock, signer: Signer): Record<string, unknown> | undefined {
  const { start } = block;
  switch (block.type) {
    case BlockType.TEXT:
    case BlockType.REFUSAL:
      return { type: "text", text: "", citations: null };
    case BlockType.REASONING:
      return block.redactedData ? { type: "redacted_thinking", data: signatureOf(block.redactedData, signer) } : { type: "thinking", thinking: "", signature: "" };
    case BlockType.TOOL_CALL:
      return { type: "tool_use", id: start.toolCallId, name: start.toolName, input: {}, caller: DIRECT };
    case BlockType.SERVER_TOOL_CALL:
      return { type: "server_tool_use", id: start.id, name: start.serverToolName, input: {}, caller: DIRECT };
    case BlockType.SERVER_TOOL_RESULT:
      return { type: `${start.serverToolName}_tool_result`, tool_use_id: start.serverToolCallId, content: parsedInput(block.text, []), caller: DIRECT };
    default:
      return undefined;
  }
}

/** Who called a tool (the SDK's `caller`, always present): the model itself. */
const DIRECT = { type: "direct" };

/** A tool input as JSON; a model's malformed arguments stay visible as a string rather than fail the answer. */
function parsedInput(text: string, empty: unknown = {}): unknown {
  if (text === "") return empty;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A cited source as Anthropic's web search citation. */
export function citationOf(annotation: Annotation) {
  return { type: "web_search_result_location", url: annotation.url, title: annotation.title || null, cited_text: annotation.content, encrypted_index: "" };
}
