// Every Redis key name of the semantic cache's index, in one place (docs rule 2).
//
// A partition's keys share the hash tag `{<partition>}`, so one script touches
// one slot (a Redis Cluster keeps a partition on one node). The partition is a
// hex digest (core/cache/partition.ts), so it holds no ':' and no brace. `v1`
// names the record format and the signatures' hyperplanes (vector-index.ts):
// instances of another version would read neither, so they keep apart.

export const DEFAULT_REDIS_PREFIX = "rtr:";

export interface CacheIndexRedisKeys {
  /** String: the partition's sequence, one more per entry stored (the instances' sync cursor). */
  sequence(partition: string): string;
  /** Sorted set: the partition's entry ids, scored by the sequence number each was stored at (oldest first). */
  order(partition: string): string;
  /** Hash: entry id -> its vector record (redis-index.ts: digest, fields, signature, vector). */
  records(partition: string): string;
  /** Hash: exact digest -> the id of its newest entry. */
  digests(partition: string): string;
  /** String: an entry's payload, with a TTL; `payload(p, id) === payloadBase(p) + id`. */
  payload(partition: string, id: string): string;
  /** The name of the partition's payloads without the id (the scripts build the names from it). */
  payloadBase(partition: string): string;
}

export function cacheIndexRedisKeys(prefix: string = DEFAULT_REDIS_PREFIX): CacheIndexRedisKeys {
  const base = (partition: string) => `${prefix}cache:v1:{${partition}}:`;
  return {
    sequence: (partition) => `${base(partition)}seq`,
    order: (partition) => `${base(partition)}order`,
    records: (partition) => `${base(partition)}records`,
    digests: (partition) => `${base(partition)}digests`,
    payload: (partition, id) => `${base(partition)}payload:${id}`,
    payloadBase: (partition) => `${base(partition)}payload:`,
  };
}
