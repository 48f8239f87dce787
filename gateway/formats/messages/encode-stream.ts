// The Messages event stream, in Anthropic's order: message_start and a ping, then per
// content block content_block_start, its deltas (text_delta, thinking_delta,
// signature_delta, input_json_delta, citations_delta) and content_block_stop,
// then message_delta (stop reason, stop sequence, cumulative usage) and
// message_stop. Every frame's SSE event name is its `type`.
//
// Content block indexes are this format's own: blocks it has no content
// block for (media) are not counted. A reasoning block's start waits for its
// first delta, which tells thinking from redacted_thinking (whose data comes
// whole, in its start); a server tool result comes whole, at its stop.
import type { Annotation, BlockDelta, ResponseStart, Usage } from "../../../gen/router/v1/inference_pb.js";
import { BlockType } from "../../../gen/router/v1/inference_pb.js";
import { createBlockTracker, type TrackedBlock } from "../../block-tracker.ts";
import type { PublicError } from "../../errors/http-status.ts";
import type { SseEvent } from "../../sse.ts";
import type { StreamEncoder } from "../../write-event-stream.ts";
import { messagesErrorBody } from "./encode-error.ts";
import { signatureOf } from "../../formats/shared/reasoning-signature.ts";
import { citationOf, contentBlockStart, encodeUsage, messageHead, stopDetailsOf, stopReasonOf } from "./encode-response.ts";

export function createMessageStreamEncoder(start: ResponseStart): StreamEncoder {
  const tracker = createBlockTracker({ gather: "all" });
  /** Open blocks by hub index: a citation names its block, which is still open (Anthropic cites inside the text block). */
  const openBlocks = new Map<number, TrackedBlock>();
  /** This format's index of each started block, by hub block index. */
  const indexOf = new Map<number, number>();
  let next = 0;
  let usage: Usage | undefined;

  const frame = (type: string, fields: object): SseEvent => ({ event: type, data: JSON.stringify({ type, ...fields }) });

  /** Opens the block's content block (once), unless the format has none for it. */
  const open = (block: TrackedBlock): SseEvent[] => {
    if (indexOf.has(block.start.index)) return [];
    const contentBlock = contentBlockStart(block, start);
    if (!contentBlock) return [];
    const index = next++;
    indexOf.set(block.start.index, index);
    return [frame("content_block_start", { index, content_block: contentBlock })];
  };

  const deltaFrames = (block: TrackedBlock, delta: BlockDelta): SseEvent[] => {
    const index = indexOf.get(block.start.index);
    if (index === undefined) return [];
    const frames: SseEvent[] = [];
    const send = (fields: object) => frames.push(frame("content_block_delta", { index, delta: fields }));
    switch (block.type) {
      case BlockType.TEXT:
      case BlockType.REFUSAL:
        if (delta.text) send({ type: "text_delta", text: delta.text });
        break;
      case BlockType.REASONING:
        // Redacted reasoning came whole in its start.
        if (block.redactedData) break;
        if (delta.text) send({ type: "thinking_delta", thinking: delta.text });
        // The protocol prefix (signatureOf) goes before the first piece only.
        if (delta.signature) send({ type: "signature_delta", signature: block.signature === delta.signature ? signatureOf(delta.signature, start) : delta.signature });
        break;
      case BlockType.TOOL_CALL:
      case BlockType.SERVER_TOOL_CALL:
        if (delta.text) send({ type: "input_json_delta", partial_json: delta.text });
        break;
    }
    return frames;
  };

  const citationFrames = (annotation: Annotation): SseEvent[] => {
    const block = annotation.blockIndex === undefined ? undefined : openBlocks.get(annotation.blockIndex);
    const index = block && indexOf.get(block.start.index);
    if (index === undefined || (block!.type !== BlockType.TEXT && block!.type !== BlockType.REFUSAL)) return [];
    return [frame("content_block_delta", { index, delta: { type: "citations_delta", citation: citationOf(annotation) } })];
  };

  /** Blocks whose start waits for content: reasoning (thinking or redacted?) and server tool results (whole at the end). */
  const startsLate = (block: TrackedBlock) => block.type === BlockType.REASONING || block.type === BlockType.SERVER_TOOL_RESULT;

  return {
    encode(event) {
      const { event: e } = event;
      switch (e.case) {
        case "start": {
          // Zero counts: they come at the end, in message_delta (with the cost, which the SDK's accumulator would otherwise keep at 0).
          const { cost: _cost, ...zero } = encodeUsage(undefined, start);
          // Anthropic sends a ping right after message_start; clients (its SDK included) skip it.
          return [frame("message_start", { message: { ...messageHead(start), usage: zero } }), frame("ping", {})];
        }
        case "blockStart": {
          const block = tracker.track(event)!;
          openBlocks.set(block.start.index, block);
          return startsLate(block) ? [] : open(block);
        }
        case "blockDelta": {
          const block = tracker.track(event);
          if (!block || block.type === BlockType.SERVER_TOOL_RESULT) return [];
          return [...open(block), ...deltaFrames(block, e.value)];
        }
        case "blockStop": {
          const block = tracker.track(event);
          if (!block) return [];
          openBlocks.delete(block.start.index);
          const opened = open(block);
          const index = indexOf.get(block.start.index);
          return index === undefined ? opened : [...opened, frame("content_block_stop", { index })];
        }
        case "annotation":
          tracker.track(event);
          return citationFrames(e.value);
        case "usage":
          usage = e.value;
          return [];
        case "finish": {
          const { reason, rawReason, stopSequence } = e.value;
          const whole = encodeUsage(usage, start);
          const stopReason = stopReasonOf(reason, rawReason, stopSequence);
          return [
            frame("message_delta", {
              delta: { stop_reason: stopReason, stop_sequence: stopSequence || null, stop_details: stopDetailsOf(stopReason), container: null },
              // MessageDeltaUsage's fields (cumulative), and the spec's.
              usage: {
                input_tokens: whole.input_tokens,
                output_tokens: whole.output_tokens,
                cache_creation_input_tokens: whole.cache_creation_input_tokens,
                cache_read_input_tokens: whole.cache_read_input_tokens,
                output_tokens_details: whole.output_tokens_details,
                server_tool_use: whole.server_tool_use,
                cost: whole.cost,
                chat_id: whole.chat_id,
                provider: whole.provider,
              },
            }),
            frame("message_stop", {}),
          ];
        }
        default:
          return [];
      }
    },
    done: () => [],
    // Anthropic pings a quiet stream; its SDK and the coding agents skip the frame.
    keepAlive: () => [frame("ping", {})],
    error(error: PublicError) {
      // The same envelope as an HTTP error, request_id included (the message's id is the request's).
      const { type: _type, ...envelope } = messagesErrorBody(error, start.id);
      return [frame("error", envelope)];
    },
  };
}
