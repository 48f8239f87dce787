// Resolves a request's reasoning options against what one provider offers
// (its reasoningEffortMap), saying in words whatever had to change.
import { create } from "@bufbuild/protobuf";
import { ReasoningOptionsSchema, type GenerateRequest, type ReasoningOptions, type Warning } from "../../gen/router/v1/inference_pb.js";
import type { ProviderRoute } from "../catalogue/catalogue.ts";
import { warning } from "../warnings.ts";

const LEVELS = ["none", "minimal", "low", "medium", "high"] as const;
type Level = (typeof LEVELS)[number];

export interface ResolvedReasoning {
  reasoning: ReasoningOptions | undefined;
  warnings: Warning[];
}

/** The spec: low, medium and high are about 20%, 50% and 80% of max_tokens. */
const EFFORT_SHARE: Record<Exclude<Level, "none">, number> = { minimal: 0.1, low: 0.2, medium: 0.5, high: 0.8 };

/** The spec's bounds of reasoning.max_tokens, which are Anthropic's too (a budget of at least 1024). */
export const MIN_REASONING_BUDGET = 1024;
export const MAX_REASONING_BUDGET = 32000;

/**
 * Routes with an effort map get an effort; without one, a protocol that sizes
 * thinking by a token budget (its descriptor's `reasoning: "budget"`) gets a
 * budget, and anything else reasons at the model's fixed effort.
 */
export function resolveReasoning(request: GenerateRequest, route: ProviderRoute): ResolvedReasoning {
  const hasEffortMap = Object.keys(route.route.reasoning_effort_map ?? {}).length > 0;
  if (!hasEffortMap && route.capabilities.reasoning === "budget") return resolveBudget(request, route);
  return resolveEffort(request, route);
}

/**
 * The budget the provider will get: `max_tokens` as asked, or the effort's
 * share of the completion limit, kept within the spec's bounds and below the
 * completion limit (a provider refuses a budget that leaves no room to answer).
 */
function resolveBudget(request: GenerateRequest, route: ProviderRoute): ResolvedReasoning {
  const requested = request.reasoning;
  if (!requested) return { reasoning: undefined, warnings: [] };
  if (requested.enabled === false || requested.effort === "none") {
    return { reasoning: create(ReasoningOptionsSchema, { exclude: requested.exclude, enabled: false }), warnings: [] };
  }
  const limit = request.sampling?.maxTokens ?? route.maxCompletionTokens;
  const level = (requested.effort || "medium") as Exclude<Level, "none">;
  const wanted = requested.maxTokens ?? Math.floor(EFFORT_SHARE[level] * limit);
  const budget = Math.min(Math.max(wanted, MIN_REASONING_BUDGET), MAX_REASONING_BUDGET, limit - 1);
  if (budget < MIN_REASONING_BUDGET) {
    return {
      reasoning: create(ReasoningOptionsSchema, { exclude: requested.exclude, enabled: false }),
      warnings: [adjusted(`max_tokens ${limit} leaves no room for a reasoning budget of at least ${MIN_REASONING_BUDGET} on ${route.model.id}; reasoning was turned off`)],
    };
  }
  return { reasoning: create(ReasoningOptionsSchema, { maxTokens: budget, exclude: requested.exclude, enabled: true }), warnings: [] };
}

/**
 * The effort the provider will get, as one of its own map's levels:
 * - `enabled: false` asks for `none` (a model that always reasons keeps its default);
 * - `max_tokens` becomes the effort whose share of the completion budget is
 *   nearest (the spec: low, medium, high are about 20%, 50%, 80% of max_tokens);
 * - a level the model does not offer moves to the nearest stronger one.
 */
function resolveEffort(request: GenerateRequest, route: ProviderRoute): ResolvedReasoning {
  const requested = request.reasoning;
  const map = route.route.reasoning_effort_map ?? {};
  const offered = LEVELS.filter((level) => map[level] !== undefined);
  if (!requested || offered.length === 0) {
    const warnings = requested?.effort || requested?.maxTokens !== undefined
      ? [warning("unsupported_parameter", "reasoning", `${route.model.id} on ${route.provider.id} reasons at a fixed effort; the requested effort was not applied`)]
      : [];
    return { reasoning: requested, warnings };
  }
  const warnings: Warning[] = [];
  let wanted: Level;
  if (requested.enabled === false) {
    wanted = "none";
  } else if (requested.effort) {
    wanted = requested.effort as Level;
  } else if (requested.maxTokens !== undefined) {
    const budget = request.sampling?.maxTokens ?? route.maxCompletionTokens;
    wanted = effortForShare(requested.maxTokens / budget);
    warnings.push(adjusted(`reasoning.max_tokens ${requested.maxTokens} was sent to ${route.provider.id} as effort "${wanted}"`));
  } else {
    return { reasoning: requested, warnings };
  }
  const effort = nearestOffered(wanted, offered);
  if (effort !== wanted) {
    warnings.push(
      adjusted(
        wanted === "none" && effort !== "none"
          ? `reasoning cannot be turned off on ${route.model.id}; effort "${effort}" was used`
          : `effort "${wanted}" is not offered by ${route.model.id} on ${route.provider.id}; "${effort}" was used`,
      ),
    );
  }
  return { reasoning: create(ReasoningOptionsSchema, { ...requested, effort, maxTokens: undefined }), warnings };
}

const adjusted = (message: string) => warning("adjusted_parameter", "reasoning", message);

function effortForShare(share: number): Level {
  if (share <= 0.35) return "low";
  if (share <= 0.65) return "medium";
  return "high";
}

function nearestOffered(wanted: Level, offered: Level[]): Level {
  if (offered.includes(wanted)) return wanted;
  const index = LEVELS.indexOf(wanted);
  return offered.find((level) => LEVELS.indexOf(level) > index) ?? offered[offered.length - 1];
}
