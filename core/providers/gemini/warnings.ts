// What the Gemini protocol leaves out of a call, in words (the converters drop it).
import { Role } from "../../../gen/router/v1/inference_pb.js";
import type { UpstreamCall } from "../types.ts";
import { isFetchableUri } from "./convert-contents.ts";
import { alwaysThinks, fitThinkingBudget, LOWEST_THINKING_BUDGET } from "./convert-thinking.ts";
import { parseDataUri } from "../data-uri.ts";

export function geminiWarnings(call: UpstreamCall): string[] {
  const { request, route } = call;
  const warnings: string[] = [];
  const ignored = (what: string, isPlural = false) =>
    warnings.push(`${what} ${isPlural ? "are" : "is"} not supported by the Gemini protocol and ${isPlural ? "were" : "was"} ignored`);

  if (request.sampling?.repetitionPenalty !== undefined) ignored("repetition_penalty");
  if (request.tools.some((tool) => tool.strict)) ignored("strict tool schemas", true);
  if (request.tools.length > 0 && request.parallelToolCalls === false) ignored("parallel_tool_calls: false");

  const reasoning = request.reasoning;
  const hasLevel = reasoning?.effort && route.reasoning_effort_map?.[reasoning.effort as keyof typeof route.reasoning_effort_map];
  if (reasoning?.enabled === false && !hasLevel && reasoning.maxTokens === undefined && alwaysThinks(route.provider_model_id)) {
    warnings.push(`reasoning cannot be turned off on ${route.provider_model_id}; its lowest thinking budget (${LOWEST_THINKING_BUDGET}) was used`);
  }
  const budget = reasoning?.maxTokens;
  const sentBudget = budget === undefined ? undefined : fitThinkingBudget(route.provider_model_id, budget);
  if (!hasLevel && budget !== undefined && sentBudget !== budget) {
    const side = sentBudget! < budget ? "above" : "below";
    warnings.push(`a thinking budget of ${budget} tokens is ${side} ${route.provider_model_id}'s ${side === "above" ? "maximum" : "minimum"}; ${sentBudget} was sent`);
  }

  const parts = request.messages.flatMap((message) => message.content.map((part) => ({ role: message.role, part })));
  if (request.messages.some((message) => message.name)) ignored("message author names", true);
  const systemRoles = new Set([Role.SYSTEM, Role.DEVELOPER]);
  if (parts.some(({ role, part }) => systemRoles.has(role) && part.part.case !== "text")) {
    warnings.push("non-text content of system messages is not supported by the Gemini protocol and was left out");
  }
  if (parts.some(({ part }) => part.part.case === "reasoning" && (part.part.value.text || part.part.value.redactedData))) {
    warnings.push("Gemini takes no reasoning as input: earlier reasoning text was left out (its thought signatures were kept)");
  }
  if (parts.some(({ part }) => part.part.case === "image" && part.part.value.detail && part.part.value.detail !== "auto")) ignored("image detail");
  if (parts.some(({ part }) => part.part.case === "image" && !parseDataUri(part.part.value.url) && !isFetchableUri(part.part.value.url))) {
    warnings.push("images must be data URIs or http(s)/gs URLs for the Gemini protocol; others were left out");
  }
  return warnings;
}
