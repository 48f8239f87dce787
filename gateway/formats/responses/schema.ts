// The Responses request body (POST /api/v1/responses): OpenAI's fields this
// gateway serves, plus the router's own (router-fields.ts). Strict like chat:
// an unknown field is a 400, null reads as absent (nullMeansAbsent), every
// array is bounded (limits.ts), messages are predicates the decoder prefixes
// with the parameter's path.
import { z } from "zod";
import { MAX_ITEMS } from "../../limits.ts";
import { cacheSchema, modelsSchema, providerSchema, selectionSchema, requestTagsSchema } from "../../router-fields.ts";
import { between, int32, list, nonEmptyString } from "../../schema-parts.ts";
import { nullMeansAbsent } from "../../validation.ts";

// ---- input items ----

const inputTextSchema = z.strictObject({ type: z.literal("input_text"), text: z.string() });

const inputImageSchema = z
  .strictObject({
    type: z.literal("input_image"),
    image_url: nonEmptyString.optional(),
    file_id: nonEmptyString.optional(),
    detail: z.enum(["auto", "low", "high"]).optional(),
  })
  .refine((image) => image.image_url !== undefined || image.file_id !== undefined, "must have image_url or file_id");

const inputFileSchema = z
  .strictObject({
    type: z.literal("input_file"),
    file_data: nonEmptyString.optional(),
    file_id: nonEmptyString.optional(),
    file_url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
    filename: z.string().optional(),
  })
  .refine((file) => file.file_data !== undefined || file.file_id !== undefined || file.file_url !== undefined, "must have file_data, file_id or file_url");

const inputPartSchema = nullMeansAbsent(
  z.discriminatedUnion("type", [
    inputTextSchema,
    inputImageSchema,
    inputFileSchema,
    // An earlier answer's message sent back as it came (its annotations and logprobs are output about it, dropped).
    z.strictObject({
      type: z.literal("output_text"),
      text: z.string(),
      annotations: list(z.unknown(), MAX_ITEMS.echoedOutput).optional(),
      logprobs: list(z.unknown(), MAX_ITEMS.echoedOutput).optional(),
    }),
    z.strictObject({ type: z.literal("refusal"), refusal: z.string() }),
  ]),
);

const messageItemSchema = z
  .strictObject({
    type: z.literal("message"),
    id: z.string().optional(),
    status: z.enum(["in_progress", "completed", "incomplete"]).optional(),
    role: z.enum(["user", "assistant", "system", "developer"]),
    content: z.union([z.string(), list(inputPartSchema, MAX_ITEMS.contentBlocks)], { error: "must be a string or an array of content parts" }),
  })
  .superRefine((message, ctx) => {
    if (typeof message.content === "string") return;
    for (const [index, part] of message.content.entries()) {
      const outputPart = part.type === "output_text" || part.type === "refusal";
      if (outputPart && message.role !== "assistant") ctx.addIssue({ code: "custom", path: ["content", index, "type"], message: `${part.type} is only allowed in assistant messages` });
      if (!outputPart && message.role === "assistant" && part.type !== "input_text") {
        ctx.addIssue({ code: "custom", path: ["content", index, "type"], message: `${part.type} is not allowed in assistant messages` });
      }
    }
  });

const functionCallItemSchema = z.strictObject({
  type: z.literal("function_call"),
  id: z.string().optional(),
  // OpenAI's, on a call to a namespaced function: joined to the name as it went up (namespaces.ts).
  namespace: z.string().optional(),
  call_id: nonEmptyString,
  name: nonEmptyString,
  arguments: z.string(),
  status: z.enum(["in_progress", "completed", "incomplete"]).optional(),
});

const functionCallOutputItemSchema = z.strictObject({
  type: z.literal("function_call_output"),
  id: z.string().optional(),
  call_id: nonEmptyString,
  // A string, or OpenAI's list of input parts: Codex's view_image answers with an input_image.
  output: z.union([z.string(), list(nullMeansAbsent(z.discriminatedUnion("type", [inputTextSchema, inputImageSchema, inputFileSchema])), MAX_ITEMS.contentBlocks)], {
    error: "must be a string or an array of input_text, input_image or input_file parts",
  }),
  status: z.enum(["in_progress", "completed", "incomplete"]).optional(),
});

const reasoningItemSchema = z.strictObject({
  type: z.literal("reasoning"),
  id: z.string().optional(),
  summary: list(nullMeansAbsent(z.strictObject({ type: z.literal("summary_text"), text: z.string() })), MAX_ITEMS.reasoningBlocks),
  content: list(nullMeansAbsent(z.strictObject({ type: z.literal("reasoning_text"), text: z.string() })), MAX_ITEMS.reasoningBlocks).optional(),
  encrypted_content: z.string().optional(),
  status: z.enum(["in_progress", "completed", "incomplete"]).optional(),
});

/** An input item. `type` is optional on messages (OpenAI's EasyInputMessage): a message without one is read as `message`. */
const inputItemSchema = nullMeansAbsent(
  z.preprocess(
    (item) => (typeof item === "object" && item !== null && !Array.isArray(item) && !("type" in item) ? { ...item, type: "message" } : item),
    z.discriminatedUnion("type", [messageItemSchema, functionCallItemSchema, functionCallOutputItemSchema, reasoningItemSchema]),
  ),
);

export type InputPart = z.output<typeof inputPartSchema>;
export type InputItem = z.output<typeof inputItemSchema>;

// ---- tools and formats ----

const functionToolSchema = z.strictObject({
  type: z.literal("function"),
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, underscores or dashes"),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.json()).optional(),
  strict: z.boolean().optional(),
});

export type FunctionTool = z.output<typeof functionToolSchema>;

/**
 * Tools that Codex CLI declares by default although no upstream here can run
 * them: they are left out with a warning (field-warnings.ts) instead of
 * failing every turn. `web_search` (OpenAI's search; the hub has no request-side
 * search), `custom` (free-form input constrained by a grammar: Codex's
 * apply_patch) and `tool_search` (client-run discovery of deferred tools). Their other fields are
 * not checked: none of them is used.
 */
const DROPPED_TOOL_TYPES = ["web_search", "custom", "tool_search"] as const;

/** OpenAI's other built-in tools: refused with a 400 naming `tools[i].type`. */
const REFUSED_TOOL_TYPES = [
  "web_search_2025_08_26",
  "web_search_preview",
  "web_search_preview_2025_03_11",
  "file_search",
  "computer",
  "computer_use_preview",
  "code_interpreter",
  "image_generation",
  "local_shell",
  "shell",
  "apply_patch",
  "mcp",
  "programmatic_tool_calling",
];

const droppedToolSchema = z.looseObject({ type: z.enum(DROPPED_TOOL_TYPES), name: z.string().optional() });

/**
 * A group of functions (namespaces.ts): each goes up as `<namespace>__<name>`.
 * Its custom tools are left out like any custom tool.
 */
const namespaceToolSchema = z.looseObject({
  type: z.literal("namespace"),
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, underscores or dashes"),
  description: z.string().optional(),
  tools: list(z.union([functionToolSchema, z.looseObject({ type: z.literal("custom"), name: z.string().optional() })], { error: "must be a function or custom tool" }), MAX_ITEMS.tools),
});

const toolSchema = nullMeansAbsent(
  z.preprocess(
    refuseBuiltInTool,
    z.discriminatedUnion("type", [functionToolSchema, namespaceToolSchema, droppedToolSchema], {
      error: "must be function or namespace (or web_search, custom, tool_search, which are left out)",
    }),
  ),
);

/** A built-in tool no upstream runs is a 400 of its own words at `tools[i].type`, not "unknown type". */
function refuseBuiltInTool(tool: unknown, ctx: z.core.$RefinementCtx<unknown>): unknown {
  const type = typeof tool === "object" && tool !== null ? (tool as { type?: unknown }).type : undefined;
  if (typeof type === "string" && REFUSED_TOOL_TYPES.includes(type)) {
    ctx.addIssue({ code: "custom", path: ["type"], message: `is ${type}, a built-in tool that the upstream providers cannot run; only function tools are served` });
    return z.NEVER;
  }
  return tool;
}

const toolChoiceSchema = z.union(
  [z.enum(["auto", "none", "required"]), nullMeansAbsent(z.strictObject({ type: z.literal("function"), name: nonEmptyString }))],
  { error: "must be auto, none, required or {type: \"function\", name}" },
);

const textFormatSchema = nullMeansAbsent(
  z.discriminatedUnion("type", [
    z.strictObject({ type: z.literal("text") }),
    z.strictObject({ type: z.literal("json_object") }),
    z.strictObject({
      type: z.literal("json_schema"),
      name: nonEmptyString,
      description: z.string().optional(),
      schema: z.record(z.string(), z.json()),
      strict: z.boolean().optional(),
    }),
  ]),
);

const reasoningSchema = nullMeansAbsent(
  z.strictObject({
    // xhigh and max are OpenAI's newest levels; the router's stop at high (field-warnings.ts).
    effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh", "max"]).optional(),
    summary: z.enum(["auto", "concise", "detailed"]).optional(),
  }),
);

// OpenAI's metadata: at most 16 pairs, keys up to 64 characters, values up to 512.
const metadataSchema = z
  .record(z.string().max(64), z.string().max(512))
  .refine((metadata) => Object.keys(metadata).length <= 16, "must have at most 16 keys");

// ---- the body ----

/** OpenAI's `include` values (ResponseIncludable); anything else is a 400. */
const INCLUDABLE = [
  "reasoning.encrypted_content",
  "message.output_text.logprobs",
  "message.input_image.image_url",
  "file_search_call.results",
  "web_search_call.results",
  "web_search_call.action.sources",
  "computer_call_output.output.image_url",
  "code_interpreter_call.outputs",
] as const;

/** OpenAI's service tiers; the gateway serves one, the default. */
const SERVICE_TIERS = ["auto", "default", "flex", "scale", "priority", "fast", "ultrafast"] as const;

export const responsesRequestSchema = nullMeansAbsent(
  z
    .strictObject({
      model: nonEmptyString,
      models: modelsSchema.optional(),
      request_tags: requestTagsSchema.optional(),
      provider: providerSchema.optional(),
      selection: selectionSchema.optional(),
      // The router's semantic cache (docs/cache.md), with the `cache_key` header.
      cache: cacheSchema.optional(),

      input: z.union([z.string(), list(inputItemSchema, MAX_ITEMS.messages)], { error: (issue) => (issue.input === undefined ? "is required" : "must be a string or an array of input items") }),
      instructions: z.string().optional(),
      previous_response_id: nonEmptyString.optional(),
      store: z.boolean().optional(),
      stream: z.boolean().optional(),
      background: z.boolean().optional(),

      tools: list(toolSchema, MAX_ITEMS.tools).optional(),
      tool_choice: toolChoiceSchema.optional(),
      parallel_tool_calls: z.boolean().optional(),
      temperature: between(0, 2).optional(),
      top_p: between(0, 1).optional(),
      max_output_tokens: int32().min(1).optional(),
      // The spec's name for it.
      max_tokens: int32().min(1).optional(),
      text: nullMeansAbsent(z.strictObject({ format: textFormatSchema.optional(), verbosity: z.enum(["low", "medium", "high"]).optional() })).optional(),
      reasoning: reasoningSchema.optional(),
      metadata: nullMeansAbsent(metadataSchema).optional(),
      user: z.string().optional(),

      // What real clients send besides (docs/responses.md, "Fields real clients send").
      include: list(z.enum(INCLUDABLE), INCLUDABLE.length * 2).optional(),
      truncation: z.enum(["auto", "disabled"]).optional(),
      prompt_cache_key: z.string().max(1024).optional(),
      prompt_cache_retention: z.enum(["in_memory", "24h"]).optional(),
      safety_identifier: z.string().max(128).optional(),
      service_tier: z.enum(SERVICE_TIERS).optional(),
      top_logprobs: int32().min(0).max(20).optional(),
      stream_options: nullMeansAbsent(z.strictObject({ include_obfuscation: z.boolean().optional() })).optional(),
      // Codex CLI's (its window, thread and turn ids), not in OpenAI's published schema; read by no one here.
      client_metadata: z
        .record(z.string().max(256), z.string().max(16_384))
        .refine((pairs) => Object.keys(pairs).length <= 64, "must have at most 64 keys")
        .optional(),
    })
    .superRefine((body, ctx) => {
      if (body.background === true && body.store === false) ctx.addIssue({ code: "custom", path: ["background"], message: "requires store to be true (a background response is read back from the store)" });
      if (body.background === true && body.stream === true) {
        ctx.addIssue({ code: "custom", path: ["stream"], message: "cannot be combined with background; poll GET /api/v1/responses/{id} instead" });
      }
      if (body.max_tokens !== undefined && body.max_output_tokens !== undefined && body.max_tokens !== body.max_output_tokens) {
        ctx.addIssue({ code: "custom", path: ["max_tokens"], message: "must equal max_output_tokens when both are set" });
      }
      const functions = functionToolsOf(body.tools);
      const named = typeof body.tool_choice === "object" ? body.tool_choice.name : undefined;
      if (named !== undefined && !functions.some((tool) => tool.name === named)) {
        ctx.addIssue({ code: "custom", path: ["tool_choice"], message: `names the tool ${named}, which is not in tools` });
      }
      if (body.tool_choice === "required" && functions.length === 0) {
        ctx.addIssue({ code: "custom", path: ["tool_choice"], message: "is \"required\", but tools has no function tool" });
      }
    })
    // `tools` keeps the function tools, the ones echoed; namespaces their functions (served flat); the left-out ones are kept apart for their warnings.
    .transform(({ tools, ...body }) => ({
      ...body,
      tools: tools === undefined ? undefined : functionToolsOf(tools),
      namespaces: namespacesOf(tools),
      droppedTools: (tools ?? []).flatMap((tool, index): DroppedTool[] => {
        if (tool.type === "function") return [];
        if (tool.type === "namespace") return tool.tools.flatMap((inner) => (inner.type === "custom" ? [{ index, type: "custom" as const, name: `${tool.name}.${inner.name ?? ""}` }] : []));
        return [{ index, type: tool.type, name: tool.name }];
      }),
    })),
);

type DeclaredTool = FunctionTool | z.output<typeof droppedToolSchema> | z.output<typeof namespaceToolSchema>;

interface DroppedTool {
  index: number;
  type: (typeof DROPPED_TOOL_TYPES)[number];
  name: string | undefined;
}

export interface NamespaceTools {
  name: string;
  description?: string;
  functions: FunctionTool[];
}

const namespacesOf = (tools: readonly DeclaredTool[] | undefined): NamespaceTools[] =>
  (tools ?? []).flatMap((tool) =>
    tool.type === "namespace" ? [{ name: tool.name, description: tool.description, functions: tool.tools.filter((inner): inner is FunctionTool => inner.type === "function") }] : [],
  );

const functionToolsOf = (tools: readonly DeclaredTool[] | undefined): FunctionTool[] =>
  (tools ?? []).filter((tool): tool is FunctionTool => tool.type === "function");

export type ResponsesRequestBody = z.output<typeof responsesRequestSchema>;
