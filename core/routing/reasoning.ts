// Resolves a request's reasoning options against what one provider offers
// (its reasoningEffortMap), saying in words whatever had to change.
import { create } from "@bufbuild/protobuf";
import { ReasoningOptionsSchema, type GenerateRequest, type ReasoningOptions } from "../../gen/router/v1/inference_pb.js";
import type { ProviderRoute } from "../catalogue/catalogue.ts";

const LEVELS = ["none", "minimal", "low", "medium", "high"] as const;
type Level = (typeof LEVELS)[number];

export interface ResolvedReasoning {
  reasoning: ReasoningOptions | undefined;
  warnings: string[];
}

/**
 * The effort the provider will get, as one of its own map's levels:
 * - `enabled: false` asks for `none` (a model that always reasons keeps its default);
 * - `max_tokens` becomes the effort whose share of the completion budget is
 *   nearest (the spec: low, medium, high are about 20%, 50%, 80% of max_tokens);
 * - a level the model does not offer moves to the nearest stronger one.
 */
export function resolveReasoning(request: GenerateRequest, route: ProviderRoute): ResolvedReasoning {
  const requested = request.reasoning;
  const map = route.route.reasoning_effort_map ?? {};
  const offered = LEVELS.filter((level) => map[level] !== undefined);
  if (!requested || offered.length === 0) {
    const warnings = requested?.effort || requested?.maxTokens !== undefined
      ? [`${route.model.id} on ${route.provider.id} reasons at a fixed effort; the requested effort was not applied`]
      : [];
    return { reasoning: requested, warnings };
  }
  const warnings: string[] = [];
  let wanted: Level;
  if (requested.enabled === false) {
    wanted = "none";
  } else if (requested.effort) {
    wanted = requested.effort as Level;
  } else if (requested.maxTokens !== undefined) {
    const budget = request.sampling?.maxTokens ?? route.maxCompletionTokens;
    wanted = effortForShare(requested.maxTokens / budget);
    warnings.push(`reasoning.max_tokens ${requested.maxTokens} was sent to ${route.provider.id} as effort "${wanted}"`);
  } else {
    return { reasoning: requested, warnings };
  }
  const effort = nearestOffered(wanted, offered);
  if (effort !== wanted) {
    warnings.push(
      wanted === "none" && effort !== "none"
        ? `reasoning cannot be turned off on ${route.model.id}; effort "${effort}" was used`
        : `effort "${wanted}" is not offered by ${route.model.id} on ${route.provider.id}; "${effort}" was used`,
    );
  }
  return { reasoning: create(ReasoningOptionsSchema, { ...requested, effort, maxTokens: undefined }), warnings };
}

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
