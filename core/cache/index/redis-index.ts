// The cache index in Redis (REDIS_URL), shared by every instance. Redis 7.0
// has no vector search, so Redis holds the entries (payloads, digests, vector
// records) and each instance keeps a local vector index per partition
// (vector-index.ts) in step with it through the partition's sequence:
//
// - put is one script: the sequence goes up by one, the payload is stored
//   under a new entry id (with a TTL), the digest points at it (an older entry
//   of the digest goes), its vector record joins the partition scored by the
//   sequence number, the oldest beyond the bound go, and the partition's keys
//   live as long as its newest entry.
// - lookup searches the LOCAL index for a candidate, then makes one script
//   call that answers the exact digest's entry if its payload is still there,
//   else the candidate's payload, plus the records stored since this
//   instance's cursor (at most SYNC_BATCH), so the local index catches up in
//   the same round trip. Only when those new records hold a better match than
//   the candidate (another instance stored it since) does a second call fetch
//   its payload.
//
// Expiry is decided by the injected `now` (records carry createdAt and
// expiresAt); Redis's TTLs only clean up, TTL_MARGIN_MS later. A Redis away or
// too slow never fails a request: a lookup is a miss and a put is dropped,
// said once per outage.
import { defineScript, RESP_TYPES, type CommandParser } from "redis";
import { connectRedisStore } from "../../accounts/redis-connect.ts";
import { createRedisGuard } from "../../accounts/redis-guard.ts";
import type { CacheIndex } from "./cache-index.ts";
import { DEFAULT_MAX_ENTRY_BYTES, hitOf } from "./memory-index.ts";
import { cacheIndexRedisKeys } from "./redis-keys.ts";
import { createPartitionIndex, passes, signatureOf, SIGNATURE_WORDS, vectorEntryOf, type PartitionIndex, type VectorEntry } from "./vector-index.ts";

export interface RedisCacheIndexOptions {
  url: string;
  /** Put before the key names; default "rtr:". */
  prefix?: string;
  maxEntriesPerPartition: number;
  /** A larger payload is not stored; default DEFAULT_MAX_ENTRY_BYTES. */
  maxEntryBytes?: number;
  /** Partitions kept in the local index (least recently used go, to be fetched again); default 10,000. */
  maxLocalPartitions?: number;
  /** Bytes of the local index's vectors overall; default 256 MiB. */
  maxLocalBytes?: number;
  /** Records a lookup brings at most while catching up; default SYNC_BATCH. */
  syncBatch?: number;
  logger?: { warn(details: object, message: string): void; info?(details: object, message: string): void };
}

/** A lookup is on the request's path: a Redis slower than this is a miss this time. */
const LOOKUP_TIMEOUT_MS = 250;
const PUT_TIMEOUT_MS = 2_000;
/** Redis keeps what it stores this much longer than the entry lives (the instances' clocks differ a little). */
export const TTL_MARGIN_MS = 60_000;
/**
 * Records one lookup brings while catching up: an instance new to a partition
 * of 10,000 entries catches up over 50 lookups, each of a bounded cost (about
 * 4 ms of CPU: bench/README.md), and meanwhile finds only what it has (the
 * exact digest is always asked of Redis).
 */
export const SYNC_BATCH = 200;
/** What a local entry costs besides its vector (its strings and slots), roughly. */
const ENTRY_OVERHEAD_BYTES = 256;

// KEYS: sequence, order, records, digests. ARGV: payload base, id, digest,
// record, payload, payload TTL ms, bound, the partition keys' TTL ms. Answers
// the entry's sequence number.
const putScript = defineScript({
  SCRIPT: `
local base, id, digest = ARGV[1], ARGV[2], ARGV[3]
local seq = redis.call('INCR', KEYS[1])
local older = redis.call('HGET', KEYS[4], digest)
if older then
  redis.call('ZREM', KEYS[2], older)
  redis.call('HDEL', KEYS[3], older)
  redis.call('DEL', base .. older)
end
redis.call('HSET', KEYS[4], digest, id)
redis.call('ZADD', KEYS[2], seq, id)
redis.call('HSET', KEYS[3], id, ARGV[4])
redis.call('SET', base .. id, ARGV[5], 'PX', ARGV[6])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[7])
if over > 0 then
  local gone = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #gone, 2 do
    local record = redis.call('HGET', KEYS[3], gone[i])
    if record then
      local goneDigest = string.sub(record, 1, string.find(record, '\\n', 1, true) - 1)
      if redis.call('HGET', KEYS[4], goneDigest) == gone[i] then redis.call('HDEL', KEYS[4], goneDigest) end
    end
    redis.call('HDEL', KEYS[3], gone[i])
    redis.call('DEL', base .. gone[i])
  end
end
local keep = tonumber(ARGV[8])
for i = 1, 4 do
  if redis.call('PTTL', KEYS[i]) < keep then redis.call('PEXPIRE', KEYS[i], keep) end
end
return seq`,
  NUMBER_OF_KEYS: 4,
  parseCommand(parser: CommandParser, keys: string[], args: (string | Buffer)[]) {
    for (const key of keys) parser.pushKey(key);
    parser.push(...args);
  },
  transformReply: (reply: unknown) => reply as number,
});

// KEYS: sequence, order, records, digests. ARGV: payload base, exact digest,
// candidate id ("" for none), cursor, batch. Answers {sequence, {id, record,
// payload} of the exact digest or {}, {candidate payload} or {}, {id, record,
// ...} stored after the cursor, the sequence number those reach}.
const lookupScript = defineScript({
  SCRIPT: `
local base = ARGV[1]
local seq = tonumber(redis.call('GET', KEYS[1]) or '0')
local exact = {}
local exactId = redis.call('HGET', KEYS[4], ARGV[2])
if exactId then
  local payload = redis.call('GET', base .. exactId)
  local record = redis.call('HGET', KEYS[3], exactId)
  if payload and record then exact = {exactId, record, payload} end
end
local candidate = {}
if ARGV[3] ~= '' then
  local payload = redis.call('GET', base .. ARGV[3])
  if payload then candidate = {payload} end
end
local fresh = {}
local through = seq
local cursor, batch = tonumber(ARGV[4]), tonumber(ARGV[5])
if seq > cursor then
  local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. cursor, '+inf', 'WITHSCORES', 'LIMIT', 0, batch)
  for i = 1, #ids, 2 do
    local record = redis.call('HGET', KEYS[3], ids[i])
    if record then
      fresh[#fresh + 1] = ids[i]
      fresh[#fresh + 1] = record
    end
  end
  if #ids / 2 >= batch then through = tonumber(ids[#ids]) end
end
return {seq, exact, candidate, fresh, through}`,
  NUMBER_OF_KEYS: 4,
  parseCommand(parser: CommandParser, keys: string[], args: string[]) {
    for (const key of keys) parser.pushKey(key);
    parser.push(...args);
  },
  transformReply: (reply: unknown) => reply as LookupReply,
});

type LookupReply = [sequence: number, exact: Buffer[], candidate: Buffer[], fresh: Buffer[], through: number];

interface LocalPartition {
  index: PartitionIndex<VectorEntry>;
  /** The sequence number through which this instance has every record. */
  cursor: number;
  bytes: number;
}

const localBytesOf = (entry: VectorEntry) => entry.vector.byteLength + ENTRY_OVERHEAD_BYTES;

export async function createRedisCacheIndex(options: RedisCacheIndexOptions): Promise<CacheIndex> {
  const keys = cacheIndexRedisKeys(options.prefix);
  const maxEntryBytes = options.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES;
  const maxLocalPartitions = options.maxLocalPartitions ?? 10_000;
  const maxLocalBytes = options.maxLocalBytes ?? 256 * 1024 * 1024;
  const batch = String(options.syncBatch ?? SYNC_BATCH);
  // Least recently used first; a Redis that comes back may have come back empty, so every copy starts over.
  const local = new Map<string, LocalPartition>();
  let localBytes = 0;
  const scripts = { cachePut: putScript, cacheLookup: lookupScript };
  const connected = await connectRedisStore({
    url: options.url,
    store: "cache index",
    scripts,
    logger: options.logger,
    onReconnect: () => {
      forgetAll();
      loadScripts().catch(() => {}); // if this fails, the first call of a script falls back to EVAL
    },
  });
  // Payloads and records are bytes: read them as Buffers, not strings.
  const client = connected.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
  // Loaded up front so the first lookup is one round trip too (else EVALSHA fails once and EVAL follows).
  const loadScripts = () => Promise.all([connected.scriptLoad(putScript.SCRIPT), connected.scriptLoad(lookupScript.SCRIPT)]);
  await loadScripts();
  const lookupGuard = createRedisGuard("cache index", LOOKUP_TIMEOUT_MS);
  const putGuard = createRedisGuard("cache index", PUT_TIMEOUT_MS);
  let failing = false;
  const failed = (error: unknown) => {
    if (!failing) options.logger?.warn({ err: error }, "the semantic cache cannot reach Redis; requests go on without it");
    failing = true;
  };

  function forgetAll() {
    local.clear();
    localBytes = 0;
  }
  const partitionKeys = (partition: string) => [keys.sequence(partition), keys.order(partition), keys.records(partition), keys.digests(partition)];
  // Whole partitions go (the least recently used first): one that is asked again syncs from its start.
  const bound = () => {
    while (local.size > maxLocalPartitions || (localBytes > maxLocalBytes && local.size > 1)) {
      const [name, oldest] = local.entries().next().value!;
      local.delete(name);
      localBytes -= oldest.bytes;
    }
  };
  const use = (name: string): LocalPartition => {
    let partition = local.get(name);
    if (partition) local.delete(name);
    else partition = emptyPartition(options.maxEntriesPerPartition);
    local.set(name, partition);
    bound();
    return partition;
  };
  const forget = (partition: LocalPartition, entries: VectorEntry[]) => {
    for (const entry of entries) {
      partition.bytes -= localBytesOf(entry);
      localBytes -= localBytesOf(entry);
    }
  };
  const addLocally = (partition: LocalPartition, entry: VectorEntry, signature: Uint32Array) => {
    forget(partition, partition.index.add(entry, signature));
    partition.bytes += localBytesOf(entry);
    localBytes += localBytesOf(entry);
    bound();
  };

  return {
    async lookup(query) {
      const partition = use(query.partition);
      const similar = query.vector !== undefined && query.threshold < 1;
      // An exact entry known here and live will be served if Redis still has it: no need to search.
      const knownExact = partition.index.byDigest(query.exactDigest);
      const searched = similar && !(knownExact && passes(knownExact, query));
      const candidate = searched ? partition.index.nearest(query.vector!, query.threshold, query) : undefined;
      let reply: LookupReply;
      try {
        const args = [keys.payloadBase(query.partition), query.exactDigest, candidate?.entry.id ?? "", String(partition.cursor), batch];
        reply = await lookupGuard("lookup", () => client.cacheLookup(partitionKeys(query.partition), args)) as LookupReply;
        failing = false;
      } catch (error) {
        failed(error);
        return undefined;
      }
      const [sequence, exact, candidatePayload, fresh, through] = reply;
      const arrived: VectorEntry[] = [];
      // Let go while Redis answered (other partitions were used): nothing to keep in step, nothing to count.
      const attached = local.get(query.partition) === partition;
      if (attached && sequence < partition.cursor) {
        // Redis lost the partition (a restart, or it expired): start again from its beginning.
        localBytes -= partition.bytes;
        Object.assign(partition, emptyPartition(options.maxEntriesPerPartition));
      } else if (attached) {
        for (let i = 0; i < fresh.length; i += 2) {
          const { entry, signature } = decodeRecord(fresh[i].toString("latin1"), fresh[i + 1]);
          addLocally(partition, entry, signature);
          arrived.push(entry);
        }
        partition.cursor = Math.max(partition.cursor, through);
      }

      if (exact.length === 3) {
        const { entry } = decodeRecord(exact[0].toString("latin1"), exact[1]);
        if (passes(entry, query)) return hitOf(entry, bytesOf(exact[2]), 1, true);
      }
      if (!similar) return undefined;
      if (attached && candidate && candidatePayload.length === 0) {
        // Gone from Redis (evicted, replaced or expired there): gone here too.
        const gone = partition.index.remove(candidate.entry.id);
        if (gone) forget(partition, [gone]);
      }
      const held = candidate && candidatePayload.length === 1 ? candidate : undefined;
      // Stored by another instance since this one last looked: better than the candidate?
      const newer = arrived.length > 0 ? partition.index.nearest(query.vector!, query.threshold, query, arrived) : undefined;
      if (newer && newer.entry.id !== held?.entry.id && (!held || newer.similarity > held.similarity)) {
        try {
          const payload = await lookupGuard("lookup", () => client.get(keys.payload(query.partition, newer.entry.id)));
          if (payload) return hitOf(newer.entry, bytesOf(payload), newer.similarity, false);
        } catch (error) {
          failed(error);
        }
      }
      return held && hitOf(held.entry, bytesOf(candidatePayload[0]), held.similarity, false);
    },

    async put(name, entry, now) {
      if (entry.payload.byteLength > maxEntryBytes || entry.ttlMs <= 0) return;
      const stored = vectorEntryOf(entry, now);
      const signature = signatureOf(stored.vector);
      const keep = String(entry.ttlMs + TTL_MARGIN_MS);
      const args = [keys.payloadBase(name), stored.id, stored.exactDigest, encodeRecord(stored, signature), Buffer.from(entry.payload.buffer, entry.payload.byteOffset, entry.payload.byteLength), keep, String(options.maxEntriesPerPartition), keep];
      let sequence: number;
      try {
        sequence = await putGuard("put", () => client.cachePut(partitionKeys(name), args));
        failing = false;
      } catch (error) {
        failed(error);
        return;
      }
      // Known here at once; the cursor moves only when nothing else came in between (else the next lookup brings the gap).
      const partition = use(name);
      addLocally(partition, stored, signature);
      if (sequence === partition.cursor + 1) partition.cursor = sequence;
    },

    async close() {
      forgetAll();
      if (!connected.isOpen) return;
      if (connected.isReady) await connected.close();
      else connected.destroy();
    },
  };
}

/** A Buffer from Redis as a plain Uint8Array over the same bytes. */
const bytesOf = (buffer: Buffer) => new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);

const emptyPartition = (maxEntries: number): LocalPartition => ({ index: createPartitionIndex(maxEntries), cursor: 0, bytes: 0 });

// A vector record: `<digest>\n<JSON of the other fields>\n<signature><vector>`,
// the signature SIGNATURE_WORDS little-endian uint32 and the vector
// little-endian float32. The digest comes first so the put script can read it
// (to drop an evicted entry's digest); JSON escapes any newline in the fields.

interface RecordFields {
  guard: string;
  provider: string;
  model: string;
  createdAt: number;
  expiresAt: number;
}

export function encodeRecord(entry: VectorEntry, signature: Uint32Array): Buffer {
  const fields: RecordFields = { guard: entry.guard, provider: entry.provider, model: entry.model, createdAt: entry.createdAt, expiresAt: entry.expiresAt };
  const head = Buffer.from(`${entry.exactDigest}\n${JSON.stringify(fields)}\n`);
  const numbers = new Uint8Array(signature.byteLength + entry.vector.byteLength);
  numbers.set(new Uint8Array(signature.buffer, signature.byteOffset, signature.byteLength));
  numbers.set(new Uint8Array(entry.vector.buffer, entry.vector.byteOffset, entry.vector.byteLength), signature.byteLength);
  return Buffer.concat([head, numbers]);
}

export function decodeRecord(id: string, record: Buffer): { entry: VectorEntry; signature: Uint32Array } {
  const first = record.indexOf(10);
  const second = record.indexOf(10, first + 1);
  const fields = JSON.parse(record.toString("utf8", first + 1, second)) as RecordFields;
  // One aligned copy holds both the signature and the vector.
  const numbers = new Uint8Array(record.subarray(second + 1)).buffer;
  const signature = new Uint32Array(numbers, 0, SIGNATURE_WORDS);
  const vector = new Float32Array(numbers, SIGNATURE_WORDS * 4);
  return { entry: { id, exactDigest: record.toString("latin1", 0, first), vector, ...fields }, signature };
}
