// The per-tag quality scores (docs/selection.md) of the bundled catalogue's chat
// models, by family: a tier's base score, adjusted where a family is known to
// lean (reasoning models on math, code models on coding). Coarse on purpose:
// router/auto needs an order of models, not a benchmark. A model no rule names
// (audio, search and image specialists, the simulator's test behaviours) gets
// none, so router/auto never picks it unless selection.models names it.
import { TASK_TAGS } from "../core/config/selection.ts";

type Tag = (typeof TASK_TAGS)[number];
type Lean = "reasoning" | "code" | "general";

const TIER_BASE = { frontier: 0.93, strong: 0.88, mid: 0.8, small: 0.7, legacy: 0.6, stand_in: 0.3 } as const;
type Tier = keyof typeof TIER_BASE;

/** First match wins: the smaller variants come before their family. */
const RULES: [RegExp, Tier, Lean][] = [
  [/^openai\/gpt-3\.5/, "legacy", "general"],
  [/^openai\/gpt-(5|5\.\d)-nano|^openai\/gpt-4\.1-nano|^openai\/gpt-4o-mini/, "small", "general"],
  [/^openai\/gpt-(5|5\.\d)-mini|^openai\/gpt-4\.1-mini/, "mid", "general"],
  [/^openai\/o(3|4)-mini/, "mid", "reasoning"],
  [/^openai\/o3|^openai\/o1/, "strong", "reasoning"],
  [/^openai\/gpt-5\.[2-9]/, "frontier", "general"],
  [/^openai\/gpt-5(\.1)?(-|$)/, "strong", "general"],
  [/^openai\/gpt-4\.1/, "strong", "general"],
  [/^openai\/gpt-4o|^openai\/gpt-4-turbo|^openai\/gpt-4-(0125|1106)/, "mid", "general"],
  [/^openai\/gpt-4/, "small", "general"],
  [/^anthropic\/claude-3-haiku/, "small", "general"],
  [/^anthropic\/claude-haiku-4/, "mid", "general"],
  [/^anthropic\/claude-(3-7-sonnet|3-opus|4-sonnet|sonnet-4-2)/, "mid", "general"],
  [/^anthropic\/claude-opus-4-6-thinking/, "frontier", "reasoning"],
  [/^anthropic\/claude-(opus-4-[5-9]|opus-5|sonnet-5|mythos|fable)/, "frontier", "general"],
  [/^anthropic\/claude-(sonnet-4-[5-9]|opus-4|4-opus)/, "strong", "code"],
  [/^google\/gemini-pro/, "frontier", "general"],
  [/^google\/gemini-flash-lite/, "small", "general"],
  [/^google\/gemini-(flash|exp)/, "mid", "general"],
  // DeepSeek's reasoner is priced and ranked with the mid tier: strong at mathematics for its price, not a frontier model.
  [/^deepseek\/deepseek-(reasoner|v4-pro)/, "mid", "reasoning"],
  [/^deepseek\/deepseek-(chat|v4-flash)/, "mid", "general"],
  [/^moonshot\/kimi-k2\.5/, "mid", "code"],
  [/^moonshot\/kimi/, "strong", "code"],
  [/^xai\/grok-build/, "mid", "code"],
  [/^xai\/grok-4\.20-0309-non-reasoning/, "mid", "general"],
  [/^xai\/grok-4\.5/, "frontier", "general"],
  [/^xai\/grok-4\.20-multi-agent/, "strong", "reasoning"],
  [/^xai\/grok/, "mid", "reasoning"],
  // With no provider key set, only the simulator answers: router/auto still works on a fresh start, and loses to any real model.
  [/^simulator\/echo$/, "stand_in", "general"],
];

/** Tags a smaller model does nearly as well as a large one: their spread is narrowed, so the cheaper wins more often. */
const EASY_TAGS: readonly Tag[] = ["translation", "summarisation", "classification", "extraction", "general_chat"];

const LEANS: Record<Lean, Partial<Record<Tag, number>>> = {
  general: {},
  reasoning: { math: 0.04, reasoning: 0.04, coding: 0.01, creative_writing: -0.05, general_chat: -0.03 },
  code: { coding: 0.04, reasoning: 0.01 },
};

/** Specialists whose answers are not general text (or are a reviewer's): never router/auto's pick by default. */
const SPECIALIST = /(audio|search|realtime|image|codex-auto-review)/;

/** The scores of a bundled model, or undefined when router/auto should not pick it. */
export function defaultQuality(id: string, inputModalities: readonly string[]): Partial<Record<Tag, number>> | undefined {
  if (SPECIALIST.test(id)) return undefined;
  const rule = RULES.find(([pattern]) => pattern.test(id));
  if (!rule) return undefined;
  const [, tier, lean] = rule;
  const base = TIER_BASE[tier];
  const scores: Partial<Record<Tag, number>> = {};
  for (const tag of TASK_TAGS) {
    // Vision only where the model sees images.
    if (tag === "vision" && !inputModalities.includes("image")) continue;
    const spread = EASY_TAGS.includes(tag) ? 1 - (1 - base) * 0.7 : base;
    scores[tag] = Math.round(Math.min(1, Math.max(0, spread + (LEANS[lean][tag] ?? 0))) * 100) / 100;
  }
  return scores;
}
