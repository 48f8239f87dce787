// Translates Anthropic's stream events (message_start, content_block_start /
// delta / stop, message_delta, message_stop) into the hub's block events. A
// whole JSON message is replayed as the same events, so one translator serves both.
import { z } from "zod";
import { BlockType } from "../../../gen/router/v1/inference_pb.js";
import type { Citation, TokenUsage, UpstreamEvent } from "../types.ts";
import { mapFinishReason } from "./map-finish-reason.ts";
import type { Translator } from "../http-exchange.ts";

const count = z.number().int().nonnegative().nullish();

const usageSchema = z.looseObject({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: count,
  cache_read_input_tokens: count,
  // The split of cache_creation_input_tokens by time to live.
  cache_creation: z.looseObject({ ephemeral_1h_input_tokens: count }).nullish(),
  // The reasoning share of output_tokens (not added to it); absent from older answers.
  output_tokens_details: z.looseObject({ thinking_tokens: count }).nullish(),
});

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
  usage: usageSchema.nullish(),
});

export const eventSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("message_start"), message: messageSchema }),
  z.looseObject({ type: z.literal("content_block_start"), index: z.number().int(), content_block: blockSchema }),
  z.looseObject({ type: z.literal("content_block_delta"), index: z.number().int(), delta: deltaSchema }),
  z.looseObject({ type: z.literal("content_block_stop"), index: z.number().int() }),
  z.looseObject({ type: z.literal("message_delta"), delta: z.looseObject({ stop_reason: z.string().nullish() }), usage: usageSchema.nullish() }),
  z.looseObject({ type: z.literal("message_stop") }),
  z.looseObject({ type: z.literal("ping") }),
]);

export type AnthropicEvent = z.infer<typeof eventSchema>;
type Block = z.infer<typeof blockSchema>;
type Usage = z.infer<typeof usageSchema>;
type Counts = Record<"input_tokens" | "output_tokens" | "cache_creation_input_tokens" | "cache_read_input_tokens" | "cache_creation_1h" | "thinking_tokens", number>;

export type EventTranslator = Translator<AnthropicEvent>;

/** The block kinds relayed; server tool blocks (web search calls and results) are the provider's own business. */
const BLOCK_TYPES: Record<string, BlockType> = {
  text: BlockType.TEXT,
  thinking: BlockType.REASONING,
  redacted_thinking: BlockType.REASONING,
  tool_use: BlockType.TOOL_CALL,
};

export function createEventTranslator(): EventTranslator {
  // Anthropic's block index -> ours (skipped kinds leave no gap in ours).
  const indexes = new Map<number, number>();
  let nextIndex = 0;
  const usage: Counts = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation_1h: 0, thinking_tokens: 0 };
  let sawUsage = false;
  let stopReason: string | undefined;
  let stopped = false;

  const addUsage = (reported: Usage | null | undefined) => {
    if (!reported) return;
    sawUsage = true;
    // Counts are running totals: the latest value of each field wins.
    for (const key of ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"] as const) {
      const value = reported[key];
      if (typeof value === "number") usage[key] = value;
    }
    const written1h = reported.cache_creation?.ephemeral_1h_input_tokens;
    if (typeof written1h === "number") usage.cache_creation_1h = written1h;
    const thinking = reported.output_tokens_details?.thinking_tokens;
    if (typeof thinking === "number") usage.thinking_tokens = thinking;
  };

  function startBlock(anthropicIndex: number, block: Block): UpstreamEvent[] {
    const blockType = BLOCK_TYPES[block.type];
    if (blockType === undefined) return [];
    const index = nextIndex++;
    indexes.set(anthropicIndex, index);
    const out: UpstreamEvent[] = [
      blockType === BlockType.TOOL_CALL
        ? { type: "block_start", index, blockType, toolCallId: block.id ?? "", toolName: block.name ?? "" }
        : { type: "block_start", index, blockType },
    ];
    // A whole message carries the block's content here; a stream's start events carry it empty.
    if (block.text) out.push({ type: "block_delta", index, text: block.text });
    if (block.thinking) out.push({ type: "block_delta", index, text: block.thinking });
    if (block.signature) out.push({ type: "block_delta", index, text: "", signature: block.signature });
    if (block.type === "redacted_thinking" && block.data) out.push({ type: "block_delta", index, text: "", redactedData: block.data });
    if (block.type === "tool_use" && isNonEmptyObject(block.input)) out.push({ type: "block_delta", index, text: JSON.stringify(block.input) });
    for (const citation of block.citations ?? []) out.push(...citationEvents(citation));
    return out;
  }

  function delta(anthropicIndex: number, delta: z.infer<typeof deltaSchema>): UpstreamEvent[] {
    const index = indexes.get(anthropicIndex);
    if (index === undefined) return [];
    switch (delta.type) {
      case "text_delta":
        return delta.text ? [{ type: "block_delta", index, text: delta.text }] : [];
      case "thinking_delta":
        return delta.thinking ? [{ type: "block_delta", index, text: delta.thinking }] : [];
      case "signature_delta":
        return delta.signature ? [{ type: "block_delta", index, text: "", signature: delta.signature }] : [];
      case "input_json_delta":
        return delta.partial_json ? [{ type: "block_delta", index, text: delta.partial_json }] : [];
      case "citations_delta":
        return delta.citation ? citationEvents(delta.citation) : [];
      default:
        return [];
    }
  }

  return {
    translate(event) {
      switch (event.type) {
        case "message_start": {
          addUsage(event.message.usage);
          const out = (event.message.content ?? []).flatMap((block, position) => [...startBlock(position, block), ...stopBlock(position)]);
          // A whole (non-streamed) message ends here.
          if (event.message.stop_reason) {
            stopReason = event.message.stop_reason;
            stopped = true;
          }
          return out;
        }
        case "content_block_start":
          return startBlock(event.index, event.content_block);
        case "content_block_delta":
          return delta(event.index, event.delta);
        case "content_block_stop":
          return stopBlock(event.index);
        case "message_delta":
          if (event.delta.stop_reason) stopReason = event.delta.stop_reason;
          addUsage(event.usage);
          return [];
        case "message_stop":
          stopped = true;
          return [];
        default:
          return [];
      }
    },
    complete: () => stopped && stopReason !== undefined && sawUsage,
    end() {
      const raw = stopReason ?? "end_turn";
      return [{ type: "usage", usage: tokenUsage(usage) }, { type: "finish", reason: mapFinishReason(raw), rawReason: raw }];
    },
  };

  function stopBlock(anthropicIndex: number): UpstreamEvent[] {
    const index = indexes.get(anthropicIndex);
    return index === undefined ? [] : [{ type: "block_stop", index }];
  }
}

/**
 * Anthropic counts cache reads and writes apart from `input_tokens`; the hub's
 * input count includes both. Thinking tokens are part of `output_tokens`, and
 * `output_tokens_details.thinking_tokens` says how many (0 when not reported).
 */
function tokenUsage(usage: Counts): TokenUsage {
  const written1h = Math.min(usage.cache_creation_1h, usage.cache_creation_input_tokens);
  return {
    inputTokens: usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens,
    cachedInputTokens: usage.cache_read_input_tokens,
    cacheWriteTokens: usage.cache_creation_input_tokens,
    ...(written1h > 0 && { cacheWrite1hTokens: written1h }),
    outputTokens: usage.output_tokens,
    reasoningTokens: Math.min(usage.thinking_tokens, usage.output_tokens),
  };
}

/** Web search citations carry a URL; document citations (no URL) are not relayed. */
function citationEvents(citation: z.infer<typeof citationSchema>): UpstreamEvent[] {
  if (!citation.url) return [];
  const annotation: Citation = { url: citation.url, title: citation.title ?? "", ...(citation.cited_text ? { content: citation.cited_text } : {}) };
  return [{ type: "annotation", annotation }];
}

function isNonEmptyObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && Object.keys(value).length > 0;
}

/** A whole JSON message as the one event that replays it. */
export function messageAsEvent(message: z.infer<typeof messageSchema>): AnthropicEvent {
  return { type: "message_start", message };
}

export { messageSchema };
