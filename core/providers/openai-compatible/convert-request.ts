// GenerateRequest -> the body of POST {base_url}/chat/completions.
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import {
  ResponseFormat_Type,
  Role,
  ToolChoice_Mode,
  type ContentPart,
  type GenerateRequest,
  type Message,
} from "../../../gen/router/v1/inference_pb.js";
import { fileData, imageUrl } from "../data-uri.ts";
import { toolCallArguments } from "../tool-call-arguments.ts";
import type { ConvertedRequest, UpstreamCall } from "../types.ts";

/** The hub's roles in OpenAI chat words. */
export const ROLE_NAMES: Record<Role, string> = {
  [Role.UNSPECIFIED]: "user",
  [Role.SYSTEM]: "system",
  [Role.DEVELOPER]: "developer",
  [Role.USER]: "user",
  [Role.ASSISTANT]: "assistant",
  [Role.TOOL]: "tool",
};

/** The protocol carries every field routing leaves in the request, so nothing is left out here. */
export function convertRequest(call: UpstreamCall): ConvertedRequest {
  const { request, route, provider } = call;
  const sampling = request.sampling;
  const body: JsonObject = {
    model: route.provider_model_id,
    messages: convertMessages(request.messages, provider.quirks.reasoning_passback),
  };
  if (sampling) {
    setIfDefined(body, "temperature", sampling.temperature);
    setIfDefined(body, "top_p", sampling.topP);
    setIfDefined(body, "frequency_penalty", sampling.frequencyPenalty);
    setIfDefined(body, "presence_penalty", sampling.presencePenalty);
    setIfDefined(body, provider.quirks.max_tokens_field, sampling.maxTokens);
    if (sampling.seed !== undefined) body.seed = Number(sampling.seed);
    if (sampling.stop.length > 0) body.stop = sampling.stop;
    // Extensions some vendors take; routing has already removed them where the catalogue says no.
    setIfDefined(body, "top_k", sampling.topK);
    setIfDefined(body, "repetition_penalty", sampling.repetitionPenalty);
  }
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: "function",
      function: {
        name: tool.name,
        ...(tool.description ? { description: tool.description } : {}),
        ...(tool.parameters ? { parameters: tool.parameters } : {}),
        ...(tool.strict ? { strict: true } : {}),
      },
    }));
  }
  const toolChoice = convertToolChoice(request);
  if (toolChoice !== undefined) body.tool_choice = toolChoice;
  // Only the non-default is sent: some vendors' models refuse the field altogether.
  if (request.tools.length > 0 && request.parallelToolCalls === false) body.parallel_tool_calls = false;
  const responseFormat = convertResponseFormat(request);
  if (responseFormat) body.response_format = responseFormat;
  Object.assign(body, convertReasoning(call));
  const user = request.passthrough?.user;
  if (typeof user === "string") body.user = user;
  if (call.stream) {
    body.stream = true;
    // Without it the stream carries no usage, and the answer could not be priced.
    body.stream_options = { include_usage: true };
  }
  return { body, warnings: [] };
}

function setIfDefined(body: JsonObject, key: string, value: number | undefined) {
  if (value !== undefined) body[key] = value;
}

type ReasoningPassback = UpstreamCall["provider"]["quirks"]["reasoning_passback"];

/** Stands in for a tool result that was all media, which follows in a user message. */
export const TOOL_MEDIA_FOLLOWS = "(the tool's result is the media in the next message)";

/**
 * The messages in the protocol's shape. A tool message carries text only, so
 * the media of tool results (an image a tool returned) follow the run of tool
 * messages as one user message: the protocol wants every result of a
 * tool-call turn right after it.
 */
function convertMessages(messages: Message[], passback: ReasoningPassback): JsonObject[] {
  const converted: JsonObject[] = [];
  let toolMedia: ContentPart[] = [];
  for (const message of messages) {
    if (message.role !== Role.TOOL && toolMedia.length > 0) {
      converted.push({ role: "user", content: contentOf(toolMedia) });
      toolMedia = [];
    }
    if (message.role !== Role.TOOL) {
      converted.push(convertMessage(message, passback));
      continue;
    }
    // One upstream tool message per result, as the protocol pairs each with its call id.
    for (const part of message.content) {
      if (part.part.case !== "toolResult") continue;
      const text = part.part.value.content.filter((inner) => inner.part.case === "text");
      const media = part.part.value.content.filter((inner) => inner.part.case !== "text");
      converted.push({ role: "tool", tool_call_id: part.part.value.toolCallId, content: text.length > 0 || media.length === 0 ? contentOf(text) : TOOL_MEDIA_FOLLOWS });
      toolMedia.push(...media);
    }
  }
  if (toolMedia.length > 0) converted.push({ role: "user", content: contentOf(toolMedia) });
  return converted;
}

function convertMessage(message: Message, passback: ReasoningPassback): JsonObject {
  const toolCalls = message.content.flatMap((part) =>
    part.part.case === "toolCall"
      ? [{ id: part.part.value.id, type: "function", function: { name: part.part.value.name, arguments: toolCallArguments(part.part.value) } }]
      : [],
  );
  const visible = message.content.filter((part) => part.part.case !== "toolCall" && part.part.case !== "reasoning");
  const out: JsonObject = { role: ROLE_NAMES[message.role] };
  out.content = visible.length === 0 && toolCalls.length > 0 ? null : contentOf(visible);
  if (message.name) out.name = message.name;
  if (toolCalls.length > 0) out.tool_calls = toolCalls;
  if (passback !== "none" && message.role === Role.ASSISTANT) {
    // Vendors in thinking mode (DeepSeek, Kimi) refuse tool-call turns whose reasoning is not sent back.
    const reasoning = message.content.flatMap((part) => (part.part.case === "reasoning" && part.part.value.text ? [part.part.value.text] : [])).join("");
    if (reasoning) out[passback] = reasoning;
  }
  return out;
}

/** A lone text part is sent as a plain string, which every vendor accepts. */
function contentOf(parts: ContentPart[]): JsonValue {
  if (parts.length === 1 && parts[0].part.case === "text") return parts[0].part.value.text;
  return parts.flatMap(convertPart);
}

function convertPart(part: ContentPart): JsonObject[] {
  switch (part.part.case) {
    case "text":
      return [{ type: "text", text: part.part.value.text }];
    case "image": {
      const { detail } = part.part.value;
      const url = imageUrl(part.part.value);
      return [{ type: "image_url", image_url: detail ? { url, detail } : { url } }];
    }
    case "audio":
      return [{ type: "input_audio", input_audio: { data: part.part.value.data, format: part.part.value.format } }];
    case "file": {
      const { filename, fileId, url } = part.part.value;
      const data = fileData(part.part.value);
      const file: JsonObject = {};
      if (filename) file.filename = filename;
      // The protocol has no file URL; OpenRouter-style vendors take one as file_data, others refuse it.
      if (data || url) file.file_data = data || url;
      if (fileId) file.file_id = fileId;
      return [{ type: "file", file }];
    }
    default:
      return [];
  }
}

function convertToolChoice(request: GenerateRequest): JsonValue | undefined {
  switch (request.toolChoice?.mode) {
    case ToolChoice_Mode.AUTO:
      return "auto";
    case ToolChoice_Mode.NONE:
      return "none";
    case ToolChoice_Mode.REQUIRED:
      return "required";
    case ToolChoice_Mode.NAMED:
      return { type: "function", function: { name: request.toolChoice.name } };
    default:
      return undefined;
  }
}

function convertResponseFormat(request: GenerateRequest): JsonObject | undefined {
  const format = request.responseFormat;
  switch (format?.type) {
    case ResponseFormat_Type.TEXT:
      return { type: "text" };
    case ResponseFormat_Type.JSON_OBJECT:
      return { type: "json_object" };
    case ResponseFormat_Type.JSON_SCHEMA:
      return { type: "json_schema", json_schema: { name: format.name, schema: format.schema ?? {}, strict: format.strict } };
    default:
      return undefined;
  }
}

/** The reasoning fields in the vendor's own style (quirks.reasoning_field). */
function convertReasoning({ request, route, provider }: UpstreamCall): JsonObject {
  const reasoning = request.reasoning;
  if (!reasoning) return {};
  const effort = reasoning.effort as keyof NonNullable<typeof route.reasoning_effort_map> | "";
  const upstreamEffort = effort ? route.reasoning_effort_map?.[effort] : undefined;
  const enabled = reasoning.enabled !== false && effort !== "none";
  switch (provider.quirks.reasoning_field) {
    case "reasoning_effort":
      return upstreamEffort ? { reasoning_effort: upstreamEffort } : {};
    case "reasoning":
      return upstreamEffort ? { reasoning: { effort: upstreamEffort } } : {};
    case "enable_thinking":
      return { enable_thinking: enabled, ...(enabled && reasoning.maxTokens !== undefined && { thinking_budget: reasoning.maxTokens }) };
    case "thinking":
      return { thinking: { type: enabled ? "enabled" : "disabled" } };
  }
}
