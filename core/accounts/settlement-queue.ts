// Settlements run after the answer, off its path (the request's one Redis
// round trip is its admission). A settlement that fails because the store is
// down stays queued and is retried until the store returns: a charge is never
// dropped, and settling is idempotent per request id, so a retry is safe.
import type { AdmissionStore, Settlement } from "./store.ts";
import { StoreUnavailableError } from "./store-errors.ts";

export interface SettlementQueue {
  push(settlement: Settlement): void;
  /** Resolves once every queued settlement is done (tests, shutdown). */
  idle(): Promise<void>;
  readonly pending: number;
  close(): void;
}

export interface SettlementQueueOptions {
  retryMs?: number;
  onError?: (error: unknown, settlement: Settlement) => void;
}

export function createSettlementQueue(store: AdmissionStore, options: SettlementQueueOptions = {}): SettlementQueue {
  const retryMs = options.retryMs ?? 500;
  const queue: Settlement[] = [];
  let draining = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let waiters: (() => void)[] = [];

  async function drain() {
    if (draining) return;
    draining = true;
    try {
      while (queue.length > 0) {
        try {
          await store.settle(queue[0]);
        } catch (error) {
          options.onError?.(error, queue[0]);
          if (error instanceof StoreUnavailableError) {
            retryTimer ??= setTimeout(() => {
              retryTimer = undefined;
              void drain();
            }, retryMs).unref();
            return;
          }
          // Not the store being away: a retry would fail alike.
        }
        queue.shift();
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
      void drain();
    },
    idle: () => (queue.length === 0 && !draining ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve))),
    get pending() {
      return queue.length;
    },
    close() {
      clearTimeout(retryTimer);
    },
  };
}
