// Decodes a chat completions body into the core's GenerateRequest. The body is
// checked against the schema first (validation.ts): the first problem becomes
// a 400 naming its parameter (`messages[0].content`).
import { create, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import {
  GenerateRequestSchema,
  PublicFormat,
  Role,
  type ContentPartSchema,
  type GenerateRequest,
  type MessageSchema,
} from "../../../gen/router/v1/inference_pb.js";
import {
  chatRequestSchema,
  namedToolOf,
  type ChatContentBlock,
  type ChatMessage,
  type ChatReasoningDetail,
  type ChatRequestBody,
} from "./schema.ts";
import { warning } from "../../../core/warnings.ts";
import { mediaTypeOfDataUri } from "../../data-uri.ts";
import { responseFormatInit, toolChoiceInit } from "../../generate-request-parts.ts";
import { requestHead, type RequestContext, type RequestFormat } from "../../router-fields.ts";
import { validateBody } from "../../validation.ts";

export type DecodeContext = RequestContext;

export interface DecodedChatRequest {
  request: GenerateRequest;
  /** Whether to answer with SSE (also set on the request for the core). */
  stream: boolean;
}

/** Chat Completions keeps no answer unless asked (`store`), continues none by reference and wants full model ids. */
export const CHAT_COMPLETIONS: RequestFormat = { format: PublicFormat.CHAT_COMPLETIONS, policy: {} };

export function decodeChatRequest(body: unknown, context: DecodeContext): DecodedChatRequest {
  const parsed = validateBody(chatRequestSchema, body);
  return {
    request: create(GenerateRequestSchema, {
      ...requestHead(CHAT_COMPLETIONS, parsed, context),
      messages: parsed.messages.map(toMessage),
      sampling: toSampling(parsed),
      tools: (parsed.tools ?? []).map(toTool),
      toolChoice: toolChoiceInit(typeof parsed.tool_choice === "object" ? { name: namedToolOf(parsed.tool_choice)! } : parsed.tool_choice),
      parallelToolCalls: parsed.parallel_tool_calls,
      responseFormat: responseFormatInit(parsed.response_format?.type === "json_schema" ? { type: "json_schema", ...parsed.response_format.json_schema } : parsed.response_format),
      reasoning: toReasoning(parsed),
      warnings: [...reasoningWarnings(parsed), ...topLevelCacheControlWarnings(parsed)],
      media: toMedia(parsed),
      // `user` is OpenAI's end-user id; only OpenAI-protocol upstreams know it.
      passthrough: parsed.user === undefined ? undefined : { user: parsed.user },
    }),
    stream: parsed.stream ?? false,
  };
}

// ---- GenerateRequest parts, one function per concern ----

type MessageInit = MessageInitShape<typeof MessageSchema>;
type PartInit = MessageInitShape<typeof ContentPartSchema>;

const ROLES: Record<ChatMessage["role"], Role> = {
  system: Role.SYSTEM,
  developer: Role.DEVELOPER,
  user: Role.USER,
  assistant: Role.ASSISTANT,
  tool: Role.TOOL,
};

function toMessage(message: ChatMessage): MessageInit {
  const parts = toParts(message.content);
  const content =
    message.role === "tool"
      ? [{ part: { case: "toolResult", value: { toolCallId: message.tool_call_id, content: parts } } } satisfies PartInit]
      : [...reasoningParts(message), ...parts, ...toolCallParts(message)];
  return { role: ROLES[message.role], name: message.name ?? "", content };
}

function toParts(content: ChatMessage["content"]): PartInit[] {
  if (content == null) return [];
  if (typeof content === "string") return [{ part: { case: "text", value: { text: content } } }];
  return content.map(toPart);
}

function toPart(block: ChatContentBlock): PartInit {
  const cacheControl = block.cache_control && { type: block.cache_control.type, ttl: block.cache_control.ttl ?? "" };
  switch (block.type) {
    case "text":
      return { part: { case: "text", value: { text: block.text } }, cacheControl };
    case "image_url":
      return { part: { case: "image", value: { url: block.image_url.url, detail: block.image_url.detail ?? "" } }, cacheControl };
    case "input_audio":
      return { part: { case: "audio", value: block.input_audio }, cacheControl };
    case "file": {
      const { filename = "", file_data: fileData = "", file_id: fileId = "" } = block.file;
      return { part: { case: "file", value: { filename, fileData, fileId, mimeType: mediaTypeOfDataUri(fileData) } }, cacheControl };
    }
  }
}

/**
 * Reasoning of an earlier answer, sent back so the model keeps its thread.
 * `reasoning_details` keeps each block apart, with its own signature, in the
 * order the provider gave them (Anthropic checks both); the joined `reasoning`
 * object is read only without it.
 */
function reasoningParts(message: ChatMessage): PartInit[] {
  if (message.reasoning_details?.length) return reasoningDetailParts(message.reasoning_details);
  if (!message.reasoning) return [];
  const { text, signature = "", redacted = [] } = message.reasoning;
  return [
    { part: { case: "reasoning", value: { text, signature } } },
    ...redacted.map((redactedData): PartInit => ({ part: { case: "reasoning", value: { redactedData } } })),
  ];
}

/**
 * One reasoning part per block. Entries that continue the block before them
 * (same type and `index`, as a client gets by collecting a stream's
 * `delta.reasoning_details`) are put back together first, as the answer's fold does.
 */
function reasoningDetailParts(details: ChatReasoningDetail[]): PartInit[] {
  const blocks: { type: ChatReasoningDetail["type"]; index: number | undefined; text: string; signature: string; redactedData: string }[] = [];
  for (const detail of details) {
    const text = detail.type === "reasoning.text" ? (detail.text ?? "") : detail.type === "reasoning.summary" ? detail.summary : "";
    const signature = detail.type === "reasoning.text" ? (detail.signature ?? "") : "";
    const redactedData = detail.type === "reasoning.encrypted" ? detail.data : "";
    const last = blocks.at(-1);
    if (last && detail.index !== undefined && last.index === detail.index && last.type === detail.type) {
      last.text += text;
      last.signature += signature;
      last.redactedData += redactedData;
    } else {
      blocks.push({ type: detail.type, index: detail.index, text, signature, redactedData });
    }
  }
  return blocks.map(({ text, signature, redactedData }): PartInit =>
    redactedData ? { part: { case: "reasoning", value: { redactedData } } } : { part: { case: "reasoning", value: { text, signature } } },
  );
}

function toolCallParts(message: ChatMessage): PartInit[] {
  return (message.tool_calls ?? []).map((call) => ({
    part: { case: "toolCall", value: { id: call.id, name: call.function.name, arguments: call.function.arguments } },
  }));
}

function toSampling(body: ChatRequestBody) {
  return {
    temperature: body.temperature,
    topP: body.top_p,
    topK: body.top_k,
    frequencyPenalty: body.frequency_penalty,
    presencePenalty: body.presence_penalty,
    repetitionPenalty: body.repetition_penalty,
    // int64 in the proto; the schema only lets safe integers through.
    seed: body.seed === undefined ? undefined : BigInt(body.seed),
    maxTokens: body.max_tokens ?? body.max_completion_tokens,
    stop: typeof body.stop === "string" ? [body.stop] : (body.stop ?? []),
  };
}

function toTool({ function: fn }: NonNullable<ChatRequestBody["tools"]>[number]) {
  // protobuf-es represents google.protobuf.Struct as a plain JSON object.
  const parameters = fn.parameters as JsonObject | undefined;
  return { name: fn.name, description: fn.description ?? "", parameters, strict: fn.strict ?? false };
}

/** `reasoning_effort` is `reasoning.effort` by its top-level name (the schema refuses both at once). */
function toReasoning({ reasoning, reasoning_effort: topLevelEffort }: ChatRequestBody) {
  if (reasoning === undefined && topLevelEffort === undefined) return undefined;
  const effort = topLevelEffort ?? reasoning?.effort;
  return {
    effort: effort === undefined ? "" : routerEffort(effort),
    maxTokens: reasoning?.max_tokens,
    exclude: reasoning?.exclude ?? false,
    enabled: reasoning?.enabled,
  };
}

type ChatEffort = NonNullable<ChatRequestBody["reasoning_effort"]>;

/** The router's levels stop at high: OpenAI's xhigh and max are served as it, with a warning. */
const beyondHigh = (effort: ChatEffort | undefined) => effort === "xhigh" || effort === "max";
const routerEffort = (effort: ChatEffort) => (beyondHigh(effort) ? "high" : effort);

function reasoningWarnings({ reasoning, reasoning_effort: topLevelEffort }: ChatRequestBody) {
  const param = topLevelEffort !== undefined ? "reasoning_effort" : "reasoning.effort";
  const effort = topLevelEffort ?? reasoning?.effort;
  return beyondHigh(effort) ? [warning("adjusted_parameter", param, `${param} ${effort} was served as high, the router's highest level`)] : [];
}

/** The spec accepts a top-level `cache_control` and gives it no effect: the caller is told so, with where it does work. */
function topLevelCacheControlWarnings(body: ChatRequestBody) {
  if (body.cache_control === undefined) return [];
  return [warning("unsupported_parameter", "cache_control", "a top-level cache_control has no effect; set cache_control on the content blocks to cache a prompt's prefix")];
}

function toMedia(body: ChatRequestBody) {
  if (body.aspectRatio === undefined && body.prompt === undefined && body.duration === undefined) return undefined;
  return { aspectRatio: body.aspectRatio ?? "", audioPrompt: body.prompt ?? "", durationSeconds: body.duration };
}
