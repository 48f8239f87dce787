// Settlements run after the answer, off its path (the request's one Redis
// round trip is its admission). They wait a few milliseconds and go to the
// store in batches (one script call each on Redis), so the background work
// stays small under load and rarely stands in front of the next admission.
// A batch that fails because the store is down stays queued and is retried
// until the store returns: a charge is never dropped, and settling is
// idempotent per request id, so a retry is safe.
import type { AdmissionStore, Settlement } from "./store.ts";
import { StoreUnavailableError } from "./store-errors.ts";

export interface SettlementQueue {
  push(settlement: Settlement): void;
  /** Settles what waits now and resolves once every queued settlement is done (tests, shutdown). */
  idle(): Promise<void>;
  readonly pending: number;
  close(): void;
}

export interface SettlementQueueOptions {
  /** How long a settlement waits for others to share its batch. */
  delayMs?: number;
  retryMs?: number;
  batchSize?: number;
  onError?: (error: unknown, settlements: Settlement[]) => void;
}

export function createSettlementQueue(store: AdmissionStore, options: SettlementQueueOptions = {}): SettlementQueue {
  const delayMs = options.delayMs ?? 5;
  const retryMs = options.retryMs ?? 500;
  const batchSize = options.batchSize ?? 64;
  let queue: Settlement[] = [];
  let draining = false;
  let timer: NodeJS.Timeout | undefined;
  let waiters: (() => void)[] = [];

  const schedule = (ms: number) => {
    timer ??= setTimeout(() => {
      timer = undefined;
      void drain();
    }, ms).unref();
  };

  async function drain() {
    if (draining) return;
    draining = true;
    try {
      while (queue.length > 0) {
        const batch = queue.slice(0, batchSize);
        queue = queue.slice(batch.length);
        try {
          await store.settleAll(batch);
        } catch (error) {
          options.onError?.(error, batch);
          // Anything else than the store being away would fail alike on a retry.
          if (error instanceof StoreUnavailableError) {
            queue = [...batch, ...queue];
            schedule(retryMs);
            return;
          }
        }
      }
      for (const resolve of waiters) resolve();
      waiters = [];
    } finally {
      draining = false;
    }
  }

  return {
    push(settlement) {
      queue.push(settlement);
      if (queue.length >= batchSize) void drain();
      else schedule(delayMs);
    },
    idle() {
      if (queue.length === 0 && !draining) return Promise.resolve();
      const done = new Promise<void>((resolve) => waiters.push(resolve));
      clearTimeout(timer);
      timer = undefined;
      void drain();
      return done;
    },
    get pending() {
      return queue.length;
    },
    close() {
      clearTimeout(timer);
    },
  };
}
