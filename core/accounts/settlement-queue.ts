// Settlements run after the answer, off its path (the request's one Redis
// round trip is its admission). They wait a few milliseconds and go to the
// store in batches (one script call each on Redis), so the background work
// stays small under load and rarely stands in front of the next admission.
//
// A batch that fails because the store is away stays queued and is retried
// until the store returns (settling is idempotent per request id, so a retry
// is safe). While it is away:
// - retries back off (100 ms doubling to 30 s, with jitter), and new
//   settlements only join the queue, so an outage costs a retry now and then
//   rather than one per request;
// - the queue is bounded (100,000 by default): beyond it the oldest are
//   dropped and counted. A dropped release or charge leaves its hold taken
//   until the abandoned-hold sweep returns it, 6 hours after its admission;
// - the outage is reported twice, when it starts and when it ends.
import { createFifo } from "./fifo.ts";
import { createRetryBackoff } from "./retry-backoff.ts";
import type { AdmissionStore, Settlement } from "./store.ts";
import { StoreUnavailableError } from "./store-errors.ts";

export interface SettlementQueue {
  push(settlement: Settlement): void;
  /** Settles what waits now and resolves once every queued settlement is done (tests, shutdown). */
  idle(): Promise<void>;
  /** Settlements not yet taken by the store (queued or being written). */
  readonly pending: number;
  close(): void;
}

export interface SettlementQueueOptions {
  /** How long a settlement waits for others to share its batch; default 5 ms. */
  delayMs?: number;
  /** The first wait before retrying a store that is away; default 100 ms. */
  retryMs?: number;
  /** The longest wait between retries; default 30 s. */
  maxRetryMs?: number;
  /** A number in [0, 1) for the retry jitter (tests fix it); default Math.random. */
  random?: () => number;
  batchSize?: number;
  /** Settlements kept while the store is away; beyond it the oldest are dropped. Default 100,000. */
  maxPending?: number;
  /** The store stopped taking settlements: once per outage. */
  onOutage?: (error: unknown, pending: number) => void;
  /** The store takes settlements again: once per outage. */
  onRecovery?: (pending: number) => void;
  /** Settlements were dropped to keep the queue bounded: once, when the queue has drained (or closes). */
  onDropped?: (count: number) => void;
  /** A batch failed for another reason than the store being away: it would fail alike again, so it is not retried. */
  onError?: (error: unknown, settlements: Settlement[]) => void;
}

const DEFAULT_MAX_PENDING_SETTLEMENTS = 100_000;

export function createSettlementQueue(store: AdmissionStore, options: SettlementQueueOptions = {}): SettlementQueue {
  const delayMs = options.delayMs ?? 5;
  const batchSize = options.batchSize ?? 64;
  const maxPending = options.maxPending ?? DEFAULT_MAX_PENDING_SETTLEMENTS;
  const backoff = createRetryBackoff({ initialMs: options.retryMs ?? 100, maxMs: options.maxRetryMs ?? 30_000, random: options.random });
  const waiting = createFifo<Settlement>();
  let inFlight = 0;
  let draining = false;
  let storeAway = false;
  let dropped = 0;
  let timer: NodeJS.Timeout | undefined;
  let waiters: (() => void)[] = [];

  const drainIn = (ms: number) => {
    timer = setTimeout(() => {
      timer = undefined;
      void drain();
    }, ms).unref();
  };
  const schedule = (ms: number) => {
    if (!timer) drainIn(ms);
  };
  const retryLater = () => {
    clearTimeout(timer);
    drainIn(backoff.next());
  };

  // The batch being written is not counted: if it fails it comes back to the
  // front, and then it is the oldest, dropped first.
  const keepBounded = () => {
    const excess = waiting.length - maxPending;
    if (excess > 0) dropped += waiting.drop(excess);
  };

  const reportDropped = () => {
    if (dropped === 0) return;
    options.onDropped?.(dropped);
    dropped = 0;
  };

  async function drain() {
    if (draining) return;
    draining = true;
    try {
      while (waiting.length > 0) {
        const batch = waiting.take(batchSize);
        inFlight = batch.length;
        try {
          await store.settleAll(batch);
          inFlight = 0;
          backoff.reset();
          if (storeAway) {
            storeAway = false;
            options.onRecovery?.(waiting.length);
          }
        } catch (error) {
          inFlight = 0;
          if (!(error instanceof StoreUnavailableError)) {
            options.onError?.(error, batch);
            continue;
          }
          waiting.putBack(batch);
          keepBounded();
          if (!storeAway) {
            storeAway = true;
            options.onOutage?.(error, waiting.length);
          }
          retryLater();
          return;
        }
      }
      reportDropped();
      for (const resolve of waiters) resolve();
      waiters = [];
    } finally {
      draining = false;
    }
  }

  return {
    push(settlement) {
      waiting.push(settlement);
      keepBounded();
      // While the store is away, the retry timer alone goes to it.
      if (storeAway) return;
      if (waiting.length >= batchSize) void drain();
      else schedule(delayMs);
    },
    idle() {
      if (waiting.length === 0 && !draining) return Promise.resolve();
      const done = new Promise<void>((resolve) => waiters.push(resolve));
      clearTimeout(timer);
      timer = undefined;
      void drain();
      return done;
    },
    get pending() {
      return waiting.length + inFlight;
    },
    close() {
      clearTimeout(timer);
      reportDropped();
    },
  };
}
