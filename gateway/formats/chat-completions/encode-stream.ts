// The event stream as `chat.completion.chunk` objects: a role chunk first, one
// chunk per delta, a finish chunk, a usage chunk (cost, chat_id, provider), then
// `[DONE]`. Tool calls stream as OpenAI does: id and name first, then arguments.
import { BlockType, type ResponseStart, type Usage } from "../../../gen/router/v1/inference_pb.js";
import type { SseEvent } from "../../sse.ts";
import type { StreamEncoder } from "../../write-event-stream.ts";
import { encodeStreamedAnnotation } from "./encode-annotations.ts";
import { encodeChatStreamError } from "./encode-error.ts";
import { audioOf, imageOf } from "./encode-media.ts";
import { encodeReasoningDetail } from "./encode-response.ts";
import { encodeFinishReason, encodeUsage } from "./encode-usage.ts";

/** The chat stream's last frame, after the usage chunk. */
const DONE: SseEvent[] = [{ data: "[DONE]" }];

export function createChunkEncoder(start: ResponseStart): StreamEncoder {
  const created = Number(start.created);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): SseEvent => ({
    data: JSON.stringify({ id: start.id, object: "chat.completion.chunk", created, model: start.model, provider: start.provider, choices, ...extra }),
  });
  const delta = (value: Record<string, unknown>) => chunk([{ index: 0, delta: value, finish_reason: null }]);
  const blockTypes = new Map<number, BlockType>();
  // Tool calls are numbered among themselves in the chat format.
  const toolPositions = new Map<number, number>();
  // So are reasoning blocks: the `index` of their `reasoning_details` entries.
  const reasoningPositions = new Map<number, number>();
  // Media bytes are gathered and sent whole when their block ends.
  const media = new Map<number, { type: BlockType; mimeType: string; chunks: Uint8Array[] }>();
  let usage: Usage | undefined;

  return {
    encode({ event }) {
      switch (event.case) {
        case "start":
          return [delta({ role: "assistant", content: "" })];
        case "blockStart": {
          blockTypes.set(event.value.index, event.value.type);
          const { type, mimeType } = event.value;
          if (type === BlockType.IMAGE || type === BlockType.AUDIO) media.set(event.value.index, { type, mimeType, chunks: [] });
          if (type === BlockType.REASONING) reasoningPositions.set(event.value.index, reasoningPositions.size);
          if (event.value.type !== BlockType.TOOL_CALL) return [];
          const position = toolPositions.size;
          toolPositions.set(event.value.index, position);
          return [
            delta({
              tool_calls: [{ index: position, id: event.value.toolCallId, type: "function", function: { name: event.value.toolName, arguments: "" } }],
            }),
          ];
        }
        case "blockDelta": {
          const { index, text, signature, redactedData, data } = event.value;
          if (data.length > 0) media.get(index)?.chunks.push(data);
          if (blockTypes.get(index) === BlockType.REASONING) {
            // The same objects as the answer's `message.reasoning` and `message.reasoning_details`,
            // field by field; each piece names its block, so the signature arrives for the right one.
            if (!text && !signature && !redactedData) return [];
            return [
              delta({
                reasoning: { text, ...(signature && { signature }), ...(redactedData && { redacted: [redactedData] }) },
                reasoning_details: [encodeReasoningDetail({ text, signature, redactedData }, reasoningPositions.get(index) ?? 0)],
              }),
            ];
          }
          if (!text) return [];
          switch (blockTypes.get(index)) {
            case BlockType.TEXT:
              return [delta({ content: text })];
            case BlockType.TOOL_CALL:
              return [delta({ tool_calls: [{ index: toolPositions.get(index), function: { arguments: text } }] })];
            default:
              return [];
          }
        }
        case "blockStop": {
          const block = media.get(event.value.index);
          if (!block) return [];
          media.delete(event.value.index);
          return block.type === BlockType.IMAGE
            ? [delta({ images: [imageOf(block.mimeType, block.chunks)] })]
            : [delta({ audio: audioOf(`audio_${start.id}`, created, block.mimeType, block.chunks) })];
        }
        case "annotation":
          // Ranges are only known once the text is whole, so a streamed citation carries those the provider gave.
          return [delta({ annotations: [encodeStreamedAnnotation(event.value)] })];
        case "usage":
          usage = event.value;
          return [];
        case "finish":
          return [
            chunk([{ index: 0, delta: {}, finish_reason: encodeFinishReason(event.value.reason) ?? "stop" }]),
            chunk([], { usage: encodeUsage(usage, start) }),
          ];
        default:
          return [];
      }
    },
    done: () => DONE,
    error: encodeChatStreamError,
  };
}
