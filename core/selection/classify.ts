// Step 2 of selection: what the prompt asks for (task tags), how hard it is and
// how sure we are, from deterministic signals (lexicons, code and math notation,
// length, question structure). Rough first version: refined in later commits.
import type { Difficulty, TaskTag } from "./tags.ts";

export interface Classification {
  tags: string[];
  difficulty: Difficulty;
  confidence: number;
}

export function classifyPrompt(text: string): Classification {
  const tags: TaskTag[] = [];
  if (/```|\bfunction\b|\bdef\b|\bclass\b/.test(text)) tags.push("coding");
  if (tags.length === 0) tags.push("general_chat");
  const difficulty: Difficulty = text.length > 2000 ? "hard" : text.length > 300 ? "medium" : "easy";
  return { tags, difficulty, confidence: 0.5 };
}
