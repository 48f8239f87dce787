// Model selection (router/auto, POST /api/v1/model/selection): filter the
// catalogue to the models that can serve the request, classify the prompt,
// rank the candidates. Deterministic: the same input and catalogue give the
// same answer, and each candidate says why it stands where it does.
import { Role, type Message } from "../../gen/router/v1/inference_pb.js";
import { supportedParametersOf, type Catalogue } from "../catalogue/catalogue.ts";
import { DEFAULT_PREFERENCE } from "../config/selection.ts";
import { classifyWithSignals, estimateTokens } from "./classify.ts";
import { describeExcluded, filterCandidates, type FilterOptions, type SelectionNeeds } from "./filter.ts";
import { rankCandidates } from "./rank.ts";
import type { Difficulty } from "./tags.ts";

export const AUTO_ROUTER_ID = "router/auto";
export { DEFAULT_PREFERENCE };
export type { SelectionNeeds };

export interface SelectionInput {
  /** Hub messages: the prompt. */
  messages: Message[];
  needs?: SelectionNeeds;
  /** 0 = cheapest .. 1 = best quality; unset: the organisation's, else the configuration's (0.5 by default). */
  preference?: number;
}

export interface Selection {
  /** Empty when no model fits (then `error` says why). */
  selectedModel: string;
  assignedTags: string[];
  difficulty: string;
  confidence: number;
  /** Up to 5, best first. */
  topCandidates: { model: string; score: number; why: string }[];
  strategy: "auto" | "explicit";
  /** From the difficulty, where the selected model reasons. */
  reasoningEffort?: string;
  error?: string;
}

export interface SelectOptions extends FilterOptions {
  /** A model id the caller named: returned as is, strategy `explicit`. Unset or router/auto: selection runs. */
  model?: string;
  /** The caller's organisation, for its configured preference. */
  organizationId?: string;
}

const TOP_CANDIDATES = 5;

/** How hard the model should think, per difficulty tier. */
const EFFORT: Record<Difficulty, string> = { easy: "low", medium: "medium", hard: "high" };

export function selectModel(input: SelectionInput, catalogue: Catalogue, options: SelectOptions = {}): Selection {
  const needs = input.needs ?? {};
  const text = promptText(input.messages);
  const { classification } = classifyWithSignals(text);
  // An image in the prompt is a vision task whatever the words say.
  const tags = needs.inputModalities?.includes("image") && !classification.tags.includes("vision") ? ["vision", ...classification.tags.filter((t) => t !== "general_chat")] : classification.tags;
  const base = { assignedTags: tags, difficulty: classification.difficulty, confidence: classification.confidence };
  if (options.model && options.model !== AUTO_ROUTER_ID) {
    return { ...base, selectedModel: options.model, topCandidates: [], strategy: "explicit" };
  }
  const settings = catalogue.selection;
  const filterOptions: FilterOptions = { ...options, modelPatterns: options.modelPatterns ?? settings?.models };
  const withContext = { ...needs, contextTokens: needs.contextTokens ?? estimateTokens(text) };
  const { candidates, excluded } = filterCandidates(withContext, catalogue, filterOptions);
  const preference =
    input.preference ?? (options.organizationId ? settings?.organizationPreferences.get(options.organizationId) : undefined) ?? settings?.preference ?? DEFAULT_PREFERENCE;
  const ranked = rankCandidates(candidates, tags, classification.difficulty, preference);
  const topCandidates = ranked.slice(0, TOP_CANDIDATES).map((r) => ({ model: r.candidate.model.config.id, score: r.score, why: r.why }));
  if (ranked.length === 0) return { ...base, selectedModel: "", topCandidates, strategy: "auto", error: describeExcluded(excluded) };
  const picked = ranked[0].candidate;
  const reasons = picked.routes.some((route) => supportedParametersOf(route).includes("reasoning"));
  return { ...base, selectedModel: picked.model.config.id, topCandidates, strategy: "auto", ...(reasons && { reasoningEffort: EFFORT[classification.difficulty] }) };
}

/** The prompt's text: the text parts of the system, developer and user messages, in order (the answers' own words say little of the task). */
export function promptText(messages: readonly Message[]): string {
  const parts: string[] = [];
  for (const message of messages) {
    if (message.role === Role.ASSISTANT || message.role === Role.TOOL) continue;
    for (const part of message.content) if (part.part.case === "text") parts.push(part.part.value.text);
  }
  return parts.join("\n");
}
