import { FinishReason } from "../../../gen/router/v1/inference_pb.js";

// Anthropic's stop_reason values (Messages API).
const FINISH_REASONS: Record<string, FinishReason> = {
  end_turn: FinishReason.STOP,
  stop_sequence: FinishReason.STOP,
  // A server tool loop paused; the turn is over for the caller.
  pause_turn: FinishReason.STOP,
  max_tokens: FinishReason.LENGTH,
  model_context_window_exceeded: FinishReason.LENGTH,
  tool_use: FinishReason.TOOL_CALLS,
  refusal: FinishReason.CONTENT_FILTER,
};

/** Unknown values count as `stop`; the raw value is kept beside it. */
export function mapFinishReason(raw: string): FinishReason {
  return FINISH_REASONS[raw] ?? FinishReason.STOP;
}
