// Prompt-cache affinity: which provider last showed cache activity (cached or
// cache-write input tokens) for an organisation's requests to a model that
// open the same way. Routing tries that provider first for a while, so its
// prompt cache stays warm (docs/routing.md, "Prompt-cache stickiness").
// Remembering never waits; looking up waits only for a shared store.

/** One (organisation, model, opening) triple; `opening` is the opening's digest (core/routing/opening.ts). */
export interface AffinityKey {
  organizationId: string;
  modelId: string;
  opening: string;
}

export interface CacheAffinity {
  /** The remembered provider of each key (undefined: none, or expired). In memory it answers at once. */
  lookup(keys: AffinityKey[]): (string | undefined)[] | Promise<(string | undefined)[]>;
  /** The provider showed cache activity for this key: it is preferred until `ttlMs` from now. Never waits. */
  remember(key: AffinityKey, providerId: string): void;
  close(): Promise<void>;
}

/** At most this many entries in memory; the least recently remembered go first. */
const MAX_ENTRIES = 100_000;

/** One instance's affinities (no REDIS_URL). */
export function createMemoryCacheAffinity(options: { ttlMs: number; now: () => number; maxEntries?: number }): CacheAffinity {
  const entries = new Map<string, { providerId: string; expiresAt: number }>();
  const maxEntries = options.maxEntries ?? MAX_ENTRIES;
  return {
    lookup(keys) {
      const now = options.now();
      return keys.map((key) => {
        const entry = entries.get(flatKey(key));
        return entry && entry.expiresAt > now ? entry.providerId : undefined;
      });
    },
    remember(key, providerId) {
      const flat = flatKey(key);
      // Deleted first so the entry moves to the end: the Map's order is the eviction order.
      entries.delete(flat);
      entries.set(flat, { providerId, expiresAt: options.now() + options.ttlMs });
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    },
    close: async () => {},
  };
}

const flatKey = (key: AffinityKey) => `${key.organizationId}\u0000${key.modelId}\u0000${key.opening}`;
