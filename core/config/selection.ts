// The configuration of model selection (router/auto, POST /api/v1/model/selection):
// each model's per-tag quality, which models router/auto may pick, and how much
// price weighs against quality. docs/selection.md says how they are used.
import { z } from "zod";

/** The task tags of selection (issue 22); the selector's classifier assigns them. */
export const TASK_TAGS = [
  "coding",
  "math",
  "reasoning",
  "translation",
  "summarisation",
  "creative_writing",
  "classification",
  "extraction",
  "vision",
  "general_chat",
] as const;

/** A model's quality per task tag, 0 (useless) to 1 (the best there is); a tag left out counts as the mean of those given. */
export const qualitySchema = z.partialRecord(z.enum(TASK_TAGS), z.number().min(0).max(1));

/** 0: the cheapest acceptable model; 1: the best, whatever it costs. */
export const preferenceSchema = z.number().min(0).max(1);

export const DEFAULT_PREFERENCE = 0.5;

export const selectionSchema = z
  .object({
    /**
     * The models router/auto may pick, as patterns (`*` any run of characters: `anthropic/*`).
     * Empty: every model that has `quality` scores.
     */
    models: z.array(z.string().min(1)).default([]),
    /** The cost-versus-quality preference when neither the request nor the organisation sets one. */
    preference: preferenceSchema.default(DEFAULT_PREFERENCE),
  })
  .strict();

export type SelectionConfig = z.infer<typeof selectionSchema>;
