// The task tags and difficulty tiers the selector speaks in (issue 22, "Model selection").
// The tags are the configuration's (models' `quality` is keyed by them).
import { TASK_TAGS } from "../config/selection.ts";

export { TASK_TAGS };
export type TaskTag = (typeof TASK_TAGS)[number];

export const DIFFICULTIES = ["easy", "medium", "hard"] as const;
export type Difficulty = (typeof DIFFICULTIES)[number];

/** Per-tag quality of a model, 0..1 (the model config's `quality`). */
export type QualityScores = Partial<Record<TaskTag, number>>;
