// The Messages request body (POST /v1/messages, Anthropic's Messages API):
// the fields the hub models, validated with a 400 naming the parameter, plus
// the router's own (router-fields.ts). The format moves fast, so it is not
// strict the way chat is: a top-level field the gateway does not model is kept
// for the decoder to pass on to Anthropic upstreams (and drop with a warning
// elsewhere), a content block of a type it does not model is kept whole
// (NativePart), and blocks and tools keep fields they do not model. A real
// client's request is never refused for a field it may send.
import { z } from "zod";
import { MAX_ITEMS } from "../../limits.ts";
import { cacheSchema, modelsSchema, providerSchema, selectionSchema, requestTagsSchema } from "../../router-fields.ts";
import { between, int32, list, nonEmptyString } from "../../schema-parts.ts";
import { nullMeansAbsent } from "../../validation.ts";

const cacheControlSchema = nullMeansAbsent(z.looseObject({ type: z.literal("ephemeral"), ttl: z.enum(["5m", "1h"]).optional() }));
const cached = { cache_control: cacheControlSchema.optional() };

// ---- content blocks ----

const textBlockSchema = z.looseObject({ type: z.literal("text"), text: z.string(), ...cached, citations: z.array(z.unknown()).optional() });

const imageSourceSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("base64"), media_type: z.enum(["image/jpeg", "image/png", "image/gif", "image/webp"]), data: nonEmptyString }),
  z.looseObject({ type: z.literal("url"), url: nonEmptyString }),
  z.looseObject({ type: z.literal("file"), file_id: nonEmptyString }),
]);

const imageBlockSchema = z.looseObject({ type: z.literal("image"), source: imageSourceSchema, ...cached });

const documentSourceSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("base64"), media_type: z.literal("application/pdf"), data: nonEmptyString }),
  z.looseObject({ type: z.literal("text"), media_type: z.literal("text/plain").optional(), data: z.string() }),
  z.looseObject({ type: z.literal("url"), url: nonEmptyString }),
  z.looseObject({ type: z.literal("content"), content: z.union([z.string(), list(z.looseObject({ type: z.string(), text: z.string().optional() }), MAX_ITEMS.contentBlocks)]) }),
  z.looseObject({ type: z.literal("file"), file_id: nonEmptyString }),
]);

const documentBlockSchema = z.looseObject({
  type: z.literal("document"),
  source: documentSourceSchema,
  title: z.string().nullish(),
  context: z.string().nullish(),
  citations: nullMeansAbsent(z.looseObject({ enabled: z.boolean().optional() })).optional(),
  ...cached,
});

const toolResultContentSchema = z.union([z.string(), list(z.union([textBlockSchema, imageBlockSchema, documentBlockSchema, z.looseObject({ type: z.string() })]), MAX_ITEMS.contentBlocks)], {
  error: "must be a string or an array of content blocks",
});

/** Fields of each block type the hub models that its typed part carries; a block with others keeps its original. */
export const CARRIED_BLOCK_FIELDS: Readonly<Record<string, readonly string[]>> = {
  text: ["type", "text", "cache_control"],
  image: ["type", "source", "cache_control"],
  document: ["type", "source", "title", "context", "citations", "cache_control"],
  tool_use: ["type", "id", "name", "input", "cache_control"],
  tool_result: ["type", "tool_use_id", "content", "is_error", "cache_control"],
  thinking: ["type", "thinking", "signature"],
  redacted_thinking: ["type", "data"],
};
const MODELLED_BLOCK_TYPES = new Set(Object.keys(CARRIED_BLOCK_FIELDS));
/** The wrapper type of a block the hub does not model (never an Anthropic type: those are snake_case words). */
const NATIVE = "router.native";

/** The blocks the hub models; any other type is kept whole (`native`). */
const modelledBlockSchema = z.discriminatedUnion("type", [
  textBlockSchema,
  imageBlockSchema,
  documentBlockSchema,
  z.looseObject({ type: z.literal("tool_use"), id: nonEmptyString, name: nonEmptyString, input: z.record(z.string(), z.json()), ...cached }),
  z.looseObject({ type: z.literal("tool_result"), tool_use_id: nonEmptyString, content: toolResultContentSchema.optional(), is_error: z.boolean().optional(), ...cached }),
  z.looseObject({ type: z.literal("thinking"), thinking: z.string(), signature: z.string() }),
  z.looseObject({ type: z.literal("redacted_thinking"), data: nonEmptyString }),
  z.strictObject({ type: z.literal(NATIVE), block: z.record(z.string(), z.json()) }),
]);


/** A block of another type (server tool use and results, search results, container uploads...) is kept whole. */
function wrapUnmodelled(block: unknown): unknown {
  if (typeof block !== "object" || block === null || Array.isArray(block)) return block;
  const type = (block as { type?: unknown }).type;
  if (typeof type !== "string" || MODELLED_BLOCK_TYPES.has(type)) return block;
  return { type: NATIVE, block };
}

const contentBlockSchema = nullMeansAbsent(z.preprocess(wrapUnmodelled, modelledBlockSchema));

const messageSchema = nullMeansAbsent(
  z.looseObject({
    role: z.enum(["user", "assistant", "system"]),
    content: z.union([z.string(), list(contentBlockSchema, MAX_ITEMS.contentBlocks)], { error: "must be a string or an array of content blocks" }),
  }),
);

// ---- tools ----

/** A custom tool (no `type`, or `custom`); a typed tool (web search, code execution...) is a server or Anthropic-defined tool. */
const toolSchema = nullMeansAbsent(
  z.union(
    [
      z.looseObject({
        type: z.literal("custom").optional(),
        name: z.string().regex(/^[a-zA-Z0-9_-]{1,128}$/, "must be 1 to 128 letters, digits, underscores or dashes"),
        description: z.string().optional(),
        input_schema: z.record(z.string(), z.json()),
        strict: z.boolean().optional(),
        ...cached,
      }),
      z.looseObject({ type: z.string().refine((type) => type !== "custom"), name: nonEmptyString }),
    ],
    { error: "must be a custom tool {name, input_schema} or a typed tool {type, name}" },
  ),
);

const toolChoiceSchema = nullMeansAbsent(
  z.discriminatedUnion("type", [
    z.looseObject({ type: z.literal("auto"), disable_parallel_tool_use: z.boolean().optional() }),
    z.looseObject({ type: z.literal("any"), disable_parallel_tool_use: z.boolean().optional() }),
    z.looseObject({ type: z.literal("none") }),
    z.looseObject({ type: z.literal("tool"), name: nonEmptyString, disable_parallel_tool_use: z.boolean().optional() }),
  ]),
);

/** Whether the thinking text comes back (`omitted`: its blocks with a signature only). */
const THINKING_DISPLAY = z.enum(["summarized", "omitted"]);

const thinkingSchema = nullMeansAbsent(
  z.discriminatedUnion("type", [
    z.looseObject({ type: z.literal("enabled"), budget_tokens: int32().min(1024, "must be at least 1024"), display: THINKING_DISPLAY.optional() }),
    z.looseObject({ type: z.literal("disabled") }),
    z.looseObject({ type: z.literal("adaptive"), display: THINKING_DISPLAY.optional() }),
  ]),
);

const outputConfigSchema = nullMeansAbsent(
  z.looseObject({
    effort: z.enum(["low", "medium", "high", "max"]).optional(),
    format: nullMeansAbsent(z.looseObject({ type: z.literal("json_schema"), schema: z.record(z.string(), z.json()) })).optional(),
  }),
);

// ---- the body ----


const bodyFields = {
  model: nonEmptyString,
  models: modelsSchema.optional(),
  request_tags: requestTagsSchema.optional(),
  provider: providerSchema.optional(),
  selection: selectionSchema.optional(),
  // The router's semantic cache (docs/cache.md), with the `cache_key` header.
  cache: cacheSchema.optional(),

  max_tokens: int32().min(1),
  messages: list(messageSchema, MAX_ITEMS.messages).min(1, "must have at least one message"),
  system: z.union([z.string(), list(nullMeansAbsent(textBlockSchema), MAX_ITEMS.contentBlocks)], { error: "must be a string or an array of text blocks" }).optional(),
  temperature: between(0, 1).optional(),
  top_p: between(0, 1).optional(),
  top_k: int32().min(0).optional(),
  stop_sequences: list(z.string(), MAX_ITEMS.stop).optional(),
  stream: z.boolean().optional(),
  metadata: nullMeansAbsent(z.looseObject({ user_id: z.string().max(256).nullish() })).optional(),
  tools: list(toolSchema, MAX_ITEMS.tools).optional(),
  tool_choice: toolChoiceSchema.optional(),
  thinking: thinkingSchema.optional(),
  output_config: outputConfigSchema.optional(),
};

/** The top-level fields the decoder reads; every other one is passed on (decode-request.ts). */
export const MODELLED_FIELDS: ReadonlySet<string> = new Set(Object.keys(bodyFields));

/** The rules across fields, for both bodies (a counted request has no max_tokens to compare with). */
function crossFieldRules(body: z.output<z.ZodObject<typeof bodyFields>> | (Omit<z.output<z.ZodObject<typeof bodyFields>>, "max_tokens"> & { max_tokens?: number }), ctx: z.RefinementCtx) {
  if (body.thinking?.type === "enabled" && body.max_tokens !== undefined && body.thinking.budget_tokens >= body.max_tokens) {
    ctx.addIssue({ code: "custom", path: ["thinking", "budget_tokens"], message: "must be less than max_tokens" });
  }
  const choice = body.tool_choice;
  if (choice?.type === "tool" && !body.tools?.some((tool) => tool.name === choice.name)) {
    ctx.addIssue({ code: "custom", path: ["tool_choice", "name"], message: `names the tool ${choice.name}, which is not in tools` });
  }
}

export const messagesRequestSchema = nullMeansAbsent(z.looseObject(bodyFields).superRefine(crossFieldRules));

/** POST /v1/messages/count_tokens: the same body, without max_tokens (Anthropic's count endpoint takes none). */
export const countTokensRequestSchema = nullMeansAbsent(z.looseObject({ ...bodyFields, max_tokens: int32().min(1).optional() }).superRefine(crossFieldRules));

export type MessagesRequestBody = z.output<typeof countTokensRequestSchema>;
export type MessageParam = MessagesRequestBody["messages"][number];
export type ContentBlockParam = Exclude<MessageParam["content"], string>[number];
export type ToolParam = NonNullable<MessagesRequestBody["tools"]>[number];
