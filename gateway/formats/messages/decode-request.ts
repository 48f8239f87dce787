// Decodes a Messages body into the core's GenerateRequest. Anthropic's blocks
// map onto the hub's parts: text, image, document (PDF, plain text, URL),
// tool_use (a tool call whose arguments are the input's JSON), thinking and
// redacted_thinking (reasoning with its signature or sealed data). A user
// message's tool_result blocks become tool messages, in order with its other
// blocks. What the hub does not model travels beside it for Anthropic
// upstreams: a block of another type as a NativePart, a block or tool with
// fields of its own as its `original`, top-level fields as `passthrough`,
// `anthropic-beta` and `thinking.display` as Anthropic's provider_options.
// Other protocols drop those, with a warning the core adds (plan.ts).
import { create, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import {
  GenerateRequestSchema,
  PublicFormat,
  ResponseFormat_Type,
  Role,
  ToolChoice_Mode,
  type ContentPartSchema,
  type GenerateRequest,
  type MessageSchema,
  type ServerToolSchema,
  type ToolSchema,
} from "../../../gen/router/v1/inference_pb.js";
import { warning } from "../../../core/warnings.ts";
import { requestHead, type RequestContext, type RequestFormat } from "../../router-fields.ts";
import { signerOfSignature } from "../../formats/shared/reasoning-signature.ts";
import { validateBody } from "../../validation.ts";
import { CARRIED_BLOCK_FIELDS, countTokensRequestSchema, MODELLED_FIELDS, messagesRequestSchema, type ContentBlockParam, type MessageParam, type MessagesRequestBody, type ToolParam } from "./schema.ts";

export interface DecodeContext extends RequestContext {
  /** The `anthropic-beta` header's values. */
  betas: string[];
}

export interface DecodedMessagesRequest {
  request: GenerateRequest;
  stream: boolean;
}

/** Messages keeps no answer and takes bare model names (`claude-sonnet-4-5`), as Anthropic's clients send them. */
export const MESSAGES: RequestFormat = { format: PublicFormat.MESSAGES, policy: { bareModelNames: true } };

/** A Messages body as the core's request; `forCounting`: the count_tokens body, whose max_tokens is optional. */
export function decodeMessagesRequest(body: unknown, context: DecodeContext, forCounting = false): DecodedMessagesRequest {
  const parsed: MessagesRequestBody = validateBody(forCounting ? countTokensRequestSchema : messagesRequestSchema, body);
  const stream = parsed.stream ?? false;
  const messages: MessageInit[] = [];
  if (parsed.system !== undefined) messages.push(systemMessage(parsed.system));
  for (const message of parsed.messages) messages.push(...toMessages(message));
  const { tools, serverTools } = splitTools(parsed.tools ?? []);
  return {
    request: create(GenerateRequestSchema, {
      ...requestHead(MESSAGES, parsed, context),
      messages,
      sampling: {
        maxTokens: parsed.max_tokens,
        temperature: parsed.temperature,
        topP: parsed.top_p,
        topK: parsed.top_k,
        stop: parsed.stop_sequences ?? [],
      },
      tools,
      serverTools,
      toolChoice: toolChoiceOf(parsed.tool_choice),
      parallelToolCalls: parsed.tool_choice && "disable_parallel_tool_use" in parsed.tool_choice && parsed.tool_choice.disable_parallel_tool_use === true ? false : undefined,
      reasoning: reasoningOf(parsed),
      responseFormat: parsed.output_config?.format ? { type: ResponseFormat_Type.JSON_SCHEMA, name: "output", schema: parsed.output_config.format.schema as JsonObject, strict: true } : undefined,
      passthrough: passthroughOf(parsed),
      providerOptions: providerOptionsOf(parsed, context.betas),
      warnings: fieldWarnings(parsed),
    }),
    stream,
  };
}

type MessageInit = MessageInitShape<typeof MessageSchema>;
type PartInit = MessageInitShape<typeof ContentPartSchema>;
type ToolInit = MessageInitShape<typeof ToolSchema>;
type ServerToolInit = MessageInitShape<typeof ServerToolSchema>;

const textPart = (text: string): PartInit => ({ part: { case: "text", value: { text } } });

function systemMessage(system: NonNullable<MessagesRequestBody["system"]>): MessageInit {
  if (typeof system === "string") return { role: Role.SYSTEM, content: [textPart(system)] };
  return { role: Role.SYSTEM, content: system.map((block) => toPart(block)) };
}

/**
 * One Anthropic message as the hub's messages: a user message's tool results
 * are tool messages (the hub's shape), the blocks between them user messages,
 * all in their order.
 */
function toMessages(message: MessageParam): MessageInit[] {
  const role = message.role === "assistant" ? Role.ASSISTANT : message.role === "system" ? Role.SYSTEM : Role.USER;
  if (typeof message.content === "string") return [{ role, content: [textPart(message.content)] }];
  if (role !== Role.USER) return [{ role, content: message.content.map(toPart) }];
  const messages: MessageInit[] = [];
  let user: PartInit[] | undefined;
  for (const block of message.content) {
    if (block.type === "tool_result") {
      user = undefined;
      messages.push({ role: Role.TOOL, content: [toPart(block)] });
    } else {
      if (!user) messages.push({ role: Role.USER, content: (user = []) });
      user.push(toPart(block));
    }
  }
  return messages;
}

function toPart(block: ContentBlockParam): PartInit {
  const part = typedPart(block);
  if (block.type !== "router.native") {
    if ("cache_control" in block) part.cacheControl = cacheControlOf(block.cache_control);
    const carried = CARRIED_BLOCK_FIELDS[block.type];
    if (Object.keys(block).some((field) => !carried.includes(field))) part.original = block as JsonObject;
  }
  return part;
}

function typedPart(block: ContentBlockParam): PartInit {
  switch (block.type) {
    case "text":
      return textPart(block.text);
    case "image": {
      const { source } = block;
      if (source.type === "base64") return { part: { case: "image", value: { data: source.data, mimeType: source.media_type } } };
      if (source.type === "url") return { part: { case: "image", value: { url: source.url } } };
      return { part: { case: "file", value: { fileId: source.file_id } } };
    }
    case "document":
      return { part: { case: "file", value: documentOf(block) } };
    case "tool_use":
      return { part: { case: "toolCall", value: { id: block.id, name: block.name, input: block.input as JsonObject } } };
    case "tool_result": {
      const content = typeof block.content === "string" ? [textPart(block.content)] : (block.content ?? []).map(resultPart);
      return { part: { case: "toolResult", value: { toolCallId: block.tool_use_id, content, isError: block.is_error ?? false } } };
    }
    case "thinking": {
      // Another protocol's signature comes back with its prefix (encode-response.ts signatureOf).
      const { signedBy, signature } = signerOfSignature(block.signature);
      return { part: { case: "reasoning", value: { text: block.thinking, signature, signedBy } } };
    }
    case "redacted_thinking": {
      const { signedBy, signature: redactedData } = signerOfSignature(block.data);
      return { part: { case: "reasoning", value: { redactedData, signedBy } } };
    }
    case "router.native":
      return { part: { case: "native", value: { format: PublicFormat.MESSAGES, block: block.block as JsonObject } } };
  }
}

/** A tool result's own blocks: text, images and documents as parts; other types whole. */
function resultPart(block: Extract<ContentBlockParam, { type: "tool_result" }>["content"] & object extends (infer T)[] ? T : never): PartInit {
  if (block.type === "text" || block.type === "image" || block.type === "document") return toPart(block as ContentBlockParam);
  return { part: { case: "native", value: { format: PublicFormat.MESSAGES, block: block as JsonObject } } };
}

type DocumentBlock = Extract<ContentBlockParam, { type: "document" }>;

function documentOf(block: DocumentBlock) {
  const described = { title: block.title ?? "", context: block.context ?? "", citations: block.citations?.enabled === true };
  const { source } = block;
  switch (source.type) {
    case "base64":
      return { ...described, mimeType: source.media_type, fileData: `data:${source.media_type};base64,${source.data}` };
    case "text":
      return { ...described, ...plainText(source.data) };
    case "url":
      return { ...described, mimeType: source.url.toLowerCase().endsWith(".pdf") ? "application/pdf" : "", url: source.url };
    case "content": {
      // Anthropic's custom content document: its text blocks, as one plain-text document.
      const text = typeof source.content === "string" ? source.content : source.content.map((part) => part.text ?? "").join("\n");
      return { ...described, ...plainText(text) };
    }
    case "file":
      return { ...described, fileId: source.file_id };
  }
}

/** A text document as text, not a data URI to be decoded again (the body is well-formed from read-body.ts, so its UTF-8 round trip changed nothing). */
const plainText = (text: string) => ({ mimeType: "text/plain", text });

type CustomTool = Extract<ToolParam, { input_schema: unknown }>;

const isCustomTool = (tool: ToolParam): tool is CustomTool => "input_schema" in tool && (tool.type === undefined || tool.type === "custom");

/** A validated cache_control ({type: "ephemeral", ttl?}) as the hub's. */
function cacheControlOf(value: unknown) {
  if (typeof value !== "object" || value === null) return undefined;
  const { type, ttl } = value as { type: string; ttl?: string };
  return { type, ttl: ttl ?? "" };
}

/** Fields of a custom tool that the hub's Tool carries; a tool with others keeps its original. */
const TOOL_FIELDS = ["type", "name", "description", "input_schema", "strict", "cache_control"];

/** Custom tools become the hub's tools; typed ones (Anthropic's web search, code execution...) server tools. */
function splitTools(params: ToolParam[]): { tools: ToolInit[]; serverTools: ServerToolInit[] } {
  const tools: ToolInit[] = [];
  const serverTools: ServerToolInit[] = [];
  for (const tool of params) {
    if (isCustomTool(tool)) {
      tools.push({
        name: tool.name,
        description: tool.description ?? "",
        parameters: tool.input_schema as JsonObject,
        strict: tool.strict ?? false,
        cacheControl: cacheControlOf(tool.cache_control),
        original: Object.keys(tool).some((field) => !TOOL_FIELDS.includes(field)) ? (tool as JsonObject) : undefined,
      });
    } else {
      serverTools.push(serverToolOf(tool as { type: string; name: string } & Record<string, unknown>));
    }
  }
  return { tools, serverTools };
}

/** Web search (any version) is the hub's `web_search`, which other protocols map; any other typed tool is Anthropic's alone. */
function serverToolOf(tool: { type: string; name: string } & Record<string, unknown>): ServerToolInit {
  if (!tool.type.startsWith("web_search_")) return { name: tool.type, native: tool as JsonObject };
  const strings = (value: unknown) => (Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : []);
  return {
    name: "web_search",
    maxUses: typeof tool.max_uses === "number" ? tool.max_uses : undefined,
    allowedDomains: strings(tool.allowed_domains),
    blockedDomains: strings(tool.blocked_domains),
    userLocation: typeof tool.user_location === "object" && tool.user_location !== null ? (tool.user_location as JsonObject) : undefined,
    native: tool as JsonObject,
  };
}

function toolChoiceOf(choice: MessagesRequestBody["tool_choice"]) {
  switch (choice?.type) {
    case undefined:
      return undefined;
    case "auto":
      return { mode: ToolChoice_Mode.AUTO };
    case "any":
      return { mode: ToolChoice_Mode.REQUIRED };
    case "none":
      return { mode: ToolChoice_Mode.NONE };
    case "tool":
      return { mode: ToolChoice_Mode.NAMED, name: choice.name };
  }
}

/** Anthropic's `max` effort is the hub's highest (said in a warning, fieldWarnings). */
const EFFORTS = { low: "low", medium: "medium", high: "high", max: "high" } as const;

/**
 * What the decoder lowers or leaves out of the fields it models: effort max,
 * and the fields it does not know inside thinking, output_config and
 * tool_choice (accepted, as Anthropic adds some, but rebuilt from the known
 * ones for every upstream, so not sent).
 */
function fieldWarnings(body: MessagesRequestBody) {
  const warnings = body.output_config?.effort === "max" ? [warning("adjusted_parameter", "output_config.effort", "output_config.effort max was served as high, the router's highest level")] : [];
  for (const [field, known] of KNOWN_NESTED_FIELDS) {
    const value = body[field];
    for (const key of value ? Object.keys(value) : []) {
      if (!known.includes(key)) warnings.push(warning("unsupported_parameter", `${field}.${key}`, `${field}.${key} was not sent: the router does not know it`));
    }
  }
  return warnings;
}

const KNOWN_NESTED_FIELDS: ReadonlyArray<readonly ["thinking" | "output_config" | "tool_choice", readonly string[]]> = [
  ["thinking", ["type", "budget_tokens", "display"]],
  ["output_config", ["effort", "format"]],
  ["tool_choice", ["type", "name", "disable_parallel_tool_use"]],
];

function reasoningOf(body: MessagesRequestBody) {
  const effort = body.output_config?.effort === undefined ? "" : EFFORTS[body.output_config.effort];
  switch (body.thinking?.type) {
    case "enabled":
      return { enabled: true, maxTokens: body.thinking.budget_tokens, effort };
    case "disabled":
      return { enabled: false };
    case "adaptive":
      return { enabled: true, effort: effort || "medium" };
    default:
      return effort ? { effort } : undefined;
  }
}

/**
 * What only Anthropic upstreams read, under their protocol's key: the
 * `anthropic-beta` values and the thinking `display` (summarized, omitted).
 */
function providerOptionsOf(body: MessagesRequestBody, betas: string[]): { [protocol: string]: JsonObject } {
  const display = body.thinking?.type === "enabled" || body.thinking?.type === "adaptive" ? body.thinking.display : undefined;
  if (betas.length === 0 && !display) return {};
  return { anthropic: { ...(betas.length > 0 ? { betas } : {}), ...(display ? { thinking: { display } } : {}) } };
}

/** Every top-level field the decoder does not read, for Anthropic upstreams; `metadata.user_id` as the hub's `user`. */
function passthroughOf(body: MessagesRequestBody): JsonObject | undefined {
  const fields: JsonObject = {};
  for (const [field, value] of Object.entries(body)) if (!MODELLED_FIELDS.has(field) && value !== undefined) fields[field] = value as JsonObject[string];
  const user = body.metadata?.user_id;
  if (typeof user === "string") fields.user = user;
  return Object.keys(fields).length > 0 ? fields : undefined;
}
