// The estimated input tokens of a request on a route whose provider has no
// counting endpoint (OpenAI-compatible, simulator), or whose endpoint failed.
// Text is counted with gpt-tokenizer, the BPE tokenizer of OpenAI's models
// (o200k_base, or the model's own encoding when the library knows the model),
// and the chat is counted as OpenAI renders it (the library's per-message
// overhead and function-definition format). Media the tokenizer cannot see
// cost a fixed amount each, per protocol (its registry entry's token estimate).
// docs/count-tokens.md says all of it.
import type { ChatCompletionFunctionDefinition, ChatCompletionRequest, ChatMessage } from "gpt-tokenizer/functionCalling";
import { computeChatCompletionTokenCount } from "gpt-tokenizer/functionCalling";
import { DEFAULT_ENCODING, modelToEncodingMap, type EncodingName, type ModelName } from "gpt-tokenizer/mapping";
import { ResponseFormat_Type, Role, ToolChoice_Mode, type ContentPart, type GenerateRequest, type Message } from "../../gen/router/v1/inference_pb.js";
import { fileContent } from "../providers/data-uri.ts";
import type { MediaTokens } from "../providers/token-estimate.ts";
import { toolCallArguments } from "../providers/tool-call-arguments.ts";

export interface EstimateRoute {
  /** Fixed costs of media, per the route's protocol (its registry entry's token estimate). */
  media: MediaTokens;
  /** The upstream's model id when it is OpenAI's: a model the library knows picks its own encoding. */
  openAiModelId?: string;
}

export async function estimateInputTokens(request: GenerateRequest, route: EstimateRoute): Promise<number> {
  const countText = await textCounter(encodingFor(route.openAiModelId));
  const media = { image: 0, audio: 0, file: 0 };
  const chat: ChatCompletionRequest = {
    messages: request.messages.flatMap((message) => chatMessages(message, media)),
    ...(request.tools.length > 0 && { functions: request.tools.map(functionDefinition) }),
    ...functionCallOf(request),
  };
  const fixed = route.media;
  // A structured-output schema reaches the model with the prompt too.
  const schema = request.responseFormat?.type === ResponseFormat_Type.JSON_SCHEMA ? countText(JSON.stringify(request.responseFormat.schema ?? {})) : 0;
  return (
    computeChatCompletionTokenCount(chat, countText) + schema + media.image * fixed.image + media.audio * fixed.audio + media.file * fixed.file
  );
}

/** The encoding of an OpenAI model the library knows; else its default (o200k_base). */
function encodingFor(openAiModelId: string | undefined): EncodingName {
  if (!openAiModelId) return DEFAULT_ENCODING;
  // Aggregators prefix the vendor: openai/gpt-4.
  const bare = openAiModelId.slice(openAiModelId.lastIndexOf("/") + 1);
  return modelToEncodingMap[bare as ModelName] ?? DEFAULT_ENCODING;
}

type CountText = (text: string) => number;

/** The hub's roles as the tokenizer library's chat renders them (OpenAI's words: the estimate counts OpenAI's rendering, whatever the protocol). */
const CHAT_ROLES: Record<Role, NonNullable<ChatMessage["role"]>> = {
  [Role.UNSPECIFIED]: "user",
  [Role.SYSTEM]: "system",
  [Role.DEVELOPER]: "developer",
  [Role.USER]: "user",
  [Role.ASSISTANT]: "assistant",
  [Role.TOOL]: "tool",
};

// Each encoding's ranks are megabytes: loaded on first use, once.
const ENCODINGS: Record<EncodingName, () => Promise<{ countTokens: (text: string, options?: { disallowedSpecial?: Set<string> }) => number }>> = {
  o200k_base: () => import("gpt-tokenizer/encoding/o200k_base"),
  o200k_harmony: () => import("gpt-tokenizer/encoding/o200k_harmony"),
  cl100k_base: () => import("gpt-tokenizer/encoding/cl100k_base"),
  p50k_base: () => import("gpt-tokenizer/encoding/p50k_base"),
  p50k_edit: () => import("gpt-tokenizer/encoding/p50k_edit"),
  r50k_base: () => import("gpt-tokenizer/encoding/r50k_base"),
  gpt2: () => import("gpt-tokenizer/encoding/gpt2"),
};
const loaded = new Map<EncodingName, Promise<CountText>>();

/** Special-token text a caller writes (`<|endoftext|>`) is counted as the text it is, not refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

function textCounter(encoding: EncodingName): Promise<CountText> {
  let counter = loaded.get(encoding);
  if (!counter) {
    counter = ENCODINGS[encoding]().then((module) => (text: string) => (text ? module.countTokens(text, AS_TEXT) : 0));
    loaded.set(encoding, counter);
  }
  return counter;
}

/**
 * One message as OpenAI's chat sees it: its text, then one message per tool
 * call (the library counts a call per message). Earlier reasoning is left out:
 * providers drop it from the prompt or do not take it back.
 */
function chatMessages(message: Message, media: MediaTokens): ChatMessage[] {
  const role = CHAT_ROLES[message.role];
  const calls: ChatMessage[] = [];
  const text = message.content
    .map((part) => {
      if (part.part.case !== "toolCall") return textOf(part, media);
      calls.push({ role, content: "", function_call: { name: part.part.value.name, arguments: toolCallArguments(part.part.value) } });
      return "";
    })
    .filter(Boolean)
    .join("\n");
  const main: ChatMessage[] = text || calls.length === 0 ? [{ role, content: text, ...(message.name && { name: message.name }) }] : [];
  return [...main, ...calls];
}

/** The text a part puts in the prompt; media are tallied for their fixed cost. */
function textOf(part: ContentPart, media: MediaTokens): string {
  switch (part.part.case) {
    case "text":
      return part.part.value.text;
    case "image":
      media.image++;
      return "";
    case "audio":
      media.audio++;
      return "";
    case "file": {
      const { mimeType, title, context } = part.part.value;
      const content = fileContent(part.part.value, mimeType);
      const body = content && "text" in content ? content.text : (media.file++, "");
      return [title, context, body].filter(Boolean).join("\n");
    }
    case "toolResult":
      return part.part.value.content.map((inner) => textOf(inner, media)).join("\n");
    case "native":
      // A block of the caller's format the hub does not model: its JSON is what is sent.
      return JSON.stringify(part.part.value.block ?? {});
    default:
      // Reasoning (see chatMessages); tool calls are their own messages.
      return "";
  }
}

function functionDefinition(tool: GenerateRequest["tools"][number]): ChatCompletionFunctionDefinition {
  return {
    name: tool.name,
    ...(tool.description && { description: tool.description }),
    ...(tool.parameters && { parameters: tool.parameters as unknown as ChatCompletionFunctionDefinition["parameters"] }),
  };
}

function functionCallOf(request: GenerateRequest): Pick<ChatCompletionRequest, "function_call"> {
  if (request.tools.length === 0) return {};
  switch (request.toolChoice?.mode) {
    case ToolChoice_Mode.NONE:
      return { function_call: "none" };
    case ToolChoice_Mode.NAMED:
      return { function_call: { name: request.toolChoice.name } };
    default:
      return {};
  }
}
