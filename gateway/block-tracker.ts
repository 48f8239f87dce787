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
  data: readonly Uint8Array[];
  /** The sources this block's text cites (annotations that name their block). */
  annotations: readonly Annotation[];
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
  return new Tracker(options);
}

/** No blocks kept (a tracker without `keepStoppedBlocks`). */
const NO_BLOCKS: readonly TrackedBlock[] = [];
/** A block's media bytes and annotations until it has some: most blocks are text and cite nothing. */
const NO_DATA: readonly Uint8Array[] = Object.freeze([]);
const NO_ANNOTATIONS: readonly Annotation[] = Object.freeze([]);
/** BlockType's values (0 to 9); a later one makes the counts grow. */
const BLOCK_TYPES = 10;

/**
 * One object per answer, its state in fields: a stream keeps no closures for it,
 * and the open blocks in a small array (an answer has one or a few open at once).
 */
class Tracker implements BlockTracker {
  readonly blocks: TrackedBlock[] | readonly TrackedBlock[];
  private open: TrackedBlock[] | undefined;
  // Blocks started so far, by type (indexed by the BlockType number); made at the first start.
  private startedByType: number[] | undefined;
  private readonly gatherAll: boolean;
  private readonly keepStoppedBlocks: boolean;

  constructor(options: BlockTrackerOptions) {
    this.keepStoppedBlocks = options.keepStoppedBlocks === true;
    this.blocks = this.keepStoppedBlocks ? [] : NO_BLOCKS;
    this.gatherAll = (options.gather ?? "all") === "all";
  }

  track({ event }: GenerateResponse): TrackedBlock | undefined {
    switch (event.case) {
      case "blockStart": {
        const start = event.value;
        const startedByType = (this.startedByType ??= new Array<number>(BLOCK_TYPES).fill(0));
        const ordinal = startedByType[start.type] ?? 0;
        startedByType[start.type] = ordinal + 1;
        const block: TrackedBlock = { start, type: start.type, ordinal, text: "", signature: "", redactedData: "", data: NO_DATA, annotations: NO_ANNOTATIONS, stopped: false };
        // An index started again replaces the open block (as a map by index would). Arrays of their exact size.
        const others = this.open?.filter((b) => b.start.index !== start.index);
        this.open = others?.length ? others.concat(block) : [block];
        if (this.keepStoppedBlocks) (this.blocks as TrackedBlock[]).push(block);
        return block;
      }
      case "blockDelta": {
        const block = this.openBlock(event.value.index);
        if (!block) return undefined;
        const { data } = event.value;
        if (this.gatherAll) {
          // Appending builds a rope in V8: cheaper per delta than gathering pieces and joining at the stop.
          block.text += event.value.text;
          block.signature += event.value.signature;
          block.redactedData += event.value.redactedData;
        }
        if (data.length > 0) block.data = block.data === NO_DATA ? [data] : pushed(block.data, data);
        return block;
      }
      case "blockStop": {
        const block = this.openBlock(event.value.index);
        if (!block) return undefined;
        this.open = this.open!.filter((b) => b !== block);
        block.stopped = true;
        return block;
      }
      case "annotation": {
        const { blockIndex } = event.value;
        if (!this.gatherAll || blockIndex === undefined) return undefined;
        const block = this.openBlock(blockIndex) ?? this.blocks.findLast((b) => b.start.index === blockIndex);
        if (block) block.annotations = block.annotations === NO_ANNOTATIONS ? [event.value] : pushed(block.annotations, event.value);
        return undefined;
      }
      default:
        return undefined;
    }
  }

  private openBlock(index: number): TrackedBlock | undefined {
    return this.open?.find((b) => b.start.index === index);
  }
}

/** The tracker's own array (never a shared empty one) with one more item. */
function pushed<T>(items: readonly T[], item: T): T[] {
  (items as T[]).push(item);
  return items as T[];
}
