// GenerateRequest -> the body of POST {base_url}/messages (Anthropic Messages API),
// with a warning for each field the protocol cannot carry, decided where the body is built.
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import {
  ResponseFormat_Type,
  Role,
  ToolChoice_Mode,
  type CacheControl,
  type ContentPart,
  type FilePart,
  type GenerateRequest,
  type ImagePart,
  type Message,
  type SamplingParams,
  type ServerTool,
  type Tool,
  type ToolCallPart,
  type Warning,
} from "../../../gen/router/v1/inference_pb.js";
import { warning } from "../../warnings.ts";
import { fileContent, imageData } from "../data-uri.ts";
import { nativeBlock, nativeFields, nativeOriginal, nativeServerTool, nativeTool } from "../native-blocks.ts";
import { UpstreamError, type ConvertedRequest, type UpstreamCall } from "../types.ts";
import { anthropicOptions } from "./provider-options.ts";

/** Anthropic has no JSON mode without a schema: a json_object request gets this instruction instead. */
export const JSON_OBJECT_INSTRUCTION = "Respond with a single JSON object and nothing else.";

/** While thinking, Anthropic takes top_p only from 0.95 to 1 (and no temperature or top_k). */
const MIN_TOP_P_WHILE_THINKING = 0.95;

/** Anthropic's temperature runs from 0 to 1 (the chat format's from 0 to 2); higher values are sent as 1. */
const MAX_TEMPERATURE = 1;

export function convertRequest(call: UpstreamCall): ConvertedRequest {
  const { request, route } = call;
  const warnings: Warning[] = [];
  const thinking = decideThinking(call, warnings);
  const sampling = convertSampling(request.sampling, thinking !== undefined, warnings);
  const system = convertSystem(request, warnings);
  const body: JsonObject = {
    model: route.provider_model_id,
    // Required by the protocol.
    max_tokens: request.sampling?.maxTokens ?? call.maxCompletionTokens,
    messages: convertMessages(request.messages, warnings),
  };
  if (system.length > 0) body.system = system;
  Object.assign(body, sampling, convertThinking(call, thinking), convertTools(request));
  const outputConfig = convertOutputConfig(call, thinking);
  if (outputConfig) body.output_config = outputConfig;
  Object.assign(body, convertPassthrough(request));
  if (call.stream) body.stream = true;
  return { body, warnings };
}

/**
 * The pass-through fields routing left (a Messages request's are all its
 * unmodelled top-level fields, `service_tier` or `container` say), each as
 * itself; `user` as Anthropic's `metadata.user_id`.
 */
function convertPassthrough(request: GenerateRequest): JsonObject {
  const { user, fields } = nativeFields(request);
  return user !== undefined ? { ...fields, metadata: { user_id: user } } : fields;
}

const notCarried = (param: string, what = param) => warning("unsupported_parameter", param, `${what} is not supported by the Anthropic protocol and was ignored`);

/** The thinking that can be sent (see thinkingMode), with a warning when the request asked for thinking that cannot. */
function decideThinking(call: UpstreamCall, warnings: Warning[]): ThinkingMode | undefined {
  const requested = requestedThinking(call);
  const mode = thinkingMode(call);
  if (requested && !mode) {
    warnings.push(
      forcesToolUse(call.request)
        ? warning("unsupported_parameter", "reasoning", "reasoning was not sent: Anthropic does not allow thinking when tool_choice forces tool use (required or a named tool); the tool choice was kept")
        : warning("unsupported_parameter", "reasoning", "reasoning was not sent: with a thinking budget Anthropic wants the tool-calling turn this tool result answers to open with its signed thinking, which the conversation did not carry"),
    );
  }
  return mode;
}

type ThinkingMode = "budget" | "adaptive";

/**
 * Thinking is on when routing left a budget or an effort the route maps, unless
 * the tool choice forces tool use: Anthropic refuses thinking with tool_choice
 * `any` or `tool` ("Thinking may not be enabled when tool_choice forces tool
 * use"), so the forced choice is kept and thinking left out (warnings say so).
 */
function thinkingMode(call: UpstreamCall): ThinkingMode | undefined {
  if (forcesToolUse(call.request)) return undefined;
  const mode = requestedThinking(call);
  return mode === "budget" && toolLoopLacksThinking(call.request) ? undefined : mode;
}

/**
 * Whether the request ends with tool results whose assistant turn has no thinking
 * Anthropic can take back (signed or redacted). With a thinking budget Anthropic
 * refuses such a history ("a final assistant message must start with a thinking
 * block"); a client that kept only the tool calls, or a history from another
 * provider, sends one. Thinking is then left out (warnings say so); adaptive
 * thinking may skip a turn's thinking, so it is not affected.
 */
function toolLoopLacksThinking(request: GenerateRequest): boolean {
  const turns = request.messages.filter((message) => !isSystem(message));
  let index = turns.length - 1;
  let answersTools = false;
  for (; index >= 0 && turns[index].role !== Role.ASSISTANT; index--) {
    answersTools ||= turns[index].content.some((part) => part.part.case === "toolResult");
  }
  if (!answersTools || index < 0) return false;
  // Consecutive assistant messages become one turn, which opens with the first one's blocks.
  while (index > 0 && turns[index - 1].role === Role.ASSISTANT) index--;
  return !turns[index].content.some(isOwnSignedReasoning);
}

/** Reasoning Anthropic takes back: signed or sealed, and not by another protocol. */
function isOwnSignedReasoning(part: ContentPart): boolean {
  if (part.part.case !== "reasoning") return false;
  const { signature, redactedData, signedBy } = part.part.value;
  return (signature !== "" || redactedData !== "") && (signedBy === "" || signedBy === "anthropic");
}

/** The thinking the request asks for, whether or not it can be sent. */
function requestedThinking(call: UpstreamCall): ThinkingMode | undefined {
  const reasoning = call.request.reasoning;
  if (!reasoning || reasoning.enabled === false) return undefined;
  if (reasoning.maxTokens !== undefined) return "budget";
  if (upstreamEffort(call)) return "adaptive";
  return undefined;
}

/** tool_choice `required` or a named tool, sent as Anthropic's `any` or `tool` (only with tools). */
function forcesToolUse(request: GenerateRequest): boolean {
  const mode = request.toolChoice?.mode;
  return request.tools.length > 0 && (mode === ToolChoice_Mode.REQUIRED || mode === ToolChoice_Mode.NAMED);
}

function upstreamEffort({ request, route }: UpstreamCall): string | undefined {
  const effort = request.reasoning?.effort as keyof NonNullable<typeof route.reasoning_effort_map> | undefined;
  return effort ? route.reasoning_effort_map?.[effort] : undefined;
}

function convertThinking(call: UpstreamCall, thinking: ThinkingMode | undefined): JsonObject {
  // A Messages request's `display` (summarized, omitted) as it asked.
  const { thinkingDisplay } = anthropicOptions(call.request);
  const display: JsonObject = thinkingDisplay ? { display: thinkingDisplay } : {};
  switch (thinking) {
    case "budget":
      return { thinking: { type: "enabled", budget_tokens: call.request.reasoning!.maxTokens!, ...display } };
    case "adaptive":
      // Newer models size their own thinking; the effort goes in output_config.
      return { thinking: { type: "adaptive", ...display } };
    default:
      return {};
  }
}

/** Temperature, top_k, top_p and stop sequences; Anthropic has no seed or penalties, and refuses some fields while thinking. */
function convertSampling(sampling: SamplingParams | undefined, thinking: boolean, warnings: Warning[]): JsonObject {
  if (!sampling) return {};
  if (sampling.seed !== undefined) warnings.push(notCarried("seed"));
  if (sampling.frequencyPenalty !== undefined) warnings.push(notCarried("frequency_penalty"));
  if (sampling.presencePenalty !== undefined) warnings.push(notCarried("presence_penalty"));
  if (sampling.repetitionPenalty !== undefined) warnings.push(notCarried("repetition_penalty"));
  const refusedWhileThinking = (param: string, what = param) => warnings.push(warning("unsupported_parameter", param, `${what} is not accepted by Anthropic while thinking and was ignored`));
  const out: JsonObject = {};
  if (sampling.temperature !== undefined) {
    if (thinking) refusedWhileThinking("temperature");
    else {
      out.temperature = Math.min(sampling.temperature, MAX_TEMPERATURE);
      if (sampling.temperature > MAX_TEMPERATURE) {
        warnings.push(warning("adjusted_parameter", "temperature", `temperature ${sampling.temperature} is above Anthropic's maximum of ${MAX_TEMPERATURE} and was sent as ${MAX_TEMPERATURE}`));
      }
    }
  }
  if (sampling.topK !== undefined) {
    if (thinking) refusedWhileThinking("top_k");
    else out.top_k = sampling.topK;
  }
  if (sampling.topP !== undefined) {
    if (thinking && sampling.topP < MIN_TOP_P_WHILE_THINKING) refusedWhileThinking("top_p", `top_p below ${MIN_TOP_P_WHILE_THINKING}`);
    else out.top_p = sampling.topP;
  }
  if (sampling.stop.length > 0) out.stop_sequences = sampling.stop;
  return out;
}

function convertOutputConfig(call: UpstreamCall, thinking: ThinkingMode | undefined): JsonObject | undefined {
  const config: JsonObject = {};
  const effort = thinking === "adaptive" ? upstreamEffort(call) : undefined;
  if (effort) config.effort = effort;
  const format = call.request.responseFormat;
  if (format?.type === ResponseFormat_Type.JSON_SCHEMA) {
    config.format = { type: "json_schema", schema: format.schema ?? { type: "object" } };
  }
  return Object.keys(config).length > 0 ? config : undefined;
}

function convertTools(request: GenerateRequest): JsonObject {
  if (request.tools.length === 0 && request.serverTools.length === 0) return {};
  const out: JsonObject = {
    tools: [
      // A Messages request's own definition, when it had fields the hub's Tool does not carry.
      ...request.tools.map((tool) => nativeTool(tool) ?? customToolOf(tool)),
      ...request.serverTools.map(serverToolOf),
    ],
  };
  const choice = request.toolChoice;
  switch (choice?.mode) {
    case ToolChoice_Mode.AUTO:
      out.tool_choice = { type: "auto" };
      break;
    case ToolChoice_Mode.REQUIRED:
      out.tool_choice = { type: "any" };
      break;
    case ToolChoice_Mode.NONE:
      out.tool_choice = { type: "none" };
      break;
    case ToolChoice_Mode.NAMED:
      out.tool_choice = { type: "tool", name: choice.name };
      break;
  }
  if (request.parallelToolCalls === false && choice?.mode !== ToolChoice_Mode.NONE) {
    // Anthropic says it on the tool choice: at most one tool call per turn.
    out.tool_choice = { ...((out.tool_choice as JsonObject | undefined) ?? { type: "auto" }), disable_parallel_tool_use: true };
  }
  return out;
}

function customToolOf(tool: Tool): JsonObject {
  const definition: JsonObject = {
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    input_schema: tool.parameters ?? { type: "object" },
    ...(tool.strict ? { strict: true } : {}),
  };
  return withCacheControl(definition, tool.cacheControl);
}

/** A server tool: a Messages request's own definition as it came, else web search in Anthropic's terms. */
function serverToolOf(tool: ServerTool): JsonObject {
  const native = nativeServerTool(tool);
  if (native) return native;
  return {
    type: WEB_SEARCH_TOOL,
    name: "web_search",
    ...(tool.maxUses !== undefined ? { max_uses: tool.maxUses } : {}),
    ...(tool.allowedDomains.length > 0 ? { allowed_domains: tool.allowedDomains } : {}),
    ...(tool.blockedDomains.length > 0 ? { blocked_domains: tool.blockedDomains } : {}),
    ...(tool.userLocation ? { user_location: tool.userLocation } : {}),
  };
}

/** The web search tool version sent for a request in another format. */
const WEB_SEARCH_TOOL = "web_search_20250305";

// ---- system and messages ----

const isSystem = (message: Message) => message.role === Role.SYSTEM || message.role === Role.DEVELOPER;

/** System and developer text, block by block so cache breakpoints stay where they were. */
function convertSystem(request: GenerateRequest, warnings: Warning[]): JsonObject[] {
  const blocks = request.messages.filter(isSystem).flatMap((message) => message.content.flatMap(systemBlocksOf));
  if (request.responseFormat?.type === ResponseFormat_Type.JSON_OBJECT) {
    blocks.push({ type: "text", text: JSON_OBJECT_INSTRUCTION });
    warnings.push(warning("adjusted_parameter", "response_format", "Anthropic has no json_object mode: the system prompt asks for a single JSON object instead"));
  }
  return blocks;
}

/** A system block: a Messages request's own as it came, else its text. */
function systemBlocksOf(part: ContentPart): JsonObject[] {
  const original = nativeOriginal(part);
  if (original) return [original];
  return part.part.case === "text" && part.part.value.text ? [textBlock(part.part.value.text, part.cacheControl)] : [];
}

/**
 * What the message conversion leaves out, noted where it is decided and said once each,
 * in this order. Each is made per request, so no two requests share (and can
 * change) one Warning object.
 */
const CONTENT_DROPS = {
  audio: () => notCarried("messages", "audio input"),
  fileId: () => notCarried("messages", "a file given only by file_id"),
  unsignedReasoning: () => warning("unsupported_parameter", "messages", "earlier reasoning without an Anthropic signature cannot be sent back to Anthropic and was left out"),
  names: () => warning("unsupported_parameter", "messages", "message author names are not supported by the Anthropic protocol and were ignored"),
};
type ContentDrop = keyof typeof CONTENT_DROPS;

/**
 * User, assistant and tool turns in order. Tool results travel in a user turn,
 * and consecutive turns of one role are merged: Anthropic wants every result of
 * a tool-use turn in the one user message that follows it.
 */
function convertMessages(messages: Message[], warnings: Warning[]): JsonObject[] {
  const turns: { role: "user" | "assistant"; content: JsonObject[] }[] = [];
  const drops = new Set<ContentDrop>();
  const userBlocks = (part: ContentPart) => userBlocksOf(part, drops);
  for (const message of messages) {
    if (message.name) drops.add("names");
    if (isSystem(message)) continue;
    const role = message.role === Role.ASSISTANT ? "assistant" : "user";
    const content = role === "assistant" ? assistantBlocks(message, drops) : message.content.flatMap(userBlocks);
    // An empty turn is refused upstream; it carries nothing anyway.
    if (content.length === 0) continue;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...content);
    else turns.push({ role, content });
  }
  for (const [drop, dropWarning] of Object.entries(CONTENT_DROPS)) if (drops.has(drop as ContentDrop)) warnings.push(dropWarning());
  return turns;
}

/** Earlier reasoning first (Anthropic checks its signature), then text, then tool calls. */
function assistantBlocks(message: Message, drops: Set<ContentDrop>): JsonObject[] {
  const reasoning: JsonObject[] = [];
  const rest: JsonObject[] = [];
  for (const part of message.content) {
    // A Messages request's own block, as it came (routing left it for this protocol only).
    const own = nativeBlock(part);
    if (own) {
      (part.part.case === "reasoning" ? reasoning : rest).push(own);
      continue;
    }
    switch (part.part.case) {
      case "reasoning": {
        const { text, signature, redactedData, signedBy } = part.part.value;
        // Another protocol's signature or sealed reasoning is refused as invalid: left out like unsigned reasoning.
        if (signedBy && signedBy !== "anthropic") drops.add("unsignedReasoning");
        else if (redactedData) reasoning.push({ type: "redacted_thinking", data: redactedData });
        // Thinking without its signature is refused; another provider's reasoning has none and stays out.
        else if (signature) reasoning.push({ type: "thinking", thinking: text, signature });
        else drops.add("unsignedReasoning");
        break;
      }
      case "toolCall":
        rest.push(withCacheControl({ type: "tool_use", id: part.part.value.id, name: part.part.value.name, input: toolInput(part.part.value) }, part.cacheControl));
        break;
      default:
        rest.push(...userBlocksOf(part, drops));
    }
  }
  return [...reasoning, ...rest];
}

function userBlocksOf(part: ContentPart, drops: Set<ContentDrop>): JsonObject[] {
  const own = nativeBlock(part);
  if (own) return [own];
  const cache = part.cacheControl;
  switch (part.part.case) {
    case "text":
      return part.part.value.text ? [textBlock(part.part.value.text, cache)] : [];
    case "image":
      return [withCacheControl({ type: "image", source: mediaSource(part.part.value) }, cache)];
    case "file": {
      const file = part.part.value;
      const source = documentSource(file) ?? (file.url ? { type: "url", url: file.url } : undefined);
      const document = source && { type: "document", source, ...(file.filename ? { title: file.filename } : {}) };
      if (!document) drops.add("fileId");
      return document ? [withCacheControl(describedDocument(document, file), cache)] : [];
    }
    case "toolResult": {
      const { toolCallId, content, isError } = part.part.value;
      const blocks = content.flatMap((inner) => userBlocksOf(inner, drops));
      // A lone text result is sent as a string, the protocol's plain form.
      const resultContent: JsonValue = blocks.length === 1 && blocks[0].type === "text" && !blocks[0].cache_control ? blocks[0].text! : blocks;
      return [withCacheControl({ type: "tool_result", tool_use_id: toolCallId, content: resultContent, ...(isError ? { is_error: true } : {}) }, cache)];
    }
    case "audio":
      // Anthropic has no audio block.
      drops.add("audio");
      return [];
    default:
      // Tool calls and reasoning belong to assistant turns.
      return [];
  }
}

function textBlock(text: string, cache: CacheControl | undefined): JsonObject {
  return withCacheControl({ type: "text", text }, cache);
}

function withCacheControl(block: JsonObject, cache: CacheControl | undefined): JsonObject {
  if (!cache) return block;
  return { ...block, cache_control: cache.ttl ? { type: "ephemeral", ttl: cache.ttl } : { type: "ephemeral" } };
}

/** Image data (given as data or as a data URI) as base64, a web URL as a URL Anthropic fetches. */
function mediaSource(image: ImagePart): JsonObject {
  const data = imageData(image);
  return data ? { type: "base64", media_type: data.mimeType, data: data.data } : { type: "url", url: image.url };
}

/**
 * A file's data as a `document` source: plain text as text (a Messages text
 * document's as it came), PDFs as base64. Bare base64 without a type is taken
 * as a PDF, the file type chat clients send.
 */
function documentSource(file: FilePart): JsonObject | undefined {
  const content = fileContent(file, file.mimeType || "application/pdf");
  if (!content) return undefined;
  return "text" in content ? { type: "text", media_type: "text/plain", data: content.text } : { type: "base64", media_type: content.mimeType, data: content.data };
}

/** A document's title, context and citations switch, where the request gave them (a Messages request's document). */
function describedDocument(document: JsonObject, file: FilePart): JsonObject {
  return {
    ...document,
    ...(file.title ? { title: file.title } : {}),
    ...(file.context ? { context: file.context } : {}),
    ...(file.citations ? { citations: { enabled: true } } : {}),
  };
}

/** Tool-call arguments go up as an object: the format's own (a Messages tool_use input), or parsed from their text. */
function toolInput(call: ToolCallPart): JsonValue {
  return call.input ?? parseArguments(call.name, call.arguments);
}

/** Text that is not a JSON object is the caller's error, not the provider's. */
function parseArguments(name: string, text: string): JsonValue {
  try {
    const value = JSON.parse(text || "{}") as JsonValue;
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return value;
  } catch {
    // Reported below.
  }
  throw new UpstreamError(`the arguments of tool call ${name} are not a JSON object`, { status: 400, retryable: false, reason: "invalid_request" });
}
