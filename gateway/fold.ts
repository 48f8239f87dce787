// The non-streaming answer is the fold of the event stream: written once here,
// used by every format's JSON encoder. The blocks are the block tracker's.
import {
  type Annotation,
  FinishReason,
  type GenerateResponse,
  type ResponseStart,
  type Usage,
} from "../gen/router/v1/inference_pb.js";
import { createBlockTracker, type TrackedBlock } from "./block-tracker.ts";

/** A block of the folded answer: whole, as the tracker gathered it. */
export type FoldedBlock = TrackedBlock;

export interface FoldedResponse {
  start: ResponseStart;
  blocks: readonly FoldedBlock[];
  usage: Usage | undefined;
  /** Every annotation, in order (those naming a block are also on that block). */
  annotations: Annotation[];
  finishReason: FinishReason;
  rawFinishReason: string;
  /** The stop sequence that ended the answer, when one did. */
  stopSequence: string;
}

/** Folds the events after the start into one answer. */
export async function foldEvents(start: ResponseStart, rest: AsyncIterator<GenerateResponse>): Promise<FoldedResponse> {
  const tracker = createBlockTracker({ keepStoppedBlocks: true });
  const folded: FoldedResponse = {
    start,
    blocks: tracker.blocks,
    usage: undefined,
    annotations: [],
    finishReason: FinishReason.UNSPECIFIED,
    rawFinishReason: "",
    stopSequence: "",
  };
  for (let step = await rest.next(); !step.done; step = await rest.next()) {
    const response = step.value;
    tracker.track(response);
    const { event } = response;
    switch (event.case) {
      case "annotation":
        folded.annotations.push(event.value);
        break;
      case "usage":
        folded.usage = event.value;
        break;
      case "finish":
        folded.finishReason = event.value.reason;
        folded.rawFinishReason = event.value.rawReason;
        folded.stopSequence = event.value.stopSequence;
        break;
    }
  }
  return folded;
}
