// Background answers (Responses `background: true`): admitted while the
// caller waits, so a refusal is told at once, then run in the core, not tied
// to the caller's connection. The turn is stored as it goes (queued, in
// progress, then completed, incomplete, failed or cancelled), so any instance
// sharing the store can show it. While it runs, this instance renews the
// turn's lease; a turn whose lease passed reads as failed (turn-status.ts), so
// an answer whose instance died is never in progress forever. A cancellation
// requested on any instance is seen here at the next renewal (or at once when
// the answer runs here) and stops the upstream call; the meter then settles
// what was produced and releases the rest of the hold.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { TurnErrorSchema, TurnStatus, type Turn } from "../../gen/router/v1/conversations_pb.js";
import type { GenerateRequest } from "../../gen/router/v1/inference_pb.js";
import { fromStore } from "../accounts/refusals.ts";
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
  /** Resolves when every answer started here has ended and its last save is done (tests). */
  idle(): Promise<void>;
  /** Stops every answer running here; each is stored as failed. */
  close(): Promise<void>;
}

export function createBackgroundAnswers(options: BackgroundAnswersOptions): BackgroundAnswers {
  const deps = options.inference;
  const { conversations, now } = deps;
  const { store } = conversations;
  const running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  const keyOf = (organizationId: string, id: string) => `${organizationId}\u0000${id}`;
  const leaseEnd = () => timestampFromMs(now().getTime() + options.leaseMs);

  async function start(received: GenerateRequest): Promise<Turn> {
    // Read as a stream (the same events either way) and always stored.
    const request: GenerateRequest = { ...received, stream: true, store: true };
    let finished: Turn | undefined;
    const prepared = await prepareInference(request, deps, { onFinished: (turn) => (finished = turn) });
    const organizationId = prepared.admitted.admission.key.organizationId;
    let turn: Turn = { ...conversations.pendingTurn(received, organizationId, prepared.id), background: true, status: TurnStatus.QUEUED, leaseExpiresAt: leaseEnd() };
    try {
      await fromStore(store.save(turn));
    } catch (error) {
      releasePrepared(prepared, "store_unavailable", deps);
      throw error;
    }

    const controller = new AbortController();
    // Saves in order, so a renewal never lands after the final save.
    let saves = Promise.resolve();
    const save = (next: Turn) => {
      turn = next;
      saves = saves.then(() => store.save(next)).catch((error: unknown) => options.logger?.error({ err: error, requestId: next.id }, "could not store a background answer's progress"));
    };
    let ended = false;
    const renew = async () => {
      const stored = await store.get(organizationId, turn.id).catch(() => undefined);
      if (ended) return;
      if (stored?.status === TurnStatus.CANCELLED) controller.abort();
      else save({ ...turn, leaseExpiresAt: leaseEnd() });
    };
    const renewal = setInterval(() => void renew(), Math.max(1, Math.floor(options.leaseMs / 3)));
    renewal.unref();

    const run = async () => {
      let last: Turn;
      try {
        for await (const event of runInference(request, controller.signal, deps, prepared)) {
          if (event.event.case === "start") save({ ...turn, status: TurnStatus.IN_PROGRESS, modelId: event.event.value.modelId, provider: event.event.value.provider });
        }
        // An answer that ended without its finish (no turn recorded) did not complete.
        last = finished
          ? { ...finished, background: true }
          : { ...turn, status: TurnStatus.FAILED, leaseExpiresAt: undefined, completedAt: timestampFromMs(now().getTime()), error: create(TurnErrorSchema, { code: "upstream_error", message: "The answer ended before it was complete." }) };
      } catch (error) {
        const end = timestampFromMs(now().getTime());
        const cancelled = controller.signal.aborted && controller.signal.reason !== SHUTTING_DOWN;
        last = cancelled
          ? { ...turn, status: TurnStatus.CANCELLED, leaseExpiresAt: undefined, completedAt: end }
          : { ...turn, status: TurnStatus.FAILED, leaseExpiresAt: undefined, completedAt: end, error: turnErrorOf(error, controller.signal) };
        if (!(error instanceof ConnectError)) options.logger?.error({ err: error, requestId: turn.id }, "background answer failed");
      } finally {
        ended = true;
        clearInterval(renewal);
      }
      save(last);
      await saves;
    };
    const key = keyOf(organizationId, turn.id);
    const done = run().finally(() => running.delete(key));
    running.set(key, { controller, done });
    return turn;
  }

  return {
    start,
    cancelHere(organizationId, id) {
      running.get(keyOf(organizationId, id))?.controller.abort();
    },
    async idle() {
      while (running.size > 0) await Promise.all([...running.values()].map((answer) => answer.done));
    },
    async close() {
      for (const answer of running.values()) answer.controller.abort(SHUTTING_DOWN);
      await this.idle();
    },
  };
}

/** The abort reason of an answer stopped because its instance shuts down (failed, not cancelled). */
const SHUTTING_DOWN = new Error("The instance running this response shut down before it finished.");

function turnErrorOf(error: unknown, signal: AbortSignal) {
  if (signal.reason === SHUTTING_DOWN) return create(TurnErrorSchema, { code: "instance_stopped", message: SHUTTING_DOWN.message });
  if (error instanceof ConnectError) return create(TurnErrorSchema, { code: errorDetailOf(error)?.reason ?? "internal_error", message: error.rawMessage });
  return create(TurnErrorSchema, { code: "internal_error", message: "The answer failed inside the router." });
}
