// A stored turn's status in the word OpenAI's Responses and Google's
// Interactions both use for it (they agree on all six).
import { TurnStatus } from "../../../gen/router/v1/conversations_pb.js";

export type TurnStatusWord = "completed" | "incomplete" | "in_progress" | "failed" | "queued" | "cancelled";

const WORDS: Record<TurnStatus, TurnStatusWord> = {
  [TurnStatus.UNSPECIFIED]: "completed",
  [TurnStatus.COMPLETED]: "completed",
  [TurnStatus.INCOMPLETE]: "incomplete",
  [TurnStatus.QUEUED]: "queued",
  [TurnStatus.IN_PROGRESS]: "in_progress",
  [TurnStatus.FAILED]: "failed",
  [TurnStatus.CANCELLED]: "cancelled",
};

export const statusWordOf = (status: TurnStatus): TurnStatusWord => WORDS[status];
