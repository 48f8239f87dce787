// The usage log, batched off the request path: records wait in memory and are
// written together every few milliseconds or every batch. A record still
// waiting is served from memory, so an answer's generation can be read at once.
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
  onError?: (error: unknown) => void;
}

export function createUsageLog(store: UsageStore, options: UsageLogOptions = {}): UsageLog {
  const flushMs = options.flushMs ?? 50;
  const maxBatch = options.maxBatch ?? 200;
  const maxPending = options.maxPending ?? 10_000;
  let pending: UsageRecord[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();

  const flush = (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    writing = writing.then(async () => {
      if (pending.length === 0) return;
      // A copy: records keep arriving while the batch is written.
      const batch = pending.slice();
      try {
        await store.append(batch);
        // Only this chain removes records, so the batch is still the front of the queue.
        pending = pending.slice(batch.length);
      } catch (error) {
        options.onError?.(error);
        if (pending.length > maxPending) {
          options.onError?.(new Error(`usage log: ${pending.length - maxPending} records dropped while the store was away`));
          pending = pending.slice(-maxPending);
        }
        schedule();
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
