// The cache index without Redis: this instance's own, in memory. Each
// partition is a local vector index (vector-index.ts) holding the payloads
// too. Memory is bounded three ways, so no traffic can grow it without end:
// entries per partition (the oldest go first), partitions (the least recently
// used go whole) and bytes of payloads and vectors overall (the least recently
// used partition loses its oldest entries first).
import type { CacheHit, CacheIndex } from "./cache-index.ts";
import { createPartitionIndex, passes, vectorEntryOf, type PartitionIndex, type VectorEntry } from "./vector-index.ts";

export interface MemoryCacheIndexOptions {
  maxEntriesPerPartition: number;
  /** A larger payload is not stored; default DEFAULT_MAX_ENTRY_BYTES. */
  maxEntryBytes?: number;
  /** Default 10,000. */
  maxPartitions?: number;
  /** Payload and vector bytes of every partition together; default 256 MiB. */
  maxTotalBytes?: number;
}

/** Answers larger than this are served but not kept (a cache of a few huge answers helps nobody). */
export const DEFAULT_MAX_ENTRY_BYTES = 4 * 1024 * 1024;
const DEFAULT_MAX_PARTITIONS = 10_000;
const DEFAULT_MAX_TOTAL_BYTES = 256 * 1024 * 1024;

interface MemoryEntry extends VectorEntry {
  payload: Uint8Array;
}

interface Partition {
  index: PartitionIndex<MemoryEntry>;
  bytes: number;
}


/** The hit an entry gives. */
export function hitOf(entry: VectorEntry, payload: Uint8Array, similarity: number, exact: boolean): CacheHit {
  return { entryId: entry.id, payload, provider: entry.provider, model: entry.model, similarity, exact, createdAt: entry.createdAt };
}

const bytesOf = (entry: MemoryEntry) => entry.payload.byteLength + entry.vector.byteLength;

export function createMemoryCacheIndex(options: MemoryCacheIndexOptions): CacheIndex {
  const maxEntryBytes = options.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES;
  const maxPartitions = options.maxPartitions ?? DEFAULT_MAX_PARTITIONS;
  const maxTotalBytes = options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES;
  // Least recently used first (a Map keeps insertion order; a use moves a partition to the end).
  const partitions = new Map<string, Partition>();
  let totalBytes = 0;

  const use = (name: string): Partition | undefined => {
    const partition = partitions.get(name);
    if (partition) {
      partitions.delete(name);
      partitions.set(name, partition);
    }
    return partition;
  };
  const forget = (partition: Partition, entries: MemoryEntry[]) => {
    for (const entry of entries) {
      partition.bytes -= bytesOf(entry);
      totalBytes -= bytesOf(entry);
    }
  };
  const drop = (name: string) => {
    const partition = partitions.get(name)!;
    partitions.delete(name);
    totalBytes -= partition.bytes;
  };

  return {
    async lookup(query) {
      const partition = use(query.partition);
      if (!partition) return undefined;
      const exact = partition.index.byDigest(query.exactDigest);
      if (exact && passes(exact, query)) return hitOf(exact, exact.payload, 1, true);
      if (exact && exact.expiresAt <= query.now) forget(partition, [partition.index.remove(exact.id)!]);
      if (!query.vector || query.threshold >= 1) return undefined;
      const match = partition.index.nearest(query.vector, query.threshold, query);
      return match && hitOf(match.entry, match.entry.payload, match.similarity, false);
    },
    async put(name, entry, now) {
      if (entry.payload.byteLength > maxEntryBytes || entry.ttlMs <= 0) return;
      let partition = use(name);
      if (!partition) {
        partition = { index: createPartitionIndex(options.maxEntriesPerPartition), bytes: 0 };
        partitions.set(name, partition);
      }
      const stored: MemoryEntry = {
        ...vectorEntryOf(entry, now),
        // A copy: the caller may reuse its buffer.
        payload: Uint8Array.from(entry.payload),
      };
      forget(partition, partition.index.add(stored));
      partition.bytes += bytesOf(stored);
      totalBytes += bytesOf(stored);
      while (partitions.size > maxPartitions) drop(partitions.keys().next().value!);
      // Over the byte budget: the least recently used partition's oldest entries go first.
      while (totalBytes > maxTotalBytes) {
        const [oldestName, oldest] = partitions.entries().next().value!;
        const entryGoing = oldest.index.oldest();
        if (entryGoing) forget(oldest, [oldest.index.remove(entryGoing.id)!]);
        if (oldest.index.size === 0) drop(oldestName);
      }
    },
    async close() {
      partitions.clear();
      totalBytes = 0;
    },
  };
}
