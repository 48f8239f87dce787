// The non-streaming answer is the fold of the event stream: written once here,
// used by every format's JSON encoder.
import {
  BlockType,
  type Annotation,
  FinishReason,
  type GenerateResponse,
  type ResponseStart,
  type Usage,
} from "../gen/router/v1/inference_pb.js";

export interface FoldedBlock {
  type: BlockType;
  text: string;
  toolCallId: string;
  toolName: string;
  /** Reasoning blocks: the provider's signature, or its redacted reasoning. */
  signature: string;
  redactedData: string;
  /** Media blocks: the type and the bytes. */
  mimeType: string;
  data: Uint8Array[];
}

export interface FoldedResponse {
  start: ResponseStart;
  blocks: FoldedBlock[];
  usage: Usage | undefined;
  annotations: Annotation[];
  finishReason: FinishReason;
  rawFinishReason: string;
}

/** Folds the events after the start into one answer. */
export async function foldEvents(start: ResponseStart, rest: AsyncIterator<GenerateResponse>): Promise<FoldedResponse> {
  const folded: FoldedResponse = { start, blocks: [], usage: undefined, annotations: [], finishReason: FinishReason.UNSPECIFIED, rawFinishReason: "" };
  const byIndex = new Map<number, FoldedBlock>();
  for (let step = await rest.next(); !step.done; step = await rest.next()) {
    const { event } = step.value;
    switch (event.case) {
      case "blockStart": {
        const { type, toolCallId, toolName, mimeType } = event.value;
        const block: FoldedBlock = { type, text: "", toolCallId, toolName, signature: "", redactedData: "", mimeType, data: [] };
        byIndex.set(event.value.index, block);
        folded.blocks.push(block);
        break;
      }
      case "blockDelta": {
        const block = byIndex.get(event.value.index);
        if (block) {
          block.text += event.value.text;
          block.signature += event.value.signature;
          block.redactedData += event.value.redactedData;
          if (event.value.data.length > 0) block.data.push(event.value.data);
        }
        break;
      }
      case "annotation":
        folded.annotations.push(event.value);
        break;
      case "usage":
        folded.usage = event.value;
        break;
      case "finish":
        folded.finishReason = event.value.reason;
        folded.rawFinishReason = event.value.rawReason;
        break;
    }
  }
  return folded;
}
