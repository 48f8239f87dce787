// The content blocks of an answer, followed through their start, deltas and
// stop. One tracker serves the fold (the whole answer at once) and every
// stream encoder (a block's state when it stops), so each piece of a block is
// gathered in exactly one place.
import type { Annotation, BlockStart, BlockType, GenerateResponse } from "../gen/router/v1/inference_pb.js";

export interface TrackedBlock {
  /** The block's start event: its index, id, tool call id and name, media type, server tool fields. */
  readonly start: BlockStart;
  readonly type: BlockType;
  /** The block's place among the answer's blocks of its type: the first tool call is 0, the second 1. */
  readonly ordinal: number;
  /** Text, reasoning text, a tool call's JSON arguments, a refusal or a server tool's JSON, as gathered so far. */
  text: string;
  /** Reasoning blocks: the provider's signature, or its redacted reasoning. */
  signature: string;
  redactedData: string;
  /** Media blocks: the bytes, in the pieces they came in (joined once, by the encoder). */
  data: Uint8Array[];
  /** The sources this block's text cites (annotations that name their block). */
  annotations: Annotation[];
  stopped: boolean;
}

export interface BlockTracker {
  /**
   * Follows one event. For a block's start, delta or stop, returns that block
   * with the event applied; for other events, and for an index that is not
   * open, returns undefined.
   */
  track(response: GenerateResponse): TrackedBlock | undefined;
  /** Every block started, in order: kept only with `keepStoppedBlocks` (otherwise empty). */
  readonly blocks: readonly TrackedBlock[];
}

export interface BlockTrackerOptions {
  /**
   * Keep blocks after their stop, in `blocks` (the fold; a stream whose last
   * event repeats the whole answer). Without it a block is let go at its stop,
   * so a long stream holds only its open blocks (media bytes included).
   */
  keepStoppedBlocks?: boolean;
  /**
   * What a block gathers: "all" (the default; the fold, and an encoder that
   * reads a block whole at its stop) gathers text, signature, redacted
   * reasoning, media bytes and annotations; "media" gathers only media bytes
   * (an encoder that sends each delta's text as it comes and needs a block
   * whole only for its media, as chat's stream does): text, signature and
   * redactedData stay empty and annotations are not gathered, so a long open
   * block holds none of its text. Start, type and ordinal are always kept.
   */
  gather?: "all" | "media";
}

export function createBlockTracker(options: BlockTrackerOptions = {}): BlockTracker {
  const open = new Map<number, TrackedBlock>();
  const blocks: TrackedBlock[] = [];
  // Blocks started so far, by type (indexed by the BlockType number).
  const startedByType: number[] = [];
  const gatherAll = (options.gather ?? "all") === "all";
  return {
    blocks,
    track({ event }) {
      switch (event.case) {
        case "blockStart": {
          const start = event.value;
          const ordinal = startedByType[start.type] ?? 0;
          startedByType[start.type] = ordinal + 1;
          const block: TrackedBlock = { start, type: start.type, ordinal, text: "", signature: "", redactedData: "", data: [], annotations: [], stopped: false };
          open.set(start.index, block);
          if (options.keepStoppedBlocks) blocks.push(block);
          return block;
        }
        case "blockDelta": {
          const block = open.get(event.value.index);
          if (!block) return undefined;
          const { data } = event.value;
          if (gatherAll) {
            // Appending builds a rope in V8: cheaper per delta than gathering pieces and joining at the stop.
            block.text += event.value.text;
            block.signature += event.value.signature;
            block.redactedData += event.value.redactedData;
          }
          if (data.length > 0) block.data.push(data);
          return block;
        }
        case "blockStop": {
          const block = open.get(event.value.index);
          if (!block) return undefined;
          open.delete(event.value.index);
          block.stopped = true;
          return block;
        }
        case "annotation": {
          const { blockIndex } = event.value;
          if (gatherAll && blockIndex !== undefined) (open.get(blockIndex) ?? blocks.findLast((b) => b.start.index === blockIndex))?.annotations.push(event.value);
          return undefined;
        }
        default:
          return undefined;
      }
    },
  };
}
