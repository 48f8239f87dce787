// Translates the Interactions event stream into the hub's block events. Each
// SSE frame is one InteractionSSEEvent, told apart by its `event_type`:
// interaction.created and interaction.status_update, then per step
// step.start, its step.delta frames and step.stop, then interaction.completed
// with the interaction's final status and usage (and `data: [DONE]`). A whole
// Interaction (a JSON answer) reads as its completed event, its steps whole.
//
// Steps map to blocks:
// - `thought`: reasoning, its `thought_summary` text and its
//   `thought_signature` (also when only the signature comes: the next turn
//   needs it back);
// - `model_output`: `text` continues one text block per step; an `image` is one
//   whole image block; `audio` and `video` pieces of one step and type are one
//   block (their base64 decoded to bytes); content delivered as a URI only has
//   no bytes for the hub and is left out;
// - `function_call`: one tool-call block, its arguments from `arguments_delta`
//   fragments, or from the step itself when none come;
// - steps of Google's own tools (search, code execution, ...) are not asked
//   for by this protocol, and skipped.
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { BlockType } from "../../../gen/router/v1/inference_pb.js";
import { BlockWriter } from "../block-writer.ts";
import type { Translator } from "../http-exchange.ts";
import { convertUsage, interactionsUsageSchema, type InteractionsUsage } from "./convert-usage.ts";
import { FINAL_STATUSES, mapFinishReason } from "./map-finish-reason.ts";

const contentSchema = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  data: z.string().optional(),
  mime_type: z.string().optional(),
  uri: z.string().optional(),
});

const stepSchema = z.looseObject({
  type: z.string(),
  // function_call
  id: z.string().optional(),
  name: z.string().optional(),
  arguments: z.record(z.string(), z.unknown()).nullish(),
  // thought
  signature: z.string().optional(),
  summary: z.array(contentSchema).nullish(),
  // model_output
  content: z.array(contentSchema).nullish(),
});

/** StepDeltaData: the members this protocol reads (others are skipped by their step or their type). */
const deltaSchema = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  content: contentSchema.optional(),
  signature: z.string().optional(),
  arguments: z.string().optional(),
  data: z.string().optional(),
  mime_type: z.string().optional(),
  uri: z.string().optional(),
});

export const interactionSchema = z.looseObject({
  id: z.string().optional(),
  status: z.string().optional(),
  steps: z.array(stepSchema).nullish(),
  usage: interactionsUsageSchema.nullish(),
});

const index = z.number().int().nonnegative();

export const eventSchema = z.discriminatedUnion("event_type", [
  z.looseObject({ event_type: z.literal("interaction.created"), interaction: interactionSchema }),
  z.looseObject({ event_type: z.literal("interaction.completed"), interaction: interactionSchema }),
  z.looseObject({ event_type: z.literal("interaction.status_update"), status: z.string().optional(), usage: interactionsUsageSchema.nullish() }),
  z.looseObject({ event_type: z.literal("step.start"), index, step: stepSchema }),
  z.looseObject({ event_type: z.literal("step.delta"), index, delta: deltaSchema, metadata: z.looseObject({ total_usage: interactionsUsageSchema.nullish() }).nullish() }),
  z.looseObject({ event_type: z.literal("step.stop"), index, usage: interactionsUsageSchema.nullish() }),
]);

/** The event types eventSchema reads; others (added after this adapter) are skipped. */
export const KNOWN_EVENTS: ReadonlySet<string> = new Set(eventSchema.options.map((option) => option.shape.event_type.value));

export type InteractionsEvent = z.infer<typeof eventSchema>;
export type Interaction = z.infer<typeof interactionSchema>;
type Step = z.infer<typeof stepSchema>;
type Delta = z.infer<typeof deltaSchema>;

/** A whole Interaction (a JSON answer, or a later GET) as the event that ends a stream. */
export function interactionAsEvent(interaction: Interaction): InteractionsEvent {
  return { event_type: "interaction.completed", interaction };
}

/** What the translator keeps of a started step. */
interface OpenStep {
  type: string;
  /** The hub blocks it opened, to stop with it. */
  blocks: number[];
  /** function_call: its tool-call block, the arguments the step itself carried, and whether fragments came. */
  call?: { block: number; startArguments: Record<string, unknown> | undefined | null; streamed: boolean };
}

const MEDIA_BLOCKS: Record<string, BlockType> = { audio: BlockType.AUDIO, video: BlockType.VIDEO };

export function createEventTranslator(): Translator<InteractionsEvent> {
  const blocks = new BlockWriter();
  const steps = new Map<number, OpenStep>();
  // A call without an id (the API gives one; a stream cut and resumed may not) gets one unique across answers.
  const idPrefix = randomBytes(6).toString("hex");
  let generatedIds = 0;
  let sawSteps = false;
  let hasToolCalls = false;
  let status: string | undefined;
  let usage: InteractionsUsage | undefined;

  const opened = (step: OpenStep, block: number) => {
    if (!step.blocks.includes(block)) step.blocks.push(block);
    return block;
  };

  function startStep(position: number, step: Step) {
    sawSteps = true;
    const open: OpenStep = { type: step.type, blocks: [] };
    steps.set(position, open);
    switch (step.type) {
      case "thought":
        for (const content of step.summary ?? []) summary(position, open, content);
        if (step.signature) blocks.signature(opened(open, blocks.continueBlock(BlockType.REASONING, `thought:${position}`)), step.signature);
        return;
      case "model_output":
        for (const content of step.content ?? []) output(position, open, content);
        return;
      case "function_call": {
        hasToolCalls = true;
        const toolCallId = step.id || `call_${idPrefix}_${++generatedIds}`;
        const block = opened(open, blocks.startBlock(BlockType.TOOL_CALL, { toolCallId, toolName: step.name ?? "" }, `call:${position}`));
        open.call = { block, startArguments: step.arguments, streamed: false };
        return;
      }
      default:
        return;
    }
  }

  function summary(position: number, open: OpenStep, content: z.infer<typeof contentSchema>) {
    // A summary may hold an image; the hub's reasoning is text.
    if (content.type === "text" && content.text) blocks.text(opened(open, blocks.continueBlock(BlockType.REASONING, `thought:${position}`)), content.text);
  }

  /** One piece of model output: text, or media with its bytes. */
  function output(position: number, open: OpenStep, content: { type: string; text?: string; data?: string; mime_type?: string }) {
    if (content.type === "text") {
      if (content.text) blocks.text(opened(open, blocks.continueBlock(BlockType.TEXT, `text:${position}`)), content.text);
      return;
    }
    // A URI-only piece (delivery: uri) has no bytes the hub can carry.
    if (!content.data) return;
    const bytes = Buffer.from(content.data, "base64");
    const mimeType = content.mime_type ?? "";
    if (content.type === "image") {
      opened(open, blocks.wholeBlock(BlockType.IMAGE, { mimeType }, "", bytes));
      return;
    }
    const type = MEDIA_BLOCKS[content.type];
    if (type === undefined) return;
    // Streamed audio and video come in pieces: one block per step, type and media type.
    const key = `${content.type}:${mimeType}:${position}`;
    const block = blocks.openIndex(key) ?? opened(open, blocks.startBlock(type, { mimeType }, key));
    blocks.data(block, bytes);
  }

  function delta(position: number, piece: Delta) {
    const open = steps.get(position);
    if (!open) return;
    switch (open.type) {
      case "thought":
        if (piece.type === "thought_summary" && piece.content) summary(position, open, piece.content);
        else if (piece.type === "thought_signature" && piece.signature) blocks.signature(opened(open, blocks.continueBlock(BlockType.REASONING, `thought:${position}`)), piece.signature);
        return;
      case "model_output":
        output(position, open, piece);
        return;
      case "function_call":
        if (piece.type === "arguments_delta" && piece.arguments && open.call) {
          open.call.streamed = true;
          blocks.text(open.call.block, piece.arguments);
        }
        return;
      default:
        return;
    }
  }

  function stopStep(position: number) {
    const open = steps.get(position);
    if (!open) return;
    steps.delete(position);
    const { call } = open;
    // The arguments the step carried, when no fragments came (an empty object when it carried none).
    if (call && !call.streamed) blocks.text(call.block, JSON.stringify(call.startArguments ?? {}));
    for (const block of open.blocks) blocks.stopBlock(block);
  }

  function complete(interaction: Interaction) {
    if (!sawSteps) {
      // A whole interaction: its steps, each started and stopped at once.
      (interaction.steps ?? []).forEach((step, position) => {
        startStep(position, step);
        stopStep(position);
      });
    }
    if (interaction.status) status = interaction.status;
    if (interaction.usage) usage = interaction.usage;
  }

  return {
    translate(event) {
      switch (event.event_type) {
        case "step.start":
          startStep(event.index, event.step);
          break;
        case "step.delta":
          delta(event.index, event.delta);
          if (event.metadata?.total_usage) usage = event.metadata.total_usage;
          break;
        case "step.stop":
          stopStep(event.index);
          if (event.usage) usage = event.usage;
          break;
        case "interaction.status_update":
          if (event.usage) usage = event.usage;
          if (event.status && FINAL_STATUSES.has(event.status)) status = event.status;
          break;
        case "interaction.completed":
          complete(event.interaction);
          break;
        default:
          break;
      }
      return blocks.take();
    },
    complete: () => status !== undefined && usage !== undefined,
    end() {
      const raw = status ?? "completed";
      blocks.end(usage && convertUsage(usage), { reason: mapFinishReason(raw, hasToolCalls), rawReason: raw });
      return blocks.take();
    },
  };
}
