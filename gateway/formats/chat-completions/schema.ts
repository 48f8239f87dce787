// The chat completions request body, as the spec's table defines it.
// Every object is strict: an unknown field is a 400, never silently dropped.
// A field sent as null counts as not sent: every object (or union of objects)
// is wrapped in nullMeansAbsent. Every array has a maximum (limits.ts).
// Messages are predicates ("must be between 0 and 2"); the decoder puts the
// parameter's path in front of them.
import { z } from "zod";
import { MAX_ITEMS } from "../../limits.ts";
import { cacheSchema, modelsSchema, providerSchema, selectionSchema, requestTagsSchema } from "../../router-fields.ts";
import { between, int32, list, nonEmptyString } from "../../schema-parts.ts";
import { nullMeansAbsent } from "../../validation.ts";

// ---- messages ----

// Anthropic is the family that honours it, and it knows only these two lifetimes.
const cacheControlSchema = nullMeansAbsent(
  z.strictObject({
    type: z.literal("ephemeral"),
    ttl: z.enum(["5m", "1h"]).optional(),
  }),
);

const textBlockSchema = z.strictObject({
  type: z.literal("text"),
  text: z.string(),
  cache_control: cacheControlSchema.optional(),
});

// The union's members stay plain objects (the union needs their `type`); the
// union itself drops their null fields.
const contentBlockSchema = nullMeansAbsent(z.discriminatedUnion("type", [
  textBlockSchema,
  z.strictObject({
    type: z.literal("image_url"),
    image_url: nullMeansAbsent(
      z.strictObject({
        url: nonEmptyString,
        detail: z.enum(["auto", "low", "high"]).optional(),
      }),
    ),
    cache_control: cacheControlSchema.optional(),
  }),
  z.strictObject({
    type: z.literal("input_audio"),
    input_audio: nullMeansAbsent(z.strictObject({ data: nonEmptyString, format: nonEmptyString })),
    cache_control: cacheControlSchema.optional(),
  }),
  z.strictObject({
    type: z.literal("file"),
    file: nullMeansAbsent(
      z
        .strictObject({
          filename: z.string().optional(),
          file_data: nonEmptyString.optional(),
          file_id: nonEmptyString.optional(),
        })
        .refine((file) => file.file_data !== undefined || file.file_id !== undefined, "must have file_data or file_id"),
    ),
    cache_control: cacheControlSchema.optional(),
  }),
]));

const contentSchema = z.union([z.string(), list(contentBlockSchema, MAX_ITEMS.contentBlocks)], {
  error: "must be a string or an array of content blocks",
});

const toolCallSchema = nullMeansAbsent(
  z.strictObject({
    id: nonEmptyString,
    type: z.literal("function"),
    function: nullMeansAbsent(z.strictObject({ name: nonEmptyString, arguments: z.string() })),
  }),
);

// OpenRouter's `reasoning_details`: one entry per reasoning block of an earlier
// answer, in order. `id`, `format` and `index` are what OpenRouter and this gateway
// put on them; OpenRouter sends null for those it does not know.
const reasoningDetailFields = {
  id: z.string().optional(),
  format: z.string().optional(),
  index: z.number().int().min(0).optional(),
};

const reasoningDetailSchema = nullMeansAbsent(z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("reasoning.text"), text: z.string().optional(), signature: z.string().optional(), ...reasoningDetailFields }),
  z.strictObject({ type: z.literal("reasoning.encrypted"), data: nonEmptyString, ...reasoningDetailFields }),
  z.strictObject({ type: z.literal("reasoning.summary"), summary: z.string(), ...reasoningDetailFields }),
]));

// One object for every role (rather than a union on `role`) so that a bad
// role and a misplaced field each get their own precise error.
const messageSchema = nullMeansAbsent(z
  .strictObject({
    // `developer` is what current OpenAI clients send instead of `system`.
    role: z.enum(["system", "developer", "user", "assistant", "tool"]),
    // null is what an assistant message with tool_calls usually carries; it reads as absent.
    content: contentSchema.optional(),
    name: z.string().optional(),
    tool_calls: list(toolCallSchema, MAX_ITEMS.toolCalls).optional(),
    tool_call_id: nonEmptyString.optional(),
    // Fields of an assistant message as this gateway returns it, so a client
    // can append the previous answer to `messages` unchanged. Annotations and
    // generated images and audio are output about that answer and are not sent back.
    // `signature` and `redacted` carry a provider's sealed reasoning back to it (Anthropic).
    reasoning: nullMeansAbsent(
      z.strictObject({ text: z.string(), signature: z.string().optional(), redacted: list(z.string(), MAX_ITEMS.reasoningBlocks).optional() }),
    ).optional(),
    // The same reasoning block by block (OpenRouter's shape); when present it is what is sent back.
    reasoning_details: list(reasoningDetailSchema, MAX_ITEMS.reasoningBlocks).optional(),
    // Only null (unset) is accepted, and null reads as absent.
    refusal: z.null().optional(),
    annotations: list(z.unknown(), MAX_ITEMS.echoedOutput).optional(),
    images: list(z.unknown(), MAX_ITEMS.echoedOutput).optional(),
    audio: z.unknown().optional(),
  })
  .superRefine((message, ctx) => {
    const isAssistant = message.role === "assistant";
    const hasToolCalls = (message.tool_calls?.length ?? 0) > 0;
    if (message.content == null && !(isAssistant && hasToolCalls)) {
      const why = isAssistant ? "is required unless the message has tool_calls" : "is required";
      ctx.addIssue({ code: "custom", path: ["content"], message: why });
    }
    if (message.role === "tool" && message.tool_call_id === undefined) {
      ctx.addIssue({ code: "custom", path: ["tool_call_id"], message: "is required on tool messages" });
    }
    if (message.role !== "tool" && message.tool_call_id !== undefined) {
      ctx.addIssue({ code: "custom", path: ["tool_call_id"], message: "is only allowed on tool messages" });
    }
    for (const field of ["tool_calls", "reasoning", "reasoning_details", "refusal", "annotations", "images", "audio"] as const) {
      if (!isAssistant && message[field] !== undefined) {
        ctx.addIssue({ code: "custom", path: [field], message: "is only allowed on assistant messages" });
      }
    }
  }));

// ---- tools ----

const toolSchema = nullMeansAbsent(
  z.strictObject({
    type: z.literal("function"),
    function: nullMeansAbsent(
      z.strictObject({
        name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, underscores or dashes"),
        description: z.string().optional(),
        // A JSON schema, passed on as sent (its own nulls included).
        parameters: z.record(z.string(), z.json()).optional(),
        strict: z.boolean().optional(),
      }),
    ),
  }),
);

const toolChoiceSchema = z.union(
  [
    z.enum(["auto", "none", "required"]),
    nullMeansAbsent(
      z.discriminatedUnion("type", [
        z.strictObject({ type: z.literal("function"), function: nullMeansAbsent(z.strictObject({ name: nonEmptyString })) }),
        z.strictObject({ type: z.literal("tool"), name: nonEmptyString }),
      ]),
    ),
  ],
  { error: "must be auto, none, required or an object naming a tool" },
);

const responseFormatSchema = nullMeansAbsent(
  z.discriminatedUnion("type", [
    z.strictObject({ type: z.literal("text") }),
    z.strictObject({ type: z.literal("json_object") }),
    z.strictObject({
      type: z.literal("json_schema"),
      json_schema: nullMeansAbsent(
        z.strictObject({
          name: nonEmptyString,
          // Passed on as sent, like a tool's parameters.
          schema: z.record(z.string(), z.json()),
          strict: z.boolean().optional(),
        }),
      ),
    }),
  ]),
);

// ---- reasoning (routing and cache: router-fields.ts) ----

// The OpenAI SDK's ReasoningEffort: `minimal` and `none` are the values OpenAI's reasoning models
// add; `xhigh` and `max` are its newest, served as the router's highest, `high` (decode-request.ts).
const reasoningEffortSchema = z.enum(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);

const reasoningSchema = nullMeansAbsent(z
  .strictObject({
    effort: reasoningEffortSchema.optional(),
    max_tokens: int32().min(1024, "must be between 1024 and 32000").max(32000, "must be between 1024 and 32000").optional(),
    exclude: z.boolean().optional(),
    enabled: z.boolean().optional(),
  })
  .refine((reasoning) => reasoning.effort === undefined || reasoning.max_tokens === undefined, "must use effort or max_tokens, not both"));

// ---- the body ----

export const chatRequestSchema = nullMeansAbsent(z.preprocess(refuseTwoEfforts, z
  .strictObject({
    model: nonEmptyString,
    models: modelsSchema.optional(),
    request_tags: requestTagsSchema.optional(),
    messages: list(messageSchema, MAX_ITEMS.messages).min(1),

    temperature: between(0, 2).optional(),
    max_tokens: int32().min(1).optional(),
    // The name newer OpenAI clients use for max_tokens.
    max_completion_tokens: int32().min(1).optional(),
    top_p: between(0, 1).optional(),
    frequency_penalty: between(-2, 2).optional(),
    presence_penalty: between(-2, 2).optional(),
    top_k: int32().min(0).optional(),
    repetition_penalty: z.number().gt(0, "must be greater than 0 and at most 2").max(2, "must be greater than 0 and at most 2").optional(),
    seed: z.number().int().optional(),
    stop: z.union([z.string(), list(z.string(), MAX_ITEMS.stop)], { error: "must be a string or an array of strings" }).optional(),
    n: z.literal(1, "must be 1: only one choice per request is supported").optional(),

    stream: z.boolean().optional(),
    stream_options: nullMeansAbsent(z.strictObject({ include_usage: z.boolean().optional() })).optional(),

    provider: providerSchema.optional(),
    selection: selectionSchema.optional(),
    tools: list(toolSchema, MAX_ITEMS.tools).optional(),
    tool_choice: toolChoiceSchema.optional(),
    parallel_tool_calls: z.boolean().optional(),
    response_format: responseFormatSchema.optional(),
    reasoning: reasoningSchema.optional(),
    // The OpenAI SDK's top-level form of reasoning.effort.
    reasoning_effort: reasoningEffortSchema.optional(),
    cache: cacheSchema.optional(),
    // The spec documents this top-level form as accepted but not effective.
    cache_control: cacheControlSchema.optional(),

    aspectRatio: z.enum(["1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"]).optional(),
    prompt: z.string().optional(),
    duration: int32().min(1).optional(),

    user: z.string().optional(),
  })
  .superRefine((body, ctx) => {
    if (body.max_tokens !== undefined && body.max_completion_tokens !== undefined && body.max_tokens !== body.max_completion_tokens) {
      ctx.addIssue({ code: "custom", path: ["max_completion_tokens"], message: "must equal max_tokens when both are set" });
    }
    const maxTokens = body.max_tokens ?? body.max_completion_tokens;
    const reasoningBudget = body.reasoning?.max_tokens;
    if (maxTokens !== undefined && reasoningBudget !== undefined && reasoningBudget >= maxTokens) {
      ctx.addIssue({ code: "custom", path: ["reasoning", "max_tokens"], message: `must be less than max_tokens (${maxTokens})` });
    }
    if (body.stream_options !== undefined && body.stream !== true) {
      ctx.addIssue({ code: "custom", path: ["stream_options"], message: "is only allowed when stream is true" });
    }
    const named = namedToolOf(body.tool_choice);
    if (named !== undefined && !body.tools?.some((tool) => tool.function.name === named)) {
      ctx.addIssue({ code: "custom", path: ["tool_choice"], message: `names the tool ${named}, which is not in tools` });
    }
    if (body.tool_choice === "required" && !body.tools?.length) {
      ctx.addIssue({ code: "custom", path: ["tool_choice"], message: "is \"required\", but tools is empty" });
    }
  })));

/**
 * `reasoning_effort` with `reasoning.effort` or `reasoning.max_tokens`: refused before the fields'
 * own checks, whose complaint (a budget out of range) would be beside the point. A null is absent.
 */
function refuseTwoEfforts(body: unknown, ctx: z.RefinementCtx): unknown {
  if (!isObject(body) || body.reasoning_effort == null || !isObject(body.reasoning)) return body;
  const sized = body.reasoning.effort != null ? "reasoning.effort" : body.reasoning.max_tokens != null ? "reasoning.max_tokens" : undefined;
  if (sized) ctx.addIssue({ code: "custom", path: ["reasoning_effort"], message: `and ${sized} both set the reasoning effort: send one of them`, input: body });
  return body;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export type ChatRequestBody = z.infer<typeof chatRequestSchema>;
export type ChatMessage = ChatRequestBody["messages"][number];
export type ChatContentBlock = z.infer<typeof contentBlockSchema>;
export type ChatReasoningDetail = z.infer<typeof reasoningDetailSchema>;
export type ChatToolChoice = z.infer<typeof toolChoiceSchema>;

/** The tool a tool_choice object forces, if any. */
export function namedToolOf(choice: ChatToolChoice | undefined): string | undefined {
  if (choice === undefined || typeof choice === "string") return undefined;
  return choice.type === "function" ? choice.function.name : choice.name;
}
