import { FinishReason } from "../../../gen/router/v1/inference_pb.js";

const FINISH_REASONS: Record<string, FinishReason> = {
  stop: FinishReason.STOP,
  length: FinishReason.LENGTH,
  tool_calls: FinishReason.TOOL_CALLS,
  function_call: FinishReason.TOOL_CALLS,
  content_filter: FinishReason.CONTENT_FILTER,
};

/** Unknown vendor values count as `stop`; the raw value is kept beside it. */
export function mapFinishReason(raw: string): FinishReason {
  return FINISH_REASONS[raw] ?? FinishReason.STOP;
}
