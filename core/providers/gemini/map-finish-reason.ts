import { FinishReason } from "../../../gen/router/v1/inference_pb.js";

// Gemini's Candidate.FinishReason values (v1beta). The model's refusals and
// filters are content filters; a tool call it could not form, or a request it
// could not serve, is an error rather than a natural end.
const FINISH_REASONS: Record<string, FinishReason> = {
  STOP: FinishReason.STOP,
  MAX_TOKENS: FinishReason.LENGTH,
  SAFETY: FinishReason.CONTENT_FILTER,
  RECITATION: FinishReason.CONTENT_FILTER,
  LANGUAGE: FinishReason.CONTENT_FILTER,
  BLOCKLIST: FinishReason.CONTENT_FILTER,
  PROHIBITED_CONTENT: FinishReason.CONTENT_FILTER,
  SPII: FinishReason.CONTENT_FILTER,
  IMAGE_SAFETY: FinishReason.CONTENT_FILTER,
  IMAGE_PROHIBITED_CONTENT: FinishReason.CONTENT_FILTER,
  IMAGE_RECITATION: FinishReason.CONTENT_FILTER,
  MALFORMED_FUNCTION_CALL: FinishReason.ERROR,
  UNEXPECTED_TOOL_CALL: FinishReason.ERROR,
  TOO_MANY_TOOL_CALLS: FinishReason.ERROR,
  MISSING_THOUGHT_SIGNATURE: FinishReason.ERROR,
  MALFORMED_RESPONSE: FinishReason.ERROR,
  IMAGE_OTHER: FinishReason.ERROR,
  NO_IMAGE: FinishReason.ERROR,
  OTHER: FinishReason.ERROR,
};

/**
 * Gemini ends a tool-calling answer with STOP; the hub says TOOL_CALLS then.
 * Values this table does not know count as STOP (the raw value is kept beside it).
 */
export function mapFinishReason(raw: string, hasToolCalls: boolean): FinishReason {
  const reason = FINISH_REASONS[raw] ?? FinishReason.STOP;
  return reason === FinishReason.STOP && hasToolCalls ? FinishReason.TOOL_CALLS : reason;
}

/** A prompt Gemini refused outright (`promptFeedback.blockReason`, no candidates). */
export function blockedPromptFinish(blockReason: string): { reason: FinishReason; rawReason: string } {
  return { reason: FinishReason.CONTENT_FILTER, rawReason: blockReason };
}
