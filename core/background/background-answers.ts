// Background answers (Responses `background: true`): admitted while the
// caller waits, so a refusal is told at once, then run in the core, not tied
// to the caller's connection. The turn is stored as it goes (queued, in
// progress, then completed, incomplete, failed or cancelled), so any instance
// sharing the store can show it. While it runs, this instance renews the
// turn's lease; a turn whose lease passed reads as failed (turn-status.ts), so
// an answer whose instance died is never in progress forever. A cancellation
// requested on any instance is seen here at the next renewal (or at once when
// the answer runs here) and stops the upstream call; the meter then settles
// what was produced and releases the rest of the hold. A delete sticks: every
// save after the first only updates a turn still stored, so the run notices a
// delete made on any instance at its next save or renewal, and stops.
//
// The stored turn and the charge agree. The final save is retried while the
// store is away, as settlements are, so an answer charged in full is stored as
// it finished. An answer that broke off (upstream cut or malformed, shutdown)
// is stored failed with no output, and is charged nothing, as a non-streamed
// answer that broke off; a cancelled or deleted one is charged what the
// provider had produced (the caller stopped it).
import { setTimeout as sleep } from "node:timers/promises";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { TurnErrorSchema, TurnStatus, type Turn } from "../../gen/router/v1/conversations_pb.js";
import type { GenerateRequest } from "../../gen/router/v1/inference_pb.js";
import { fromStore } from "../accounts/refusals.ts";
import { createRetryBackoff } from "../accounts/retry-backoff.ts";
import { StoreUnavailableError } from "../accounts/store-errors.ts";
import type { Conversations } from "../conversations/conversations.ts";
import { ConnectError, errorDetailOf } from "../errors.ts";
import { prepareInference, releasePrepared, runInference, type InferenceDeps } from "../routing/run-inference.ts";

export interface BackgroundAnswersOptions {
  inference: InferenceDeps & { conversations: Conversations };
  /** How long a turn's lease lasts; the running instance renews it every third of that. */
  leaseMs: number;
  logger?: { error(details: object, message: string): void };
}

export interface BackgroundAnswers {
  /** Admits the request and starts its answer; resolves with its turn, queued, once stored. */
  start(request: GenerateRequest): Promise<Turn>;
  /** Stops the answer at once if it runs on this instance (the store's mark reaches the others). */
  cancelHere(organizationId: string, id: string): void;
  /** Stops the answer at once if it runs on this instance, storing nothing more (it was deleted). */
  deletedHere(organizationId: string, id: string): void;
  /** Renews every answer running here now, as its timer does every third of the lease (tests). */
  renewNow(): Promise<void>;
  /** Resolves when every answer started here has ended and its last save is done (tests). */
  idle(): Promise<void>;
  /** Stops every answer running here; each is stored as failed (once: a store that is away is not waited for). */
  close(): Promise<void>;
}

interface Running {
  controller: AbortController;
  renew: () => Promise<void>;
  done: Promise<void>;
}

export function createBackgroundAnswers(options: BackgroundAnswersOptions): BackgroundAnswers {
  const deps = options.inference;
  const { conversations, now } = deps;
  const { store } = conversations;
  const running = new Map<string, Running>();
  const keyOf = (organizationId: string, id: string) => `${organizationId}\u0000${id}`;
  const leaseEnd = () => timestampFromMs(now().getTime() + options.leaseMs);
  const renewEveryMs = Math.max(1, Math.floor(options.leaseMs / 3));
  // Wakes the final saves waiting to retry when the instance shuts down: they give up then.
  const closing = new AbortController();

  async function start(received: GenerateRequest): Promise<Turn> {
    // Read as a stream (the same events either way) and always stored.
    const request: GenerateRequest = { ...received, stream: true, store: true };
    let finished: Turn | undefined;
    const prepared = await prepareInference(request, deps, { onFinished: (turn) => (finished = turn) });
    const organizationId = prepared.admitted.admission.key.organizationId;
    let turn: Turn = { ...conversations.pendingTurn({ ...received, conversation: prepared.request.conversation }, organizationId, prepared.id), background: true, status: TurnStatus.QUEUED, leaseExpiresAt: leaseEnd() };
    try {
      await fromStore(store.save(turn));
    } catch (error) {
      releasePrepared(prepared, "store_unavailable", deps);
      throw error;
    }

    const controller = new AbortController();
    const stopped = (reason: Error) => controller.signal.aborted && controller.signal.reason === reason;
    const deleted = () => {
      if (!controller.signal.aborted) controller.abort(DELETED);
    };
    /** One save after the first: an update, so a deleted turn stays deleted (and its run stops). */
    const update = async (next: Turn) => {
      if (stopped(DELETED)) return;
      if (!(await store.update(next))) deleted();
    };
    // Saves in order, so a renewal never lands after the final save.
    let saves = Promise.resolve();
    const save = (next: Turn) => {
      turn = next;
      saves = saves.then(() => update(next)).catch((error: unknown) => options.logger?.error({ err: error, requestId: next.id }, "could not store a background answer's progress"));
      return saves;
    };
    let ended = false;
    const renew = async () => {
      const read = await store.get(organizationId, turn.id).then(
        (stored) => ({ stored }),
        () => undefined, // the store is away: the lease is renewed if it can be
      );
      if (ended) return;
      if (read && !read.stored) deleted();
      else if (read?.stored?.status === TurnStatus.CANCELLED) controller.abort();
      else await save({ ...turn, leaseExpiresAt: leaseEnd() });
    };
    const renewal = setInterval(() => void renew(), renewEveryMs);
    renewal.unref();

    /** The last save, retried while the store is away (as settlements are) until it lands or the instance shuts down. */
    const storeLast = async (last: Turn) => {
      turn = last;
      await saves;
      const backoff = createRetryBackoff({ maxMs: renewEveryMs });
      for (;;) {
        try {
          return await update(last);
        } catch (error) {
          if (!(error instanceof StoreUnavailableError) || closing.signal.aborted) {
            options.logger?.error({ err: error, requestId: last.id }, "could not store a background answer's end");
            return;
          }
          await sleep(backoff.next(), undefined, { signal: closing.signal, ref: false }).catch(() => {});
        }
      }
    };

    const run = async () => {
      let last: Turn;
      // A broken answer is stored with no output: it is charged nothing (as a non-streamed one). A caller's stop is charged what was produced.
      const chargesCutAnswer = () => controller.signal.aborted && !stopped(SHUTTING_DOWN);
      try {
        for await (const event of runInference(request, controller.signal, deps, prepared, { chargesCutAnswer })) {
          if (event.event.case === "start") save({ ...turn, status: TurnStatus.IN_PROGRESS, modelId: event.event.value.modelId, provider: event.event.value.provider });
        }
        // An answer that ended without its finish (no turn recorded) did not complete.
        last = finished
          ? { ...finished, background: true }
          : { ...turn, status: TurnStatus.FAILED, leaseExpiresAt: undefined, completedAt: timestampFromMs(now().getTime()), error: create(TurnErrorSchema, { code: "upstream_error", message: "The answer ended before it was complete." }) };
      } catch (error) {
        const end = timestampFromMs(now().getTime());
        const cancelled = controller.signal.aborted && !stopped(SHUTTING_DOWN);
        last = cancelled
          ? { ...turn, status: TurnStatus.CANCELLED, leaseExpiresAt: undefined, completedAt: end }
          : { ...turn, status: TurnStatus.FAILED, leaseExpiresAt: undefined, completedAt: end, error: turnErrorOf(error, controller.signal) };
        if (!(error instanceof ConnectError)) options.logger?.error({ err: error, requestId: turn.id }, "background answer failed");
      } finally {
        ended = true;
        clearInterval(renewal);
      }
      await storeLast(last);
    };
    const key = keyOf(organizationId, turn.id);
    const done = run().finally(() => running.delete(key));
    running.set(key, { controller, renew, done });
    return turn;
  }

  return {
    start,
    cancelHere(organizationId, id) {
      running.get(keyOf(organizationId, id))?.controller.abort();
    },
    deletedHere(organizationId, id) {
      running.get(keyOf(organizationId, id))?.controller.abort(DELETED);
    },
    async renewNow() {
      await Promise.all([...running.values()].map((answer) => answer.renew()));
    },
    async idle() {
      while (running.size > 0) await Promise.all([...running.values()].map((answer) => answer.done));
    },
    async close() {
      closing.abort();
      for (const answer of running.values()) answer.controller.abort(SHUTTING_DOWN);
      await this.idle();
    },
  };
}

/** The abort reason of an answer stopped because its instance shuts down (failed, not cancelled). */
const SHUTTING_DOWN = new Error("The instance running this response shut down before it finished.");
/** The abort reason of an answer whose turn was deleted: it stops, and nothing more is stored. */
const DELETED = new Error("The response was deleted.");

function turnErrorOf(error: unknown, signal: AbortSignal) {
  if (signal.reason === SHUTTING_DOWN) return create(TurnErrorSchema, { code: "instance_stopped", message: SHUTTING_DOWN.message });
  if (error instanceof ConnectError) return create(TurnErrorSchema, { code: errorDetailOf(error)?.reason ?? "internal_error", message: error.rawMessage });
  return create(TurnErrorSchema, { code: "internal_error", message: "The answer failed inside the router." });
}
