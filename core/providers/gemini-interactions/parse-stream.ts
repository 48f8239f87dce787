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
import { checkShape, inStreamError, parseUpstreamJson, type Translator } from "../http-exchange.ts";
import { convertUsage, interactionsUsageSchema, type InteractionsUsage } from "./convert-usage.ts";
import { googleErrorMessage, streamErrorMessage } from "./map-error.ts";
import { FINAL_STATUSES, mapFinishReason } from "./map-finish-reason.ts";

/** Any member of a union whose type is not one of `known` (a step, content or delta this protocol skips). */
const otherThan = (known: string[]) => z.looseObject({ type: z.string().refine((type) => !known.includes(type)) });

const textContent = z.looseObject({ type: z.literal("text"), text: z.string() });
const mediaContent = z.looseObject({ type: z.enum(["image", "audio", "video"]), data: z.string().optional(), mime_type: z.string().optional(), uri: z.string().optional() });
/** Content this protocol reads (text and media); other content (documents) by its type only. */
const contentSchema = z.union([textContent, mediaContent, otherThan(["text", "image", "audio", "video"])]);

const thoughtStep = z.looseObject({ type: z.literal("thought"), signature: z.string().optional(), summary: z.array(contentSchema).nullish() });
const modelOutputStep = z.looseObject({ type: z.literal("model_output"), content: z.array(contentSchema).nullish() });
const functionCallStep = z.looseObject({ type: z.literal("function_call"), id: z.string().optional(), name: z.string(), arguments: z.record(z.string(), z.unknown()).nullish() });
/** Step: the members this protocol reads; the steps of Google's own tools (and any added later) by their type only. */
const stepSchema = z.union([thoughtStep, modelOutputStep, functionCallStep, otherThan(["thought", "model_output", "function_call"])]);

const thoughtSummaryDelta = z.looseObject({ type: z.literal("thought_summary"), content: contentSchema.optional() });
const thoughtSignatureDelta = z.looseObject({ type: z.literal("thought_signature"), signature: z.string().optional() });
const argumentsDelta = z.looseObject({ type: z.literal("arguments_delta"), arguments: z.string().optional() });
/** StepDeltaData: the members this protocol reads (content pieces are model output's deltas); others by their type only. */
const deltaSchema = z.union([
  textContent,
  mediaContent,
  thoughtSummaryDelta,
  thoughtSignatureDelta,
  argumentsDelta,
  otherThan(["text", "image", "audio", "video", "thought_summary", "thought_signature", "arguments_delta"]),
]);

type Content = z.infer<typeof contentSchema>;
type TextContent = z.infer<typeof textContent>;
type MediaContent = z.infer<typeof mediaContent>;

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
const KNOWN_EVENTS: ReadonlySet<string> = new Set(eventSchema.options.map((option) => option.shape.event_type.value));

export type InteractionsEvent = z.infer<typeof eventSchema>;
export type Interaction = z.infer<typeof interactionSchema>;
type Step = z.infer<typeof stepSchema>;
type Delta = z.infer<typeof deltaSchema>;

/**
 * One SSE event's data as an event (`[DONE]` and event types added after this
 * adapter are none), or a whole Interaction (a JSON answer, or a later GET) as
 * the event that ends a stream. A failure the stream reports is thrown.
 */
export function parseEvent(data: string): InteractionsEvent | undefined {
  if (data === "[DONE]") return undefined;
  const json = parseUpstreamJson(data) as { event_type?: unknown; error?: { code?: unknown; message?: unknown } } | null;
  if (json?.event_type === "error") throw inStreamError(streamErrorMessage(json.error));
  if (json?.event_type === undefined) {
    // Google's error body, when a failure comes in place of the answer.
    const error = googleErrorMessage(json);
    if (error !== undefined) throw inStreamError(error);
    return { event_type: "interaction.completed", interaction: checkShape(interactionSchema, json) };
  }
  if (!KNOWN_EVENTS.has(String(json.event_type))) return undefined;
  return checkShape(eventSchema, json);
}

/** What the translator keeps of a started step. */
interface OpenStep {
  type: string;
  /** The hub blocks it opened, to stop with it. */
  blocks: number[];
  /** function_call: its tool-call block, the arguments the step itself carried, and whether fragments came. */
  call?: { block: number; startArguments: Record<string, unknown> | undefined | null; streamed: boolean };
}

/** `stored`: the upstream keeps this interaction (it was asked `store: true`), and its id is the answer's Finish.upstream_id. */
export function createEventTranslator({ stored = false }: { stored?: boolean } = {}): Translator<InteractionsEvent> {
  const blocks = new BlockWriter();
  const steps = new Map<number, OpenStep>();
  // A call without an id (the API gives one; a stream cut and resumed may not) gets one unique across answers.
  const idPrefix = randomBytes(6).toString("hex");
  let generatedIds = 0;
  let sawSteps = false;
  let hasToolCalls = false;
  let status: string | undefined;
  let usage: InteractionsUsage | undefined;
  let interactionId: string | undefined;

  const opened = (step: OpenStep, block: number) => {
    if (!step.blocks.includes(block)) step.blocks.push(block);
    return block;
  };

  function startStep(position: number, step: Step) {
    sawSteps = true;
    const open: OpenStep = { type: step.type, blocks: [] };
    steps.set(position, open);
    switch (step.type) {
      case "thought": {
        const thought = step as z.infer<typeof thoughtStep>;
        for (const content of thought.summary ?? []) summary(position, open, content);
        if (thought.signature) signature(position, open, thought.signature);
        return;
      }
      case "model_output":
        for (const content of (step as z.infer<typeof modelOutputStep>).content ?? []) output(position, open, content);
        return;
      case "function_call": {
        const call = step as z.infer<typeof functionCallStep>;
        hasToolCalls = true;
        const toolCallId = call.id || `call_${idPrefix}_${++generatedIds}`;
        const block = opened(open, blocks.startBlock(BlockType.TOOL_CALL, { toolCallId, toolName: call.name }, `call:${position}`));
        open.call = { block, startArguments: call.arguments, streamed: false };
        return;
      }
      default:
        return;
    }
  }

  const reasoningBlock = (position: number, open: OpenStep) => opened(open, blocks.continueBlock(BlockType.REASONING, `thought:${position}`));

  function summary(position: number, open: OpenStep, content: Content) {
    // A summary may hold an image; the hub's reasoning is text.
    if (content.type === "text" && (content as TextContent).text) blocks.text(reasoningBlock(position, open), (content as TextContent).text);
  }

  function signature(position: number, open: OpenStep, value: string) {
    blocks.signature(reasoningBlock(position, open), value);
  }

  /** One piece of model output: text, or media with its bytes. */
  function output(position: number, open: OpenStep, content: Content) {
    if (content.type === "text") {
      const { text } = content as TextContent;
      if (text) blocks.text(opened(open, blocks.continueBlock(BlockType.TEXT, `text:${position}`)), text);
      return;
    }
    if (content.type !== "image" && content.type !== "audio" && content.type !== "video") return;
    const media = content as MediaContent;
    // A URI-only piece (delivery: uri) has no bytes the hub can carry.
    if (!media.data) return;
    const bytes = Buffer.from(media.data, "base64");
    const mimeType = media.mime_type ?? "";
    if (media.type === "image") {
      opened(open, blocks.wholeBlock(BlockType.IMAGE, { mimeType }, "", bytes));
      return;
    }
    // Streamed audio and video come in pieces: one block per step, type and media type.
    const key = `${media.type}:${mimeType}:${position}`;
    const block = blocks.openIndex(key) ?? opened(open, blocks.startBlock(media.type === "audio" ? BlockType.AUDIO : BlockType.VIDEO, { mimeType }, key));
    blocks.data(block, bytes);
  }

  function delta(position: number, piece: Delta) {
    const open = steps.get(position);
    if (!open) return;
    switch (open.type) {
      case "thought":
        if (piece.type === "thought_summary") {
          const { content } = piece as z.infer<typeof thoughtSummaryDelta>;
          if (content) summary(position, open, content);
        } else if (piece.type === "thought_signature") {
          const value = (piece as z.infer<typeof thoughtSignatureDelta>).signature;
          if (value) signature(position, open, value);
        }
        return;
      case "model_output":
        output(position, open, piece as Content);
        return;
      case "function_call": {
        const fragment = piece.type === "arguments_delta" ? (piece as z.infer<typeof argumentsDelta>).arguments : undefined;
        if (fragment && open.call) {
          open.call.streamed = true;
          blocks.text(open.call.block, fragment);
        }
        return;
      }
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
    if (interaction.id) interactionId = interaction.id;
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
        case "interaction.created":
          if (event.interaction.id) interactionId = event.interaction.id;
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
      blocks.end(usage && convertUsage(usage), { reason: mapFinishReason(raw, hasToolCalls), rawReason: raw, upstreamId: stored ? interactionId : undefined });
      return blocks.take();
    },
  };
}
