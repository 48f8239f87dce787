// GenerateRequest -> the body of POST {base_url}/interactions, with a warning
// for each field the protocol cannot carry, decided where the body is built.
// The answer is always streamed (`stream: true`: one parser, and the first
// byte comes at once), and stored upstream (`store`) exactly when the caller
// keeps it; a continuation of an interaction the upstream keeps names it
// (`previous_interaction_id`) and sends only the new messages (continuation.ts).
import type { JsonObject } from "@bufbuild/protobuf";
import { ResponseFormat_Type, ToolChoice_Mode, type GenerateRequest, type Warning } from "../../../gen/router/v1/inference_pb.js";
import type { ConvertedRequest, UpstreamCall } from "../types.ts";
import { audioPromptMessage } from "../gemini/convert-request.ts";
import { isStored, splitKept } from "./continuation.ts";
import { convertMessages } from "./convert-steps.ts";
import { notCarried } from "./not-carried.ts";
import { interactionsOptionFields } from "./provider-options.ts";

export function convertRequest(call: UpstreamCall): ConvertedRequest {
  const { request } = call;
  const warnings: Warning[] = [];
  const audioPrompt = audioPromptMessage(request.media);
  const { sent, kept } = splitKept(request);
  const { systemInstruction, steps } = convertMessages(audioPrompt ? [...sent, audioPrompt] : sent, warnings, kept);
  const body: JsonObject = { model: call.route.provider_model_id.replace(/^models\//, ""), input: steps };
  const upstream = request.conversation?.upstream;
  if (upstream) body.previous_interaction_id = upstream.upstreamId;
  if (systemInstruction) body.system_instruction = systemInstruction;
  const tools = convertTools(request, warnings);
  if (tools) body.tools = tools;
  const generationConfig = convertGenerationConfig(call, warnings);
  if (generationConfig) body.generation_config = generationConfig;
  const responseFormat = convertResponseFormat(request);
  if (responseFormat) body.response_format = responseFormat;
  Object.assign(body, interactionsOptionFields(request));
  body.stream = true;
  body.store = isStored(request);
  return { body, warnings };
}

/** Function tools; the protocol has no strict schemas and cannot limit a turn to one call. */
function convertTools(request: GenerateRequest, warnings: Warning[]): JsonObject[] | undefined {
  if (request.tools.length === 0) return undefined;
  if (request.tools.some((tool) => tool.strict)) warnings.push(notCarried("tools", "strict tool schemas", true));
  if (request.parallelToolCalls === false) warnings.push(notCarried("parallel_tool_calls", "parallel_tool_calls: false"));
  return request.tools.map((tool) => ({
    type: "function",
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    // JSON Schema as it is.
    ...(tool.parameters ? { parameters: tool.parameters } : {}),
  }));
}

/**
 * Sampling, thinking and tool choice. `temperature` and `top_p` are sent as
 * asked: @google/genai 3.3.0 still declares them (deprecated). Top-k and the
 * penalties have no place in the Interactions generation config.
 */
function convertGenerationConfig(call: UpstreamCall, warnings: Warning[]): JsonObject | undefined {
  const { request } = call;
  const config: JsonObject = {};
  const sampling = request.sampling;
  if (sampling) {
    if (sampling.temperature !== undefined) config.temperature = sampling.temperature;
    if (sampling.topP !== undefined) config.top_p = sampling.topP;
    // No completion limit needed: without one the model uses its own.
    if (sampling.maxTokens !== undefined) config.max_output_tokens = sampling.maxTokens;
    if (sampling.seed !== undefined) config.seed = Number(sampling.seed);
    if (sampling.stop.length > 0) config.stop_sequences = sampling.stop;
    if (sampling.topK !== undefined) warnings.push(notCarried("top_k"));
    if (sampling.presencePenalty !== undefined) warnings.push(notCarried("presence_penalty"));
    if (sampling.frequencyPenalty !== undefined) warnings.push(notCarried("frequency_penalty"));
    if (sampling.repetitionPenalty !== undefined) warnings.push(notCarried("repetition_penalty"));
  }
  Object.assign(config, convertThinking(call));
  if (request.tools.length > 0) {
    const toolChoice = convertToolChoice(request);
    if (toolChoice !== undefined) config.tool_choice = toolChoice;
  }
  return Object.keys(config).length > 0 ? config : undefined;
}

/**
 * The route's level for the effort (its reasoning_effort_map: the protocol
 * takes levels only, `minimal` to `high`), and the thought summaries the
 * router relays as reasoning (`thinking_summaries: auto`), unless reasoning
 * was turned off. Without a level the model thinks at its own default
 * (routing has said so in a warning).
 */
function convertThinking({ request, route }: UpstreamCall): JsonObject {
  const reasoning = request.reasoning;
  if (!reasoning) return {};
  const effort = reasoning.effort as keyof NonNullable<UpstreamCall["route"]["reasoning_effort_map"]>;
  const level = reasoning.effort ? route.reasoning_effort_map?.[effort] : undefined;
  const off = reasoning.enabled === false || reasoning.effort === "none";
  return { ...(level ? { thinking_level: level } : {}), thinking_summaries: off ? "none" : "auto" };
}

function convertToolChoice(request: GenerateRequest): JsonObject | string | undefined {
  switch (request.toolChoice?.mode) {
    case ToolChoice_Mode.AUTO:
      return "auto";
    case ToolChoice_Mode.NONE:
      return "none";
    case ToolChoice_Mode.REQUIRED:
      return "any";
    case ToolChoice_Mode.NAMED:
      return { allowed_tools: { mode: "any", tools: [request.toolChoice.name] } };
    default:
      return undefined;
  }
}

/**
 * `response_format`: text as JSON (with its schema, as JSON Schema), and an
 * image beside the text when the caller gave an image model its aspect ratio
 * (a list of formats asks for both modalities); plain text needs none. A video
 * answer is the video alone, inline: its bytes come in the interaction.
 */
function convertResponseFormat(request: GenerateRequest): JsonObject | JsonObject[] | undefined {
  const video = request.media?.video;
  if (video) {
    return { type: "video", ...(video.aspectRatio && { aspect_ratio: video.aspectRatio }), ...(video.resolution && { resolution: video.resolution }), delivery: "inline" };
  }
  const format = request.responseFormat;
  let text: JsonObject | undefined;
  if (format?.type === ResponseFormat_Type.JSON_OBJECT || format?.type === ResponseFormat_Type.JSON_SCHEMA) {
    text = { type: "text", mime_type: "application/json", ...(format.type === ResponseFormat_Type.JSON_SCHEMA && format.schema ? { schema: format.schema } : {}) };
  }
  const aspectRatio = request.media?.aspectRatio;
  if (!aspectRatio) return text;
  // Inline: the image's bytes come in the stream (a URI would be a file the hub cannot relay).
  return [text ?? { type: "text" }, { type: "image", aspect_ratio: aspectRatio, delivery: "inline" }];
}
