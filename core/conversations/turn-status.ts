// What a stored turn's status means as time passes: a background answer is
// active (queued, in progress) while the instance running it renews its lease,
// and ends as completed, incomplete, failed or cancelled. Read-time views live
// here so that every store and service reads a turn the same way.
import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { TurnErrorSchema, TurnStatus, type Turn } from "../../gen/router/v1/conversations_pb.js";

/** Whether a background answer is still to finish (queued or in progress). */
export const isActive = (turn: Turn) => turn.status === TurnStatus.QUEUED || turn.status === TurnStatus.IN_PROGRESS;

/** An active turn whose cancellation was requested reads as cancelled; a finished one as it finished. */
export function withCancelRequested(turn: Turn): Turn {
  return isActive(turn) ? { ...turn, status: TurnStatus.CANCELLED, leaseExpiresAt: undefined } : turn;
}

/** The message of a turn whose instance stopped renewing its lease. */
const LEASE_LOST = "The instance running this response stopped before it finished.";

/**
 * The turn as of `now`: an active turn whose lease has passed is failed (its
 * instance died or lost the store), never left in progress forever.
 */
export function asOf(turn: Turn, now: number): Turn {
  if (!isActive(turn) || !turn.leaseExpiresAt || timestampMs(turn.leaseExpiresAt) > now) return turn;
  return { ...turn, status: TurnStatus.FAILED, leaseExpiresAt: undefined, error: create(TurnErrorSchema, { code: "instance_stopped", message: LEASE_LOST }) };
}
