// The block lifecycle every provider translator owes the hub, written once:
// indexes handed out 0, 1, 2, ... as blocks start; a text, reasoning or
// refusal block continues until another kind of content starts; every block
// stopped before usage and finish; finish last.
//
// The writer emits the hub's own events (router.v1.GenerateResponse), built as
// plain message objects: no copy between an adapter vocabulary and the proto,
// and no reflective `create()` on the per-delta path.
import { create, type JsonObject } from "@bufbuild/protobuf";
import {
  AnnotationSchema,
  BlockType,
  FinishReason,
  UsageSchema,
  type Annotation,
  type GenerateResponse,
  type ModalityTokens,
} from "../../gen/router/v1/inference_pb.js";

const NO_BYTES = new Uint8Array(0);

/** What a translator calls an open block by: the provider's index or id for it. */
export type BlockKey = string | number;

/** How a block that does not continue (tool call, media, server tool) starts. */
export interface BlockOpening {
  /** The provider's id for the block (tool call id, server tool id), when it has one; the core makes one otherwise. */
  id?: string;
  toolCallId?: string;
  toolName?: string;
  mimeType?: string;
  serverToolName?: string;
  serverToolCallId?: string;
}

/** A cited source; `blockIndex` ties it to the block whose text cites it. */
export type AnnotationInit = Pick<Annotation, "url" | "title"> & Partial<Pick<Annotation, "startIndex" | "endIndex" | "content" | "blockIndex">>;

/** Token counts as a translator reads them; the writer makes the proto Usage. */
export interface UsageInit {
  /** Prompt tokens, cached and cache-write included. */
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  /** The share of cacheWriteTokens kept an hour. */
  cacheWrite1hTokens?: number;
  /** Completion tokens, reasoning included. */
  outputTokens: number;
  reasoningTokens: number;
  inputByModality?: ModalityTokens[];
  outputByModality?: ModalityTokens[];
  /** The provider's usage object, unchanged. */
  raw?: JsonObject;
}

export interface FinishInit {
  reason: FinishReason;
  /** The provider's own value. */
  rawReason: string;
  /** The stop sequence that ended the answer, when the provider says. */
  stopSequence?: string;
  /** The provider's own id of the answer, when it keeps it (Finish.upstream_id). */
  upstreamId?: string;
}

export class BlockWriter {
  private pending: GenerateResponse[] = [];
  private nextIndex = 0;
  /** The open block that continues (text, reasoning, refusal), if any. */
  private continuing: { key: string; index: number } | undefined;
  /**
   * Other open blocks (tool calls: OpenAI-style streams keep several open; media; server tools),
   * with their keys. Made at the first such block: a text answer needs neither map.
   */
  private open: Map<number, BlockKey | undefined> | undefined;
  private openByKey: Map<BlockKey, number> | undefined;
  /** The latest text block, for annotations that cite the answer's text. */
  private lastTextIndex: number | undefined;

  /** The events written since the last take (a translator returns them per chunk). */
  take(): GenerateResponse[] {
    const events = this.pending;
    this.pending = [];
    return events;
  }

  /**
   * The index of the open block of this kind (`key` tells apart blocks of one
   * type, defaults to the type), or a new one: starting it stops every open block.
   */
  continueBlock(type: BlockType, key: string = BLOCK_KEYS[type] ?? String(type)): number {
    if (this.continuing?.key === key) return this.continuing.index;
    this.stopAll();
    const index = this.begin(type, undefined);
    this.continuing = { key, index };
    return index;
  }

  /**
   * Starts a block that does not continue: the continuing block stops, other
   * open blocks stay open (parallel tool calls of an OpenAI-style stream). A
   * key finds the block again while it is open (see openIndex).
   */
  startBlock(type: BlockType, opening: BlockOpening, key?: BlockKey): number {
    this.stopContinuing();
    const index = this.begin(type, opening);
    (this.open ??= new Map()).set(index, key);
    if (key !== undefined) (this.openByKey ??= new Map()).set(key, index);
    return index;
  }

  /** The index of the open block started with this key, if it is still open. */
  openIndex(key: BlockKey): number | undefined {
    return this.openByKey?.get(key);
  }

  /** A whole block at once (Gemini's function calls and media, the simulator's tool call). */
  wholeBlock(type: BlockType, opening: BlockOpening, text: string, data: Uint8Array = NO_BYTES): number {
    const index = this.startBlock(type, opening);
    this.delta(index, text, "", "", data);
    this.stopBlock(index);
    return index;
  }

  text(index: number, text: string): void {
    this.pending.push(textDelta(index, text));
  }

  signature(index: number, signature: string): void {
    this.delta(index, "", signature, "", NO_BYTES);
  }

  redactedData(index: number, redactedData: string): void {
    this.delta(index, "", "", redactedData, NO_BYTES);
  }

  data(index: number, data: Uint8Array): void {
    this.pending.push(dataDelta(index, data));
  }

  stopBlock(index: number): void {
    if (this.continuing?.index === index) this.continuing = undefined;
    else if (this.open?.has(index)) {
      const key = this.open.get(index);
      this.open.delete(index);
      if (key !== undefined) this.openByKey?.delete(key);
    } else return;
    this.pending.push({ $typeName: "router.v1.GenerateResponse", event: { case: "blockStop", value: { $typeName: "router.v1.BlockStop", index } } });
  }

  /** Stops every open block, in the order they started. */
  stopAll(): void {
    this.stopContinuing();
    if (this.open) for (const index of this.open.keys()) this.stopBlock(index);
  }

  /** A cited source; without a block of its own it is tied to the latest text block, when there is one. */
  annotation(init: AnnotationInit): void {
    const value = create(AnnotationSchema, init);
    if (init.blockIndex === undefined && this.lastTextIndex !== undefined) value.blockIndex = this.lastTextIndex;
    this.pending.push({ $typeName: "router.v1.GenerateResponse", event: { case: "annotation", value } });
  }

  /** Ends the answer: stops open blocks, then usage (when known) and finish. */
  end(usage: UsageInit | undefined, finish: FinishInit): void {
    this.stopAll();
    if (usage) this.pending.push({ $typeName: "router.v1.GenerateResponse", event: { case: "usage", value: create(UsageSchema, usage) } });
    this.pending.push({
      $typeName: "router.v1.GenerateResponse",
      event: {
        case: "finish",
        value: { $typeName: "router.v1.Finish", reason: finish.reason, rawReason: finish.rawReason, stopSequence: finish.stopSequence ?? "", upstreamId: finish.upstreamId ?? "" },
      },
    });
  }

  private stopContinuing(): void {
    if (this.continuing) this.stopBlock(this.continuing.index);
  }

  private begin(type: BlockType, opening: BlockOpening | undefined): number {
    const index = this.nextIndex++;
    if (type === BlockType.TEXT) this.lastTextIndex = index;
    this.pending.push({
      $typeName: "router.v1.GenerateResponse",
      event: {
        case: "blockStart",
        value: {
          $typeName: "router.v1.BlockStart",
          index,
          type,
          // The core fills an empty id (from the request id and the index) when it relays the block.
          id: opening?.id ?? opening?.toolCallId ?? "",
          toolCallId: opening?.toolCallId ?? "",
          toolName: opening?.toolName ?? "",
          mimeType: opening?.mimeType ?? "",
          serverToolName: opening?.serverToolName ?? "",
          serverToolCallId: opening?.serverToolCallId ?? "",
        },
      },
    });
    return index;
  }

  private delta(index: number, text: string, signature: string, redactedData: string, data: Uint8Array): void {
    this.pending.push(blockDelta(index, text, signature, redactedData, data));
  }
}

function blockDelta(index: number, text: string, signature: string, redactedData: string, data: Uint8Array): GenerateResponse {
  return { $typeName: "router.v1.GenerateResponse", event: { case: "blockDelta", value: { $typeName: "router.v1.BlockDelta", index, text, signature, redactedData, data } } };
}

/**
 * A text delta as one event, for a generator that yields each delta as it
 * comes (the simulator) rather than taking the writer's events per chunk.
 */
export function textDelta(index: number, text: string): GenerateResponse {
  return blockDelta(index, text, "", "", NO_BYTES);
}

/** A media delta as one event (see textDelta). */
export function dataDelta(index: number, data: Uint8Array): GenerateResponse {
  return blockDelta(index, "", "", "", data);
}

const BLOCK_KEYS: Partial<Record<BlockType, string>> = {
  [BlockType.TEXT]: "text",
  [BlockType.REASONING]: "reasoning",
  [BlockType.REFUSAL]: "refusal",
};
