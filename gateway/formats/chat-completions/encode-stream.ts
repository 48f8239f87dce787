// The event stream as `chat.completion.chunk` objects: a role chunk first, one
// chunk per delta, a finish chunk, a usage chunk (cost, chat_id, provider), then
// `[DONE]`. Tool calls stream as OpenAI does: id and name first, then arguments.
import { BlockType, type ResponseStart, type Usage } from "../../../gen/router/v1/inference_pb.js";
import { createBlockTracker } from "../../block-tracker.ts";
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
  // The frame of every text delta, as `delta({ content })` spells it, without building and
  // stringifying its objects per event: only the text is encoded.
  const contentHead = JSON.stringify({ id: start.id, object: "chat.completion.chunk", created, model: start.model, provider: start.provider }).slice(0, -1) + ',"choices":[{"index":0,"delta":{"content":';
  const contentTail = '},"finish_reason":null}]}';
  const contentDelta = (text: string): SseEvent => ({ data: contentHead + JSON.stringify(text) + contentTail });
  // Tool calls are numbered among themselves in the chat format, and so are
  // reasoning blocks (the `index` of their `reasoning_details` entries): the
  // tracker's ordinals. Media bytes are sent whole when their block stops. Text
  // goes out delta by delta, so the tracker gathers only the media bytes.
  const blocks = createBlockTracker({ gather: "media" });
  let usage: Usage | undefined;

  return {
    encode(response) {
      const { event } = response;
      switch (event.case) {
        case "start":
          return [delta({ role: "assistant", content: "" })];
        case "blockStart": {
          const block = blocks.track(response)!;
          if (block.type !== BlockType.TOOL_CALL) return [];
          return [
            delta({
              tool_calls: [{ index: block.ordinal, id: block.start.toolCallId, type: "function", function: { name: block.start.toolName, arguments: "" } }],
            }),
          ];
        }
        case "blockDelta": {
          const block = blocks.track(response);
          if (!block) return [];
          const { text, signature, redactedData } = event.value;
          if (block.type === BlockType.REASONING) {
            // The same objects as the answer's `message.reasoning` and `message.reasoning_details`,
            // field by field; each piece names its block, so the signature arrives for the right one.
            if (!text && !signature && !redactedData) return [];
            return [
              delta({
                reasoning: { text, ...(signature && { signature }), ...(redactedData && { redacted: [redactedData] }) },
                reasoning_details: [encodeReasoningDetail({ text, signature, redactedData }, block.ordinal)],
              }),
            ];
          }
          if (!text) return [];
          switch (block.type) {
            case BlockType.TEXT:
              return [contentDelta(text)];
            case BlockType.REFUSAL:
              return [delta({ refusal: text })];
            case BlockType.TOOL_CALL:
              return [delta({ tool_calls: [{ index: block.ordinal, function: { arguments: text } }] })];
            default:
              return [];
          }
        }
        case "blockStop": {
          const block = blocks.track(response);
          switch (block?.type) {
            case BlockType.IMAGE:
              return [delta({ images: [imageOf(block.start.mimeType, block.data)] })];
            case BlockType.AUDIO:
              return [delta({ audio: audioOf(`audio_${start.id}`, created, block.start.mimeType, block.data) })];
            default:
              return [];
          }
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
