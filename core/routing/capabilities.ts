// What a request needs of a provider route (chat, tools, structured output, input
// modalities, room in the context and completion limits), so routing can skip
// the routes that would refuse it and say which capability was missing.
import { ResponseFormat_Type, type ContentPart, type GenerateRequest } from "../../gen/router/v1/inference_pb.js";
import { supportedParametersOf, type ProviderRoute } from "../catalogue/catalogue.ts";
import { toolCallArguments } from "../providers/tool-call-arguments.ts";

export interface Requirement {
  /** Machine-readable, for the routing trace: `tools`, `image_input`, `context_length`. */
  reason: string;
  /** The request parameter that needs it, as the public format names it. */
  param: string;
  /** What is missing, in words: "tool calling", "image input". */
  description: string;
  isMetBy(route: ProviderRoute): boolean;
}

/**
 * A server tool the route's protocol must run: `web_search` where the protocol
 * has it; any other (an Anthropic tool type the hub does not model) on the
 * request format's own protocol only.
 */
function serverToolRequirement(name: string, request: GenerateRequest): Requirement {
  return {
    reason: "server_tool",
    param: "tools",
    description: `the ${name} server tool`,
    isMetBy: (route) => route.capabilities.serverTools.includes(name) || route.capabilities.nativeFormat === request.format,
  };
}

/**
 * Characters per token assumed when estimating the prompt's size. Real
 * tokenizers average about 4 for English and fewer for code and other scripts;
 * 5 keeps the estimate low, so a request is refused only when it is clearly too long.
 */
const CHARACTERS_PER_TOKEN = 5;

/** A chat request goes to routes whose protocol serves chat: a media-only protocol (images, videos) has no chat adapter. */
const CHAT: Requirement = {
  reason: "not_a_chat_protocol",
  param: "model",
  description: "a provider that serves chat (its providers make images or videos only, through the media task endpoints)",
  isMetBy: (route) => route.capabilities.chat !== false,
};

/** A video answer (MediaOptions.video) goes to routes whose model makes videos and whose protocol can ask for one. */
const VIDEO_OUTPUT: Requirement = {
  reason: "video_output",
  param: "response_format",
  description: "video output",
  isMetBy: (route) => route.capabilities.mediaOptions.includes("video") && route.model.output_modalities.includes("video"),
};

export function requirementsOf(request: GenerateRequest): Requirement[] {
  const requirements: Requirement[] = [CHAT];
  if (request.media?.video) requirements.push(VIDEO_OUTPUT);
  if (request.tools.length > 0) requirements.push(parameterRequirement("tools", "tools", "tool calling"));
  if (request.responseFormat && request.responseFormat.type !== ResponseFormat_Type.UNSPECIFIED) {
    requirements.push(parameterRequirement("response_format", "response_format", "structured output (response_format)"));
  }
  for (const input of INPUT_KINDS) {
    const param = firstPartOf(request, input.partCase);
    if (param) {
      requirements.push({
        reason: `${input.name}_input`,
        param,
        description: `${input.name} input`,
        isMetBy: (route) => input.modalities.some((modality) => route.model.input_modalities.includes(modality)),
      });
    }
  }
  for (const tool of request.serverTools) requirements.push(serverToolRequirement(tool.name, request));
  const maxTokens = request.sampling?.maxTokens;
  if (maxTokens !== undefined) {
    requirements.push({
      reason: "max_completion_tokens",
      param: "max_tokens",
      description: `a completion limit of at least ${maxTokens} tokens`,
      isMetBy: (route) => route.maxCompletionTokens >= maxTokens,
    });
  }
  const promptTokens = estimatePromptTokens(request);
  const needed = promptTokens + (maxTokens ?? 0);
  requirements.push({
    reason: "context_length",
    param: "messages",
    description: `a context of at least ${needed} tokens (about ${promptTokens} in the prompt${maxTokens === undefined ? "" : ` and ${maxTokens} to complete`})`,
    isMetBy: (route) => route.contextLength >= needed,
  });
  return requirements;
}

function parameterRequirement(parameter: string, param: string, description: string): Requirement {
  return { reason: parameter, param, description, isMetBy: (route) => supportedParametersOf(route).includes(parameter) };
}

/** Content kinds that need a matching input modality; `file` covers PDFs, which some models list as `pdf`. */
const INPUT_KINDS = [
  { name: "image", partCase: "image", modalities: ["image"] },
  { name: "audio", partCase: "audio", modalities: ["audio"] },
  { name: "file", partCase: "file", modalities: ["file", "pdf"] },
] as const;

/** `messages[i].content[j]` of the first part of this kind (tool results included), if any. */
function firstPartOf(request: GenerateRequest, partCase: ContentPart["part"]["case"]): string | undefined {
  for (const [m, message] of request.messages.entries()) {
    for (const [p, part] of message.content.entries()) {
      if (part.part.case === partCase) return `messages[${m}].content[${p}]`;
      if (part.part.case === "toolResult" && part.part.value.content.some((inner) => inner.part.case === partCase)) {
        return `messages[${m}].content`;
      }
    }
  }
  return undefined;
}

/** Text, tool calls and tool definitions; media are not counted (their cost is the provider's to tell). */
export function estimatePromptTokens(request: GenerateRequest): number {
  let characters = 0;
  const countPart = (part: ContentPart) => {
    switch (part.part.case) {
      case "text":
        characters += part.part.value.text.length;
        break;
      case "toolCall":
        characters += part.part.value.name.length + toolCallArguments(part.part.value).length;
        break;
      case "toolResult":
        part.part.value.content.forEach(countPart);
        break;
      case "reasoning":
        characters += part.part.value.text.length;
        break;
    }
  };
  for (const message of request.messages) message.content.forEach(countPart);
  for (const tool of request.tools) {
    characters += tool.name.length + tool.description.length + (tool.parameters ? JSON.stringify(tool.parameters).length : 0);
  }
  return Math.ceil(characters / CHARACTERS_PER_TOKEN);
}
