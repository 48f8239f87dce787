// What the Anthropic protocol leaves out of a call, in words (the converter drops it).
import { ResponseFormat_Type } from "../../../gen/router/v1/inference_pb.js";
import type { UpstreamCall } from "../types.ts";
import { MAX_TEMPERATURE, MIN_TOP_P_WHILE_THINKING, forcesToolUse, requestedThinking, thinkingMode, toolLoopLacksThinking } from "./convert-request.ts";

export function anthropicWarnings(call: UpstreamCall): string[] {
  const { request } = call;
  const warnings: string[] = [];
  const ignored = (what: string, why = "is not supported by the Anthropic protocol") => warnings.push(`${what} ${why} and was ignored`);
  const sampling = request.sampling;
  if (sampling?.seed !== undefined) ignored("seed");
  if (sampling?.frequencyPenalty !== undefined) ignored("frequency_penalty");
  if (sampling?.presencePenalty !== undefined) ignored("presence_penalty");
  if (sampling?.repetitionPenalty !== undefined) ignored("repetition_penalty");
  if (requestedThinking(call) && forcesToolUse(request)) {
    warnings.push("reasoning was not sent: Anthropic does not allow thinking when tool_choice forces tool use (required or a named tool); the tool choice was kept");
  }
  if (requestedThinking(call) === "budget" && !forcesToolUse(request) && toolLoopLacksThinking(request)) {
    warnings.push("reasoning was not sent: with a thinking budget Anthropic wants the tool-calling turn this tool result answers to open with its signed thinking, which the conversation did not carry");
  }
  if (thinkingMode(call)) {
    const whileThinking = "is not accepted by Anthropic while thinking";
    if (sampling?.temperature !== undefined) ignored("temperature", whileThinking);
    if (sampling?.topK !== undefined) ignored("top_k", whileThinking);
    if (sampling?.topP !== undefined && sampling.topP < MIN_TOP_P_WHILE_THINKING) ignored(`top_p below ${MIN_TOP_P_WHILE_THINKING}`, whileThinking);
  } else if (sampling?.temperature !== undefined && sampling.temperature > MAX_TEMPERATURE) {
    warnings.push(`temperature ${sampling.temperature} is above Anthropic's maximum of ${MAX_TEMPERATURE} and was sent as ${MAX_TEMPERATURE}`);
  }
  if (request.responseFormat?.type === ResponseFormat_Type.JSON_OBJECT) {
    warnings.push("Anthropic has no json_object mode: the system prompt asks for a single JSON object instead");
  }
  const parts = request.messages.flatMap((message) => message.content);
  if (parts.some((part) => part.part.case === "audio")) ignored("audio input");
  if (parts.some((part) => part.part.case === "file" && !part.part.value.fileData)) ignored("a file given only by file_id");
  if (parts.some((part) => part.part.case === "reasoning" && !part.part.value.signature && !part.part.value.redactedData)) {
    warnings.push("earlier reasoning without an Anthropic signature cannot be sent back to Anthropic and was left out");
  }
  if (request.messages.some((message) => message.name)) warnings.push("message author names are not supported by the Anthropic protocol and were ignored");
  return warnings;
}
