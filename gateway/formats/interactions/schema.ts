// The Interactions request body (POST /v1/interactions, Google's Interactions
// API as the @google/genai SDK sends it): the fields this gateway serves,
// validated with a 400 naming the parameter, plus the router's own
// (router-fields.ts). Strict at every level: a field it does not serve yet
// (agents, webhooks, audio output, a `cache_control` on a text block...) is a
// 400 naming it rather than silently dropped (docs/interactions.md).
import { z } from "zod";
import { MAX_ITEMS } from "../../limits.ts";
import { providerSchema, selectionSchema, requestTagsSchema } from "../../router-fields.ts";
import { int32, list, nonEmptyString } from "../../schema-parts.ts";

// ---- content ----

const textContentSchema = z.strictObject({ type: z.literal("text"), text: z.string(), annotations: z.array(z.unknown()).optional() });

/** An image as base64 `data` with its `mime_type`, or a `uri`. */
const imageContentSchema = z
  .object({ type: z.literal("image"), data: nonEmptyString.optional(), mime_type: nonEmptyString.optional(), uri: nonEmptyString.optional(), resolution: z.string().optional() })
  .refine((image) => (image.data === undefined) !== (image.uri === undefined), "must have either data (with mime_type) or uri")
  .refine((image) => image.data === undefined || image.mime_type !== undefined, "data needs its mime_type");

const contentSchema = z.union([textContentSchema, imageContentSchema]);
const contentsSchema = list(contentSchema, MAX_ITEMS.contentBlocks);

// ---- steps (an earlier timeline sent back) ----

const userInputStepSchema = z.strictObject({ type: z.literal("user_input"), content: contentsSchema.optional() });
const modelOutputStepSchema = z.strictObject({ type: z.literal("model_output"), content: contentsSchema.optional() });
const thoughtStepSchema = z.strictObject({ type: z.literal("thought"), signature: z.string().optional(), summary: contentsSchema.optional() });
const functionCallStepSchema = z.strictObject({ type: z.literal("function_call"), id: nonEmptyString, name: nonEmptyString, arguments: z.record(z.string(), z.unknown()) });
const functionResultStepSchema = z.strictObject({
  type: z.literal("function_result"),
  call_id: nonEmptyString,
  name: z.string().optional(),
  is_error: z.boolean().optional(),
  result: z.union([z.string(), contentsSchema, z.record(z.string(), z.unknown())]),
});

/** A turn, the older spelling of a timeline entry: a role and its content. */
const turnSchema = z.strictObject({ role: z.enum(["user", "model"]), content: z.union([z.string(), contentsSchema]) });

const entrySchema = z.union([textContentSchema, imageContentSchema, userInputStepSchema, modelOutputStepSchema, thoughtStepSchema, functionCallStepSchema, functionResultStepSchema, turnSchema]);

export const inputSchema = z.union([z.string(), textContentSchema, imageContentSchema, list(entrySchema, MAX_ITEMS.messages).min(1)]);

// ---- tools and output ----

const functionToolSchema = z.strictObject({ type: z.literal("function"), name: nonEmptyString, description: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() });

/** Text, plain or JSON (with a schema); image, audio and video output are not served yet. */
const textResponseFormatSchema = z.strictObject({
  type: z.literal("text"),
  mime_type: z.enum(["text/plain", "application/json"]).optional(),
  schema: z.record(z.string(), z.unknown()).optional(),
});

const generationConfigSchema = z.strictObject({
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  max_output_tokens: int32().min(1).optional(),
  seed: z.number().int().optional(),
  stop_sequences: list(z.string(), MAX_ITEMS.stop).optional(),
  thinking_level: z.enum(["minimal", "low", "medium", "high"]).optional(),
  tool_choice: z.enum(["auto", "any", "none"]).optional(),
});

/** Google's safety setting: a harm category, the threshold that blocks it, and how harm is judged. */
const safetySettingSchema = z.strictObject({
  type: nonEmptyString,
  threshold: nonEmptyString,
  method: nonEmptyString.optional(),
});

/** An environment: the id of an existing one, or its configuration (a remote environment), passed on as given. */
const environmentSchema = z.union([nonEmptyString, z.looseObject({ type: z.literal("remote") })]);

export const interactionsRequestSchema = z
  .strictObject({
  model: nonEmptyString,
  input: inputSchema,
  previous_interaction_id: nonEmptyString.optional(),
  system_instruction: z.string().optional(),
  tools: list(functionToolSchema, MAX_ITEMS.tools).optional(),
  response_format: z.union([textResponseFormatSchema, list(textResponseFormatSchema, 1)]).optional(),
  response_mime_type: z.enum(["text/plain", "application/json"]).optional(),
  generation_config: generationConfigSchema.optional(),
  stream: z.boolean().optional(),
  store: z.boolean().optional(),
  background: z.boolean().optional(),
  safety_settings: list(safetySettingSchema, MAX_ITEMS.safetySettings).optional(),
  service_tier: z.enum(["flex", "standard", "priority", "deferred"]).optional(),
  environment: environmentSchema.optional(),
  request_tags: requestTagsSchema.optional(),
  provider: providerSchema.optional(),
  selection: selectionSchema.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.background !== true) return;
    if (body.store === false) ctx.addIssue({ code: "custom", path: ["background"], message: "requires store to be true (a background interaction is read back with GET)" });
    if (body.stream === true) ctx.addIssue({ code: "custom", path: ["stream"], message: "cannot be combined with background; follow it with GET /v1/interactions/{id}?stream=true instead" });
  });

export type InteractionsRequestBody = z.infer<typeof interactionsRequestSchema>;
export type Content = z.infer<typeof contentSchema>;
export type InputEntry = z.infer<typeof entrySchema>;
