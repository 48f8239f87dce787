// Settlements run after the answer, off its path (the request's one Redis
// round trip is its admission). They are settled in parallel batches, so the
// queue keeps up with admissions. A settlement that fails because the store is
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
  /** Settlements sent to the store at once. */
  batchSize?: number;
  onError?: (error: unknown, settlement: Settlement) => void;
}

export function createSettlementQueue(store: AdmissionStore, options: SettlementQueueOptions = {}): SettlementQueue {
  const retryMs = options.retryMs ?? 500;
  const batchSize = options.batchSize ?? 64;
  let queue: Settlement[] = [];
  let draining = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let waiters: (() => void)[] = [];

  async function drain() {
    if (draining) return;
    draining = true;
    try {
      while (queue.length > 0) {
        const batch = queue.slice(0, batchSize);
        queue = queue.slice(batch.length);
        const results = await Promise.allSettled(batch.map((settlement) => store.settle(settlement)));
        const retry: Settlement[] = [];
        results.forEach((result, i) => {
          if (result.status === "fulfilled") return;
          options.onError?.(result.reason, batch[i]);
          // Anything else than the store being away would fail alike on a retry.
          if (result.reason instanceof StoreUnavailableError) retry.push(batch[i]);
        });
        if (retry.length > 0) {
          queue = [...retry, ...queue];
          retryTimer ??= setTimeout(() => {
            retryTimer = undefined;
            void drain();
          }, retryMs).unref();
          return;
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
