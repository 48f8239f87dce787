// The prompt of a media task: required, not only whitespace, and no longer than
// the model's limit. Providers refuse long prompts themselves (Kling at 2500
// characters, OpenAI's gpt-image models at 32000), but only after the task was
// stored and held; a prompt is also kept in the task and echoed on each read,
// so an unbounded one makes every record as large as the request body.
import { invalidParameter } from "../errors.ts";

/**
 * The longest prompt any media model takes when its catalogue entry names no
 * limit of its own: OpenAI's gpt-image models' 32000 characters, the largest
 * a media provider documents.
 */
export const MEDIA_PROMPT_MAX_CHARACTERS = 32_000;

/**
 * The model's own limit, `supported_params_details.prompt: {max_length: N}`
 * (characters), never above MEDIA_PROMPT_MAX_CHARACTERS.
 */
export function promptLimitOf(details: Record<string, unknown>): number {
  const prompt = details.prompt;
  const own = prompt && typeof prompt === "object" ? (prompt as { max_length?: unknown }).max_length : undefined;
  return typeof own === "number" && Number.isInteger(own) && own > 0 ? Math.min(own, MEDIA_PROMPT_MAX_CHARACTERS) : MEDIA_PROMPT_MAX_CHARACTERS;
}

/** Refuses a missing, blank or too long prompt (400 naming `prompt`); `modelId` words a model's own limit. */
export function checkPrompt<Parameters extends { prompt: string }>(
  parameters: Parameters | undefined,
  limit = MEDIA_PROMPT_MAX_CHARACTERS,
  modelId?: string,
): asserts parameters is Parameters {
  const prompt = parameters?.prompt;
  if (!prompt) throw invalidParameter("prompt", "prompt is required.");
  if (prompt.trim() === "") throw invalidParameter("prompt", "prompt must not be only whitespace.");
  const length = charactersUpTo(prompt, limit + 1);
  if (length > limit) {
    const whose = modelId && limit < MEDIA_PROMPT_MAX_CHARACTERS ? ` for ${modelId}` : "";
    throw invalidParameter("prompt", `prompt must be at most ${limit} characters${whose}.`);
  }
}

/**
 * The prompt's characters (Unicode code points, as providers count them, so an
 * emoji is one), counted no further than `most`: a 20-million-character
 * prompt costs no more than a long one to refuse.
 */
function charactersUpTo(text: string, most: number): number {
  // UTF-16 units are at least the code points: a short text needs no count.
  if (text.length <= most) return [...text].length;
  let count = 0;
  for (const _ of text) {
    count += 1;
    if (count >= most) break;
  }
  return count;
}
