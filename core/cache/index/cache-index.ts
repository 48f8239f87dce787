// The semantic cache's index: entries in partitions, found by an exact digest
// or, failing that, by the most similar vector above a threshold. Kept in
// memory without Redis, in Redis (shared by every instance) with it.
//
// A partition (a hex digest made by core/cache/partition.ts) already holds
// everything that must be equal for two requests to share an answer: the
// organisation, the cache_key, the endpoint, the model, the parameters, the
// system message and the embedder. The index knows none of that.

/** What a new entry is made of. */
export interface NewCacheEntry {
  /** SHA-256 hex of the prompt the conversation mode selected, exactly. */
  exactDigest: string;
  /** Its embedding (unit length). */
  vector: Float32Array;
  /**
   * What must be equal besides the vector for a similar entry to match (the
   * numbers and negations of the prompt: core/cache/embedding/prompt-guard.ts).
   */
  guard: string;
  /** The provider and catalogue model that made the answer. */
  provider: string;
  model: string;
  /** The stored answer, opaque to the index (a serialized CachedAnswer). */
  payload: Uint8Array;
  /** How long it may be served. */
  ttlMs: number;
}

export interface CacheLookup {
  partition: string;
  exactDigest: string;
  /** Absent: exact matches only (a threshold of 1). */
  vector?: Float32Array;
  guard: string;
  /** Cosine similarity an entry needs, in [0, 1]; 1 means exact only. */
  threshold: number;
  /** Set: only entries made by one of these providers match (`filter_on_provider`). */
  providers?: ReadonlySet<string>;
  /** Unix milliseconds (injected clock): entries expired by then never match. */
  now: number;
}

export interface CacheHit {
  entryId: string;
  payload: Uint8Array;
  provider: string;
  model: string;
  /** 1 for an exact match; else the cosine similarity, at least the threshold. */
  similarity: number;
  exact: boolean;
  /** Unix milliseconds. */
  createdAt: number;
}

export interface CacheIndex {
  /** The best live entry: the exact digest's first, else the most similar at or above the threshold. */
  lookup(query: CacheLookup): Promise<CacheHit | undefined>;
  /**
   * Adds an entry (the newest of an exact digest replaces an older one); the
   * partition's oldest go beyond its bound. `now` is Unix milliseconds.
   */
  put(partition: string, entry: NewCacheEntry, now: number): Promise<void>;
  close(): Promise<void>;
}
