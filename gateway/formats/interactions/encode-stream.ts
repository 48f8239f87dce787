// The Interactions event stream, Google's wire: every frame a `data:` JSON
// object told apart by its `event_type` and named by its `event_id`:
// interaction.created and interaction.status_update, then per step step.start,
// its step.delta frames (text, thought_summary, thought_signature,
// arguments_delta, image, video) and step.stop, then interaction.completed with the
// whole interaction, and `data: [DONE]`. While no step has started (an upstream
// making a video in the background) a silent stream repeats its status update. Each hub block is one step, and steps
// go out one after the other (StepSequence); blocks the format has no step for
// (server tools, audio) are not counted. An event's
// id is its place in the answer (event-position.ts): given `resumeAfter`, the
// encoder leaves out every frame up to that place and cuts the delta it falls
// inside, which is how a stream is resumed (replay-stream.ts).
import { BlockType, type ResponseStart, type Usage } from "../../../gen/router/v1/inference_pb.js";
import { createBlockTracker, type TrackedBlock } from "../../block-tracker.ts";
import type { PublicError } from "../../errors/http-status.ts";
import type { SseEvent } from "../../sse.ts";
import type { StreamEncoder } from "../../write-event-stream.ts";
import { signatureOf } from "../../formats/shared/reasoning-signature.ts";
import { errorOf } from "./encode-error.ts";
import { encodeInteraction, pieceOfBlock, stepsOf, type InteractionHead } from "./encode-response.ts";
import { comparePositions, eventIdOf, type EventPosition } from "./event-position.ts";

export interface InteractionStreamOptions {
  previousInteractionId: string | undefined;
  now: () => Date;
  /** Leave out every event up to this one (a resumed stream). */
  resumeAfter?: EventPosition;
  /** The stored interaction's own head for the last event (a replayed stream), instead of one made now. */
  storedHead?: InteractionHead;
}

/** One delta's content: its size in the step's offsets, and the delta from a point inside it to its end. */
interface DeltaContent {
  size: number;
  from(start: number): object;
}

export function createInteractionStreamEncoder(start: ResponseStart, { previousInteractionId, now, resumeAfter, storedHead }: InteractionStreamOptions): StreamEncoder {
  // The completed event repeats the whole answer: its blocks are kept.
  const tracker = createBlockTracker({ keepStoppedBlocks: true });
  /** This format's step index of each started block, by hub block index. */
  const stepOf = new Map<number, number>();
  const steps = new StepSequence();
  /** Each open step's content delivered so far (its offset). */
  const offsetOf = new Map<number, number>();
  let nextStep = 0;
  let usage: Usage | undefined;
  const created = new Date(Number(start.created) * 1000);

  const isResumed = (position: EventPosition) => resumeAfter !== undefined && comparePositions(position, resumeAfter) <= 0;
  const frame = (eventType: string, fields: object, position: EventPosition): SseEvent[] =>
    isResumed(position) ? [] : [{ data: JSON.stringify({ event_type: eventType, ...fields, event_id: eventIdOf(position) }) }];

  /** A step's deltas, each named by the offset it ends at; one the resumed stream had part of starts where it stopped. */
  const deltaFrames = (index: number, contents: DeltaContent[]): SseEvent[] =>
    contents.flatMap((content) => {
      const begin = offsetOf.get(index) ?? 0;
      const end = begin + content.size;
      offsetOf.set(index, end);
      const position: EventPosition = { kind: "step", step: index, offset: end };
      const seen = resumeAfter?.kind === "step" && resumeAfter.step === index && resumeAfter.offset > begin && resumeAfter.offset < end ? resumeAfter.offset - begin : 0;
      return frame("step.delta", { index, delta: content.from(seen) }, position);
    });

  const stepStart = (block: TrackedBlock): object | undefined => {
    switch (block.type) {
      case BlockType.TEXT:
      case BlockType.REFUSAL:
      case BlockType.IMAGE:
      case BlockType.VIDEO:
        return { type: "model_output" };
      case BlockType.REASONING:
        return { type: "thought" };
      case BlockType.TOOL_CALL:
        return { type: "function_call", id: block.start.toolCallId, name: block.start.toolName, arguments: {} };
      default:
        return undefined;
    }
  };

  const deltas = (block: TrackedBlock, delta: { text: string; signature: string; data: Uint8Array }): DeltaContent[] => {
    switch (block.type) {
      case BlockType.TEXT:
      case BlockType.REFUSAL:
        return delta.text ? [textContent(delta.text, (text) => ({ type: "text", text }))] : [];
      case BlockType.REASONING: {
        const out: DeltaContent[] = [];
        if (delta.text) out.push(textContent(delta.text, (text) => ({ type: "thought_summary", content: { type: "text", text } })));
        // The protocol prefix goes before the first piece only (a resumed piece had it already).
        const first = block.signature === delta.signature;
        if (delta.signature) out.push(textContent(delta.signature, (signature, whole) => ({ type: "thought_signature", signature: first && whole ? signatureOf(signature, start) : signature })));
        return out;
      }
      case BlockType.TOOL_CALL:
        return delta.text ? [textContent(delta.text, (text) => ({ type: "arguments_delta", arguments: text }))] : [];
      case BlockType.IMAGE:
      case BlockType.VIDEO: {
        const type = block.type === BlockType.IMAGE ? "image" : "video";
        return delta.data.length ? [{ size: delta.data.length, from: (begin) => ({ type, data: Buffer.from(delta.data.subarray(begin)).toString("base64"), mime_type: block.start.mimeType }) }] : [];
      }
      default:
        return [];
    }
  };

  return {
    encode(event) {
      const { event: e } = event;
      switch (e.case) {
        case "start":
          return [
            ...frame("interaction.created", { interaction: { id: start.id, object: "interaction", status: "in_progress", model: start.model, created: created.toISOString() } }, { kind: "created" }),
            ...frame("interaction.status_update", { interaction_id: start.id, status: "in_progress" }, { kind: "status" }),
          ];
        case "blockStart": {
          const block = tracker.track(event)!;
          const step = stepStart(block);
          if (!step) return [];
          const index = nextStep++;
          stepOf.set(block.start.index, index);
          return steps.emit(index, frame("step.start", { index, step }, { kind: "stepStart", step: index }));
        }
        case "blockDelta": {
          const block = tracker.track(event);
          const index = block && stepOf.get(block.start.index);
          if (index === undefined) return [];
          return steps.emit(index, deltaFrames(index, deltas(block!, e.value)));
        }
        case "blockStop": {
          const block = tracker.track(event);
          const index = block && stepOf.get(block.start.index);
          if (index === undefined) return [];
          offsetOf.delete(index);
          return steps.stop(index, frame("step.stop", { index }, { kind: "stepStop", step: index }));
        }
        case "usage":
          usage = e.value;
          return [];
        case "finish": {
          const head = storedHead ?? { id: start.id, model: start.model, created, updated: now(), previousInteractionId };
          const steps = stepsOf(tracker.blocks.flatMap(pieceOfBlock), start);
          return frame("interaction.completed", { interaction: encodeInteraction(head, steps, usage, start.id) }, { kind: "completed" });
        }
        default:
          tracker.track(event);
          return [];
      }
    },
    done: () => [{ data: "[DONE]" }],
    error: (error: PublicError) => frame("error", { error: errorOf(error) }, { kind: "error" }),
    // The status again while the upstream works before any step (a video made in the background); after a step
    // it would break the ids' order (event-position.ts), and a step's own frames show the stream is alive.
    keepAlive: () => (nextStep === 0 ? frame("interaction.status_update", { interaction_id: start.id, status: "in_progress" }, { kind: "status" }) : []),
  };
}

/**
 * Steps one after the other: a step's frames wait while an earlier step is
 * open (parallel tool calls stream side by side), and come when it stops. So
 * the stream's order is the order of its event ids, and a client resumed
 * after any of them has seen everything before it.
 */
class StepSequence {
  /** The step whose frames go out as they come; the later ones wait. */
  private current = 0;
  private readonly waiting = new Map<number, SseEvent[]>();
  private readonly stopped = new Set<number>();

  emit(step: number, frames: SseEvent[]): SseEvent[] {
    if (step === this.current) return frames;
    const held = this.waiting.get(step);
    if (held) held.push(...frames);
    else this.waiting.set(step, [...frames]);
    return [];
  }

  stop(step: number, frames: SseEvent[]): SseEvent[] {
    this.stopped.add(step);
    const out = this.emit(step, frames);
    // The current step ended: the next ones' held frames go now, up to one still open.
    while (this.stopped.has(this.current)) {
      this.stopped.delete(this.current);
      this.current++;
      out.push(...(this.waiting.get(this.current) ?? []));
      this.waiting.delete(this.current);
    }
    return out;
  }
}

/** Text content: its size in UTF-16 units (JavaScript's own, which is what a client's string holds), cut at a point in it. */
function textContent(text: string, delta: (text: string, whole: boolean) => object): DeltaContent {
  return { size: text.length, from: (begin) => delta(text.slice(begin), begin === 0) };
}
