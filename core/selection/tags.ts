// The task tags and difficulty tiers the selector speaks in (issue 22, "Model selection").
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

export type TaskTag = (typeof TASK_TAGS)[number];

export const DIFFICULTIES = ["easy", "medium", "hard"] as const;
export type Difficulty = (typeof DIFFICULTIES)[number];

/** Per-tag quality of a model, 0..1 (the model config's `quality`). */
export type QualityScores = Partial<Record<TaskTag, number>>;
