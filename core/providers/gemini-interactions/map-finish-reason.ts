import { FinishReason } from "../../../gen/router/v1/inference_pb.js";

// The interaction's final `status` (InteractionStatus) is the protocol's only
// word on why the answer ended: `requires_action` is an answer waiting for its
// function results; `incomplete` one cut short (the output limit), as is
// `budget_exceeded`; `failed` and `cancelled` did not end as the model chose.
const FINISH_REASONS: Record<string, FinishReason> = {
  completed: FinishReason.STOP,
  requires_action: FinishReason.TOOL_CALLS,
  incomplete: FinishReason.LENGTH,
  budget_exceeded: FinishReason.LENGTH,
  failed: FinishReason.ERROR,
  cancelled: FinishReason.ERROR,
};

/** The statuses that end an interaction (what a status update may also say). */
export const FINAL_STATUSES = new Set(Object.keys(FINISH_REASONS));

/**
 * A tool-calling answer may end `completed`: the hub says TOOL_CALLS then, and
 * `requires_action` without a call is a plain stop. Statuses this table does
 * not know count as STOP (the raw value is kept beside it).
 */
export function mapFinishReason(status: string, hasToolCalls: boolean): FinishReason {
  const reason = FINISH_REASONS[status] ?? FinishReason.STOP;
  if (reason === FinishReason.TOOL_CALLS && !hasToolCalls) return FinishReason.STOP;
  return reason === FinishReason.STOP && hasToolCalls ? FinishReason.TOOL_CALLS : reason;
}
