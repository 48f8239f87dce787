// The Interactions event stream, Google's wire: every frame a `data:` JSON
// object told apart by its `event_type` and numbered by its `event_id`:
// interaction.created and interaction.status_update, then per step step.start,
// its step.delta frames (text, thought_summary, thought_signature,
// arguments_delta, image) and step.stop, then interaction.completed with the
// whole interaction, and `data: [DONE]`. Each hub block is one step; blocks
// the format has no step for (server tools, audio) are not counted.
import { BlockType, type ResponseStart, type Usage } from "../../../gen/router/v1/inference_pb.js";
import { createBlockTracker, type TrackedBlock } from "../../block-tracker.ts";
import type { PublicError } from "../../errors/http-status.ts";
import type { SseEvent } from "../../sse.ts";
import type { StreamEncoder } from "../../write-event-stream.ts";
import { signatureOf } from "../../formats/shared/reasoning-signature.ts";
import { errorOf } from "./encode-error.ts";
import { encodeInteraction, pieceOfBlock, stepsOf } from "./encode-response.ts";

export function createInteractionStreamEncoder(start: ResponseStart, previousInteractionId: string | undefined, now: () => Date): StreamEncoder {
  // The completed event repeats the whole answer: its blocks are kept.
  const tracker = createBlockTracker({ keepStoppedBlocks: true });
  /** This format's step index of each started block, by hub block index. */
  const stepOf = new Map<number, number>();
  let nextStep = 0;
  let nextEvent = 0;
  let usage: Usage | undefined;
  const created = new Date(Number(start.created) * 1000);

  const frame = (eventType: string, fields: object): SseEvent => ({ data: JSON.stringify({ event_type: eventType, ...fields, event_id: String(nextEvent++) }) });

  const stepStart = (block: TrackedBlock): object | undefined => {
    switch (block.type) {
      case BlockType.TEXT:
      case BlockType.REFUSAL:
      case BlockType.IMAGE:
        return { type: "model_output" };
      case BlockType.REASONING:
        return { type: "thought" };
      case BlockType.TOOL_CALL:
        return { type: "function_call", id: block.start.toolCallId, name: block.start.toolName, arguments: {} };
      default:
        return undefined;
    }
  };

  const deltas = (block: TrackedBlock, delta: { text: string; signature: string; data: Uint8Array }): object[] => {
    switch (block.type) {
      case BlockType.TEXT:
      case BlockType.REFUSAL:
        return delta.text ? [{ type: "text", text: delta.text }] : [];
      case BlockType.REASONING: {
        const out: object[] = [];
        if (delta.text) out.push({ type: "thought_summary", content: { type: "text", text: delta.text } });
        // The protocol prefix goes before the first piece only.
        if (delta.signature) out.push({ type: "thought_signature", signature: block.signature === delta.signature ? signatureOf(delta.signature, start) : delta.signature });
        return out;
      }
      case BlockType.TOOL_CALL:
        return delta.text ? [{ type: "arguments_delta", arguments: delta.text }] : [];
      case BlockType.IMAGE:
        return delta.data.length ? [{ type: "image", data: Buffer.from(delta.data).toString("base64"), mime_type: block.start.mimeType }] : [];
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
            frame("interaction.created", { interaction: { id: start.id, object: "interaction", status: "in_progress", model: start.model, created: created.toISOString() } }),
            frame("interaction.status_update", { interaction_id: start.id, status: "in_progress" }),
          ];
        case "blockStart": {
          const block = tracker.track(event)!;
          const step = stepStart(block);
          if (!step) return [];
          const index = nextStep++;
          stepOf.set(block.start.index, index);
          return [frame("step.start", { index, step })];
        }
        case "blockDelta": {
          const block = tracker.track(event);
          const index = block && stepOf.get(block.start.index);
          if (index === undefined) return [];
          return deltas(block!, e.value).map((delta) => frame("step.delta", { index, delta }));
        }
        case "blockStop": {
          const block = tracker.track(event);
          const index = block && stepOf.get(block.start.index);
          return index === undefined ? [] : [frame("step.stop", { index })];
        }
        case "usage":
          usage = e.value;
          return [];
        case "finish": {
          const head = { id: start.id, model: start.model, created, updated: now(), previousInteractionId };
          const steps = stepsOf(tracker.blocks.flatMap(pieceOfBlock), start);
          return [frame("interaction.completed", { interaction: encodeInteraction(head, steps, usage, start.id) })];
        }
        default:
          tracker.track(event);
          return [];
      }
    },
    done: () => [{ data: "[DONE]" }],
    error: (error: PublicError) => [frame("error", { error: errorOf(error) })],
  };
}
