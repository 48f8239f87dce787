// The event stream as `chat.completion.chunk` objects: a role chunk first, one
// chunk per delta, a finish chunk, a usage chunk (cost, chat_id, provider), then
// `[DONE]`. Tool calls stream as OpenAI does: id and name first, then arguments.
import { BlockType, type GenerateResponse, type ResponseStart, type Usage } from "../../../gen/router/v1/inference_pb.js";
import type { PublicError } from "../../errors/http-status.ts";
import { createBlockTracker } from "../../block-tracker.ts";
import type { SseEvent } from "../../sse.ts";
import type { StreamEncoder } from "../../write-event-stream.ts";
import { encodeStreamedAnnotation } from "../../formats/shared/encode-annotations.ts";
import { cacheFields, type CacheFields } from "../../formats/shared/cache-fields.ts";
import { encodeChatStreamError } from "./encode-error.ts";
import { audioOf, imageOf } from "./encode-media.ts";
import { encodeReasoningDetail } from "./encode-response.ts";
import { encodeFinishReason, encodeUsage } from "./encode-usage.ts";

/** The chat stream's last frame, after the usage chunk. */
const DONE: SseEvent[] = [{ data: "[DONE]" }];

export function createChunkEncoder(start: ResponseStart): StreamEncoder {
  return new ChunkEncoder(start);
}

/** One object per stream, its state in fields: an open stream keeps no set of closures. */
class ChunkEncoder implements StreamEncoder {
  // Of the start event, what the chunks show (not its routing trace, kept for the stream's life).
  private readonly id: string;
  private readonly model: string;
  private readonly provider: string;
  private readonly created: number;
  // The frame of every text delta, as `delta({ content })` spells it, without building and
  // stringifying its objects per event: only the text is encoded.
  private readonly contentHead: string;
  // Tool calls are numbered among themselves in the chat format, and so are
  // reasoning blocks (the `index` of their `reasoning_details` entries): the
  // tracker's ordinals. Media bytes are sent whole when their block stops. Text
  // goes out delta by delta, so the tracker gathers only the media bytes.
  private readonly blocks = createBlockTracker({ gather: "media" });
  private usage: Usage | undefined;
  /** The cache's fields (`cached`, `similarity`), on the first chunk and the usage chunk. */
  private readonly cache: CacheFields;

  constructor(start: ResponseStart) {
    this.cache = cacheFields(start);
    this.id = start.id;
    this.model = start.model;
    this.provider = start.provider;
    this.created = Number(start.created);
    // Flat, not a rope of its pieces: it lives as long as the stream.
    this.contentHead = flat(`${JSON.stringify({ id: start.id, object: "chat.completion.chunk", created: this.created, model: start.model, provider: start.provider }).slice(0, -1)},"choices":[{"index":0,"delta":{"content":`);
  }

  private chunk(choices: unknown[], extra: object = {}): SseEvent {
    const { id, created, model, provider } = this;
    return { data: JSON.stringify({ id, object: "chat.completion.chunk", created, model, provider, choices, ...extra }) };
  }

  private delta(value: Record<string, unknown>): SseEvent {
    return this.chunk([{ index: 0, delta: value, finish_reason: null }]);
  }

  encode(response: GenerateResponse): SseEvent[] {
    const { event } = response;
    switch (event.case) {
      case "start":
        return [this.chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }], this.cache)];
      case "blockStart": {
        const block = this.blocks.track(response)!;
        if (block.type !== BlockType.TOOL_CALL) return [];
        return [
          this.delta({
            tool_calls: [{ index: block.ordinal, id: block.start.toolCallId, type: "function", function: { name: block.start.toolName, arguments: "" } }],
          }),
        ];
      }
      case "blockDelta": {
        const block = this.blocks.track(response);
        if (!block) return [];
        const { text, signature, redactedData } = event.value;
        if (block.type === BlockType.REASONING) {
          // The same objects as the answer's `message.reasoning` and `message.reasoning_details`,
          // field by field; each piece names its block, so the signature arrives for the right one.
          if (!text && !signature && !redactedData) return [];
          return [
            this.delta({
              reasoning: { text, ...(signature && { signature }), ...(redactedData && { redacted: [redactedData] }) },
              reasoning_details: [encodeReasoningDetail({ text, signature, redactedData }, block.ordinal)],
            }),
          ];
        }
        if (!text) return [];
        switch (block.type) {
          case BlockType.TEXT:
            return [{ data: this.contentHead + JSON.stringify(text) + CONTENT_TAIL }];
          case BlockType.REFUSAL:
            return [this.delta({ refusal: text })];
          case BlockType.TOOL_CALL:
            return [this.delta({ tool_calls: [{ index: block.ordinal, function: { arguments: text } }] })];
          default:
            return [];
        }
      }
      case "blockStop": {
        const block = this.blocks.track(response);
        switch (block?.type) {
          case BlockType.IMAGE:
            return [this.delta({ images: [imageOf(block.start.mimeType, block.data)] })];
          case BlockType.AUDIO:
            return [this.delta({ audio: audioOf(`audio_${this.id}`, this.created, block.start.mimeType, block.data) })];
          default:
            return [];
        }
      }
      case "annotation":
        // Ranges are only known once the text is whole, so a streamed citation carries those the provider gave.
        return [this.delta({ annotations: [encodeStreamedAnnotation(event.value)] })];
      case "usage":
        this.usage = event.value;
        return [];
      case "finish":
        return [
          this.chunk([{ index: 0, delta: {}, finish_reason: encodeFinishReason(event.value.reason) ?? "stop" }]),
          this.chunk([], { usage: encodeUsage(this.usage, { id: this.id, provider: this.provider }), ...this.cache }),
        ];
      default:
        return [];
    }
  }

  done(): SseEvent[] {
    return DONE;
  }

  error(error: PublicError): SseEvent[] {
    return encodeChatStreamError(error);
  }
}

const CONTENT_TAIL = '},"finish_reason":null}]}';

/** The string as one flat piece (V8 flattens a rope it is asked to index). */
function flat(text: string): string {
  text.charCodeAt(0);
  return text;
}
