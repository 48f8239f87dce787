// Model selection (router/auto, POST /api/v1/model/selection): filter the
// catalogue to the models that can serve the request, classify the prompt,
// rank the candidates. Deterministic: the same input gives the same answer.
import type { Message } from "../../gen/router/v1/inference_pb.js";
import type { Catalogue } from "../catalogue/catalogue.ts";
import { classifyPrompt } from "./classify.ts";
import { filterCandidates, type FilterOptions, type SelectionNeeds } from "./filter.ts";
import { rankCandidates } from "./rank.ts";

export const AUTO_ROUTER_ID = "router/auto";

export interface SelectionInput {
  /** Hub messages: the prompt. */
  messages: Message[];
  needs?: SelectionNeeds;
  /** 0 = cheapest .. 1 = best quality; default 0.5. */
  preference?: number;
}

export interface Selection {
  selectedModel: string;
  assignedTags: string[];
  difficulty: string;
  confidence: number;
  topCandidates: { model: string; score: number; why: string }[];
  strategy: "auto" | "explicit";
  reasoningEffort?: string;
  error?: string;
}

export interface SelectOptions extends FilterOptions {
  /** A model id the caller named: returned as is, strategy `explicit`. Unset or router/auto: selection runs. */
  model?: string;
}

export const DEFAULT_PREFERENCE = 0.5;

export function selectModel(input: SelectionInput, catalogue: Catalogue, options: SelectOptions = {}): Selection {
  const text = promptText(input.messages);
  const classification = classifyPrompt(text);
  const base = { assignedTags: classification.tags, difficulty: classification.difficulty, confidence: classification.confidence };
  if (options.model && options.model !== AUTO_ROUTER_ID) {
    return { ...base, selectedModel: options.model, topCandidates: [], strategy: "explicit" };
  }
  const { candidates } = filterCandidates(input.needs ?? {}, catalogue, options);
  const ranked = rankCandidates(candidates, classification.tags, classification.difficulty, input.preference ?? DEFAULT_PREFERENCE);
  const topCandidates = ranked.slice(0, 5).map((r) => ({ model: r.candidate.model.config.id, score: r.score, why: r.why }));
  if (ranked.length === 0) return { ...base, selectedModel: "", topCandidates, strategy: "auto", error: "no model fits the request's needs" };
  return { ...base, selectedModel: topCandidates[0].model, topCandidates, strategy: "auto" };
}

/** The prompt's text: every text part of every message, in order. */
export function promptText(messages: readonly Message[]): string {
  const parts: string[] = [];
  for (const message of messages) for (const part of message.content) if (part.part.case === "text") parts.push(part.part.value.text);
  return parts.join("\n");
}
