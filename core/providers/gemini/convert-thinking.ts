// ReasoningOptions -> generationConfig.thinkingConfig.
//
// Gemini 3 takes a `thinkingLevel` (the route's reasoning_effort_map gives the
// level names), Gemini 2.5 a `thinkingBudget` in tokens; the two must not be
// sent together. `includeThoughts` asks for the thought summaries, which the
// router relays as reasoning. A budget of 0 turns thinking off on 2.5 Flash and
// Flash-Lite; 2.5 Pro (budget 128..32768) and the Gemini 3 Pro models cannot
// stop thinking and refuse 0, so they get their lowest budget.
import type { JsonObject } from "@bufbuild/protobuf";
import type { Warning } from "../../../gen/router/v1/inference_pb.js";
import { warning } from "../../warnings.ts";
import type { UpstreamCall } from "../types.ts";

const ALWAYS_THINKS = /^(models\/)?gemini-(2\.5|3(\.\d+)?)-pro/;
const LOWEST_THINKING_BUDGET = 128;

function alwaysThinks(modelId: string): boolean {
  return ALWAYS_THINKS.test(modelId);
}

/**
 * The documented thinkingBudget ranges of the 2.5 models, which refuse a budget
 * outside them ("The thinking budget (N) is invalid."). Routing sizes budgets up
 * to 32000, past Flash's 24576, so a budget is brought into the model's range.
 */
const BUDGET_RANGES: { model: RegExp; min: number; max: number }[] = [
  { model: /^(models\/)?gemini-2\.5-pro/, min: LOWEST_THINKING_BUDGET, max: 32768 },
  { model: /^(models\/)?gemini-2\.5-flash-lite/, min: 512, max: 24576 },
  { model: /^(models\/)?gemini-2\.5-flash/, min: 1, max: 24576 },
];

/** The budget the model takes nearest to the one asked (as asked for models without a documented range). */
function fitThinkingBudget(modelId: string, budget: number): number {
  const range = BUDGET_RANGES.find((candidate) => candidate.model.test(modelId));
  return range ? Math.min(Math.max(budget, range.min), range.max) : budget;
}

/** The thinkingConfig, or undefined when the caller asked nothing of reasoning; a budget the model cannot take is said in warnings. */
export function convertThinking(call: UpstreamCall, warnings: Warning[]): JsonObject | undefined {
  const reasoning = call.request.reasoning;
  if (!reasoning) return undefined;
  const effort = reasoning.effort as keyof NonNullable<UpstreamCall["route"]["reasoning_effort_map"]>;
  const level = reasoning.effort ? call.route.reasoning_effort_map?.[effort] : undefined;
  const showThoughts = reasoning.enabled !== false;
  if (level) return showThoughts ? { thinkingLevel: level, includeThoughts: true } : { thinkingLevel: level };
  const model = call.route.provider_model_id;
  if (reasoning.maxTokens !== undefined) {
    const budget = fitThinkingBudget(model, reasoning.maxTokens);
    if (budget !== reasoning.maxTokens) {
      const side = budget < reasoning.maxTokens ? "above" : "below";
      warnings.push(
        warning("adjusted_parameter", "reasoning", `a thinking budget of ${reasoning.maxTokens} tokens is ${side} ${model}'s ${side === "above" ? "maximum" : "minimum"}; ${budget} was sent`),
      );
    }
    return { thinkingBudget: budget, includeThoughts: true };
  }
  if (!showThoughts && alwaysThinks(model)) {
    warnings.push(warning("adjusted_parameter", "reasoning", `reasoning cannot be turned off on ${model}; its lowest thinking budget (${LOWEST_THINKING_BUDGET}) was used`));
    return { thinkingBudget: LOWEST_THINKING_BUDGET };
  }
  if (!showThoughts) return { thinkingBudget: 0 };
  return { includeThoughts: true };
}
