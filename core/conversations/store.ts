// Stored conversations: each answer kept for continuation is one Turn
// (gen/router/v1/conversations_pb), saved under its organisation and id, and
// chained to the turn it continued by `previousId`. Two implementations, in
// memory (the embedded default) and Redis (REDIS_URL, shared by instances),
// with one contract test. A backend that cannot answer throws
// StoreUnavailableError, as the account stores do (answered with 503).
import type { Turn } from "../../gen/router/v1/conversations_pb.js";

export interface ConversationStore {
  /** Keeps the turn until its `expiresAt`; a turn saved again under the same id replaces it. */
  save(turn: Turn): Promise<void>;
  /**
   * Saves the turn again only while it is still stored: false, and nothing
   * written, once it was deleted or has expired. A background answer's later
   * saves use it, so a delete sticks (its run notices and stops).
   */
  update(turn: Turn): Promise<boolean>;
  /**
   * One turn, only to its own organisation; undefined once expired or deleted.
   * A queued or in-progress turn whose cancellation was requested reads as
   * cancelled.
   */
  get(organizationId: string, id: string): Promise<Turn | undefined>;
  /**
   * Marks a turn's cancellation as requested (a background answer, which
   * whichever instance runs it sees at its next lease renewal). The mark
   * outlives later saves of the turn. False when there is no such turn.
   */
  requestCancel(organizationId: string, id: string): Promise<boolean>;
  /**
   * The turn `id` and the turns before it (following `previousId`), newest
   * first, at most `limit`. The walk stops at the first turn missing (expired,
   * deleted, or another organisation's): empty when `id` itself is missing,
   * and a last turn whose `previousId` is set when an earlier one is gone.
   * With `expiresAt` (ms, by the store's clock) every turn walked now expires
   * then, so an active conversation's oldest turns do not expire first. On
   * Redis this is one round trip.
   */
  chain(organizationId: string, id: string, limit: number, options?: { expiresAt?: number }): Promise<Turn[]>;
  /** True when there was such a turn. */
  delete(organizationId: string, id: string): Promise<boolean>;
  /**
   * The id of the organisation's turn whose provider keeps it under this id of
   * its own (Turn.upstream_id, indexed when the turn is saved and forgotten
   * with it); undefined when none is stored.
   */
  idOfUpstream(organizationId: string, upstreamId: string): Promise<string | undefined>;
  close(): Promise<void>;
}
