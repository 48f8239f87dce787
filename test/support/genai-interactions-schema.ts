// Run-time checks of what the Interactions format answers against the official
// `@google/genai` SDK's types (3.3.0, dist/genai.d.ts: Interaction, Step,
// Usage, InteractionSSEEvent and what they name), one zod schema per type the
// gateway can produce, as anthropic-schema.ts does for Messages. A field the
// .d.ts declares without `?` is required here; `?` fields are optional. Objects
// stay open: the router adds `object`, `outputs` and usage `cost`/`chat_id`
// (the spec's fields). Steps, contents and deltas the gateway never produces
// (tool calls of Google's own tools, audio, documents) are left out, and
// the SDK's open string unions (`| (string & {})`) are closed to their listed
// values, so anything unexpected fails the check.
import { expect } from "vitest";
import { z } from "zod";
import { comparePositions, parseEventId } from "../../gateway/formats/interactions/event-position.ts";

const int = z.number().int().min(0);

/** InteractionStatus_2 and InteractionSseEventInteractionStatus (the same list). */
const status = z.enum(["in_progress", "requires_action", "completed", "failed", "cancelled", "incomplete", "budget_exceeded", "queued", "requires_continuation"]);

// ---- content (Content_2: the text, image and video members) ----

const textContent = z.looseObject({ type: z.literal("text"), text: z.string(), annotations: z.array(z.unknown()).optional() });
const imageMimeType = z.enum(["image/png", "image/jpeg", "image/webp", "image/heic", "image/heif", "image/gif", "image/bmp", "image/tiff"]);
const imageContent = z.looseObject({ type: z.literal("image"), data: z.string().optional(), mime_type: imageMimeType.optional(), uri: z.string().optional(), resolution: z.string().optional() });
const videoMimeType = z.enum(["video/mp4", "video/mpeg", "video/mpg", "video/mov", "video/avi", "video/x-flv", "video/webm", "video/wmv", "video/3gpp"]);
const videoContent = z.looseObject({ type: z.literal("video"), data: z.string().optional(), mime_type: videoMimeType.optional(), uri: z.string().optional() });
const content = z.discriminatedUnion("type", [textContent, imageContent, videoContent]);

// ---- steps (Step: the members the gateway produces) ----

const step = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("user_input"), content: z.array(content).optional() }),
  z.looseObject({ type: z.literal("model_output"), content: z.array(content).optional() }),
  z.looseObject({ type: z.literal("thought"), signature: z.string().optional(), summary: z.array(content).optional() }),
  z.looseObject({ type: z.literal("function_call"), id: z.string(), name: z.string(), arguments: z.record(z.string(), z.unknown()) }),
  z.looseObject({
    type: z.literal("function_result"),
    call_id: z.string(),
    is_error: z.boolean().optional(),
    name: z.string().optional(),
    result: z.union([z.string(), z.array(content), z.record(z.string(), z.unknown())]),
  }),
]);

// ---- usage (Usage, ModalityTokens) ----

const modalityTokens = z.looseObject({ modality: z.enum(["text", "image", "audio", "video", "document"]).optional(), tokens: int.optional() });
const usage = z.looseObject({
  total_input_tokens: int.optional(),
  total_output_tokens: int.optional(),
  total_thought_tokens: int.optional(),
  total_cached_tokens: int.optional(),
  total_tool_use_tokens: int.optional(),
  total_tokens: int.optional(),
  input_tokens_by_modality: z.array(modalityTokens).optional(),
  output_tokens_by_modality: z.array(modalityTokens).optional(),
  cached_tokens_by_modality: z.array(modalityTokens).optional(),
});

// ---- the resource (Interaction) ----

export const interactionSchema = z.looseObject({
  id: z.string(),
  status,
  model: z.string().optional(),
  created: z.iso.datetime().optional(),
  updated: z.iso.datetime().optional(),
  previous_interaction_id: z.string().optional(),
  steps: z.array(step).optional(),
  usage: usage.optional(),
  /** ErrorT: a failed interaction's errors. */
  errors: z.array(z.looseObject({ code: z.string().optional(), message: z.string().optional() })).optional(),
});

/** InteractionSseEventInteraction: what interaction.created and interaction.completed carry. */
const eventInteraction = z.looseObject({
  id: z.string(),
  status,
  model: z.string().optional(),
  object: z.string().optional(),
  created: z.iso.datetime().optional(),
  updated: z.iso.datetime().optional(),
  steps: z.array(step).optional(),
});

// ---- the stream (InteractionSSEEvent, StepDeltaData: the members the gateway produces) ----

const delta = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text"), text: z.string() }),
  z.looseObject({ type: z.literal("thought_summary"), content: content.optional() }),
  z.looseObject({ type: z.literal("thought_signature"), signature: z.string().optional() }),
  z.looseObject({ type: z.literal("arguments_delta"), arguments: z.string().optional() }),
  z.looseObject({ type: z.literal("image"), data: z.string().optional(), mime_type: imageMimeType.optional(), uri: z.string().optional() }),
  z.looseObject({ type: z.literal("video"), data: z.string().optional(), mime_type: videoMimeType.optional(), uri: z.string().optional() }),
]);

const eventId = { event_id: z.string().optional() };

export const sseEventSchema = z.discriminatedUnion("event_type", [
  z.looseObject({ event_type: z.literal("interaction.created"), interaction: eventInteraction, ...eventId }),
  z.looseObject({ event_type: z.literal("interaction.completed"), interaction: eventInteraction, ...eventId }),
  z.looseObject({ event_type: z.literal("interaction.status_update"), interaction_id: z.string(), status, usage: usage.optional(), ...eventId }),
  z.looseObject({ event_type: z.literal("step.start"), index: int, step, ...eventId }),
  z.looseObject({ event_type: z.literal("step.delta"), index: int, delta, ...eventId }),
  z.looseObject({ event_type: z.literal("step.stop"), index: int, usage: usage.optional(), step_usage: usage.optional(), ...eventId }),
  z.looseObject({ event_type: z.literal("error"), error: z.looseObject({ code: z.string().optional(), message: z.string().optional() }).optional(), ...eventId }),
]);

const SCHEMAS = { Interaction: interactionSchema, InteractionSSEEvent: sseEventSchema };

export type GenaiInteractionsSchema = keyof typeof SCHEMAS;

/** Asserts that `value` is a valid `name` of the @google/genai SDK; the message names `what` and every mismatch. */
export function expectGenaiValid(name: GenaiInteractionsSchema, value: unknown, what: string): void {
  const result = SCHEMAS[name].safeParse(value);
  expect(result.success, result.success ? "" : `${what} is not a valid ${name}:\n${z.prettifyError(result.error)}\n${JSON.stringify(value)}`).toBe(true);
}

/**
 * A stream's event ids are places in the answer (gateway/formats/interactions/event-position.ts):
 * each reads back, and each comes after the one before (a status repeated while the
 * answer is made stays `status`).
 */
export function expectEventIdsInStreamOrder(events: readonly { event_id?: unknown }[]): void {
  const positions = events.map((event) => parseEventId(String(event.event_id)));
  for (let i = 1; i < positions.length; i++) {
    const repeatedStatus = positions[i].kind === "status" && positions[i - 1].kind === "status";
    if (!repeatedStatus) expect(comparePositions(positions[i - 1], positions[i]), `${events[i - 1].event_id} then ${events[i].event_id}`).toBeLessThan(0);
  }
}
