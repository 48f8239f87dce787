// The usage log, batched off the request path: records wait in memory and are
// written together every few milliseconds or every batch. A record still
// waiting is served from memory, so an answer's generation can be read at once.
//
// While the store is away, writes are retried with backoff (100 ms doubling to
// 30 s, with jitter), new records only join the queue, at most `maxPending`
// are kept (the oldest are dropped and counted), and the outage is reported
// once when it starts and once when it ends.
import { createRetryBackoff } from "./retry-backoff.ts";
import type { UsageRecord, UsageStore } from "./store.ts";

export interface UsageLog {
  record(record: UsageRecord): void;
  get(organizationId: string, id: string): Promise<UsageRecord | undefined>;
  list(organizationId: string, limit: number): Promise<UsageRecord[]>;
  /** Writes what waits (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface UsageLogOptions {
  flushMs?: number;
  maxBatch?: number;
  /** Records kept while the store is away; the oldest are dropped beyond it (and reported). */
  maxPending?: number;
  /** The first wait before retrying a failed write; default 100 ms, doubling to maxRetryMs (30 s). */
  retryMs?: number;
  maxRetryMs?: number;
  /** A number in [0, 1) for the retry jitter (tests fix it); default Math.random. */
  random?: () => number;
  /** Writes started failing: once per outage. */
  onOutage?: (error: unknown, pending: number) => void;
  /** A write succeeded again: once per outage, with the records dropped meanwhile. */
  onRecovery?: (dropped: number) => void;
}

export function createUsageLog(store: UsageStore, options: UsageLogOptions = {}): UsageLog {
  const flushMs = options.flushMs ?? 50;
  const maxBatch = options.maxBatch ?? 200;
  const maxPending = options.maxPending ?? 10_000;
  const backoff = createRetryBackoff({ initialMs: options.retryMs ?? 100, maxMs: options.maxRetryMs ?? 30_000, random: options.random });
  let pending: UsageRecord[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  let storeAway = false;
  let writingBatch = false;
  let dropped = 0;

  /** Drops the oldest beyond maxPending; never while a batch (the front of the queue) is being written. */
  const keepBounded = () => {
    if (writingBatch || pending.length <= maxPending) return;
    dropped += pending.length - maxPending;
    pending = pending.slice(-maxPending);
  };

  const flush = (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    writing = writing.then(async () => {
      if (pending.length === 0) return;
      // A copy: records keep arriving while the batch is written.
      const batch = pending.slice();
      writingBatch = true;
      try {
        await store.append(batch);
        writingBatch = false;
        // Only this chain removes records, so the batch is still the front of the queue.
        pending = pending.slice(batch.length);
        backoff.reset();
        if (storeAway) {
          storeAway = false;
          options.onRecovery?.(dropped);
          dropped = 0;
        }
      } catch (error) {
        writingBatch = false;
        if (!storeAway) {
          storeAway = true;
          options.onOutage?.(error, pending.length);
        }
        keepBounded();
        clearTimeout(timer);
        timer = setTimeout(() => void flush(), backoff.next()).unref();
      }
    });
    return writing;
  };
  const schedule = () => {
    timer ??= setTimeout(() => void flush(), flushMs).unref();
  };

  return {
    record(record) {
      pending.push(record);
      if (storeAway) {
        // While the store is away, the retry timer alone goes to it.
        keepBounded();
        return;
      }
      if (pending.length >= maxBatch) void flush();
      else schedule();
    },
    async get(organizationId, id) {
      const waiting = pending.find((record) => record.id === id);
      if (waiting) return waiting.organizationId === organizationId ? waiting : undefined;
      return store.get(organizationId, id);
    },
    async list(organizationId, limit) {
      const waiting = pending.filter((record) => record.organizationId === organizationId).reverse();
      const stored = await store.list(organizationId, limit);
      return [...waiting, ...stored.filter((record) => !waiting.some((w) => w.id === record.id))].slice(0, limit);
    },
    flush,
    async close() {
      await flush();
      clearTimeout(timer);
    },
  };
}
