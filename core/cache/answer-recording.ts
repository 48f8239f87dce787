// A miss's answer as the semantic cache keeps it (CachedAnswer): the hub's
// events after the start, gathered as they are relayed, kept only when the
// answer finished well.
import { create } from "@bufbuild/protobuf";
import { BlockType, CachedAnswerSchema, FinishReason, type CachedAnswer, type GenerateResponse, type ResponseStart } from "../../gen/router/v1/inference_pb.js";

/**
 * Gathers a miss's answer as relayed, for the cache to keep once it has
 * finished: only a complete answer that was neither refused nor failed, and
 * not beyond the size an entry may have (gathering stops there).
 */
export class AnswerRecording {
  private readonly events: GenerateResponse[] = [];
  private bytes = 0;
  private readonly maxBytes: number;
  private spoiled = false;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  observe(response: GenerateResponse): void {
    if (this.spoiled) return;
    const { event } = response;
    if (event.case === "blockStart" && event.value.type === BlockType.REFUSAL) return this.spoil();
    if (event.case === "blockDelta") this.bytes += event.value.text.length * 3 + event.value.data.length + event.value.signature.length;
    if (this.bytes > this.maxBytes) return this.spoil();
    this.events.push(response);
  }

  /** The answer to keep, or undefined when it must not be kept. */
  finished(start: ResponseStart): CachedAnswer | undefined {
    if (this.spoiled) return undefined;
    const finish = this.events.at(-1)?.event;
    if (finish?.case !== "finish") return undefined;
    if (finish.value.reason === FinishReason.CONTENT_FILTER || finish.value.reason === FinishReason.ERROR) return undefined;
    return create(CachedAnswerSchema, { id: start.id, modelId: start.modelId, provider: start.provider, protocol: start.protocol, nativeFormat: start.nativeFormat, events: this.events });
  }

  private spoil() {
    this.spoiled = true;
    this.events.length = 0;
  }
}
