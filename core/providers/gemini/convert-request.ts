// GenerateRequest -> the body of POST {base_url}/models/{model}:generateContent
// (and :streamGenerateContent, which takes the same body), with a warning for
// each field the protocol cannot carry, decided where the body is built.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { MessageSchema, Role, ToolChoice_Mode, type GenerateRequest, type MediaOptions, type Message, type Warning } from "../../../gen/router/v1/inference_pb.js";
import type { ConvertedRequest, UpstreamCall } from "../types.ts";
import { convertMessages } from "./convert-contents.ts";
import { convertGenerationConfig } from "./convert-generation-config.ts";
import { notCarried } from "./not-carried.ts";
import { geminiOptions } from "./provider-options.ts";

export function convertRequest(call: UpstreamCall): ConvertedRequest {
  const { request } = call;
  const warnings: Warning[] = [];
  // Gemini has no repetition penalty (generationConfig has presence and frequency ones).
  if (request.sampling?.repetitionPenalty !== undefined) warnings.push(notCarried("repetition_penalty"));
  const tools = convertTools(request, warnings);
  const generationConfig = convertGenerationConfig(call, warnings);
  const audioPrompt = audioPromptMessage(request.media);
  const { systemInstruction, contents } = convertMessages(audioPrompt ? [...request.messages, audioPrompt] : request.messages, warnings);
  const body: JsonObject = { contents };
  if (systemInstruction) body.systemInstruction = systemInstruction;
  Object.assign(body, tools);
  if (generationConfig) body.generationConfig = generationConfig;
  const { safetySettings } = geminiOptions(request);
  if (safetySettings.length > 0) body.safetySettings = safetySettings;
  return { body, warnings };
}

/** Function declarations and the tool choice; Gemini has no strict schemas and cannot limit a turn to one call. */
function convertTools(request: GenerateRequest, warnings: Warning[]): JsonObject {
  const body: JsonObject = {};
  if (request.tools.some((tool) => tool.strict)) warnings.push(notCarried("tools", "strict tool schemas", true));
  if (request.tools.length > 0 && request.parallelToolCalls === false) warnings.push(notCarried("parallel_tool_calls", "parallel_tool_calls: false"));
  if (request.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          ...(tool.description ? { description: tool.description } : {}),
          // parametersJsonSchema takes JSON Schema as it is; `parameters` is an OpenAPI subset.
          ...(tool.parameters ? { parametersJsonSchema: tool.parameters } : {}),
        })),
      },
    ];
    const functionCallingConfig = convertToolChoice(request);
    if (functionCallingConfig) body.toolConfig = { functionCallingConfig };
  }
  // Web search is Grounding with Google Search, which takes no options: the rest is said not carried.
  const webSearch = request.serverTools.find((tool) => tool.name === "web_search");
  if (webSearch) {
    body.tools = [...((body.tools as JsonObject[] | undefined) ?? []), { googleSearch: {} }];
    if (webSearch.maxUses !== undefined || webSearch.allowedDomains.length > 0 || webSearch.blockedDomains.length > 0 || webSearch.userLocation) {
      warnings.push(notCarried("tools", "web search options (max_uses, allowed and blocked domains, user location)"));
    }
  }
  return body;
}

function convertToolChoice(request: GenerateRequest): JsonObject | undefined {
  switch (request.toolChoice?.mode) {
    case ToolChoice_Mode.AUTO:
      return { mode: "AUTO" };
    case ToolChoice_Mode.NONE:
      return { mode: "NONE" };
    case ToolChoice_Mode.REQUIRED:
      return { mode: "ANY" };
    case ToolChoice_Mode.NAMED:
      return { mode: "ANY", allowedFunctionNames: [request.toolChoice.name] };
    default:
      return undefined;
  }
}

/**
 * The chat's `prompt` and `duration` for an audio-generating model. Gemini's
 * music models (Lyria) take both from the prompt text, so they become a last
 * user turn (merged into the one before it when that is the user's too).
 */
export function audioPromptMessage(media: MediaOptions | undefined): Message | undefined {
  if (!media || (!media.audioPrompt && media.durationSeconds === undefined)) return undefined;
  const length = media.durationSeconds === undefined ? "" : `Length: ${media.durationSeconds} seconds.`;
  const text = [media.audioPrompt, length].filter(Boolean).join(" ");
  return create(MessageSchema, { role: Role.USER, content: [{ part: { case: "text", value: { text } } }] });
}
