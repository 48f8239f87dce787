// The local vector index of one cache partition, shared by both stores (the
// memory store keeps its entries here; the Redis store keeps here a copy of
// the partition's vector records, in step with Redis).
//
// A scan of every vector is too slow (10,000 x 256 float32 dot products take
// about 8 ms), so each entry carries a 128-bit random-hyperplane signature
// (SimHash): bit i is the side of hyperplane i the vector lies on. Two vectors
// at angle a differ in each bit with probability a/pi, so a query keeps only
// the entries whose Hamming distance is within a bound derived from the
// threshold (the expected distance at the threshold's angle plus four standard
// deviations) and computes the exact dot product for those alone. The
// hyperplanes come from a seeded generator, so every instance has the same.
import { randomBytes } from "node:crypto";
import type { NewCacheEntry } from "./cache-index.ts";

/** What the index keeps of an entry; a store adds its own fields (the memory store, the payload). */
/** A random entry id: a stale local record can never name another entry. */
const newEntryId = () => randomBytes(8).toString("hex");

/** A new entry's record in the index, its vector copied (the caller may reuse its buffer). */
export function vectorEntryOf(entry: NewCacheEntry, now: number): VectorEntry {
  return {
    id: newEntryId(),
    exactDigest: entry.exactDigest,
    vector: Float32Array.from(entry.vector),
    guard: entry.guard,
    provider: entry.provider,
    model: entry.model,
    createdAt: now,
    expiresAt: now + entry.ttlMs,
  };
}

export interface VectorEntry {
  id: string;
  exactDigest: string;
  /** Unit length. */
  vector: Float32Array;
  guard: string;
  provider: string;
  model: string;
  /** Unix milliseconds. */
  createdAt: number;
  /** Unix milliseconds: live while `now` is before it. */
  expiresAt: number;
}

/** What an entry must satisfy besides its similarity (a CacheLookup's filters). */
export interface EntryFilter {
  guard: string;
  providers?: ReadonlySet<string>;
  now: number;
}

export interface VectorMatch<Entry extends VectorEntry> {
  entry: Entry;
  similarity: number;
}

export interface PartitionIndex<Entry extends VectorEntry> {
  readonly size: number;
  /**
   * Adds an entry (replacing one of the same id, and the older entry of the
   * same digest); answers the entries that left for it, oldest beyond the bound included.
   * `signature`: the entry's, when already known (signatureOf; the Redis store keeps it in the record).
   */
  add(entry: Entry, signature?: Uint32Array): Entry[];
  remove(id: string): Entry | undefined;
  get(id: string): Entry | undefined;
  /** The newest entry of an exact digest, whatever its state. */
  byDigest(digest: string): Entry | undefined;
  /** The oldest entry (the next to go beyond the bound). */
  oldest(): Entry | undefined;
  /**
   * The most similar entry passing `filter` with a similarity of at least
   * `threshold` (ties: the newest); `among`, when given, limits the search to those entries.
   */
  nearest(vector: Float32Array, threshold: number, filter: EntryFilter, among?: readonly Entry[]): VectorMatch<Entry> | undefined;
}

/** Number of hyperplanes: four 32-bit words per signature. */
const SIGNATURE_BITS = 128;
export const SIGNATURE_WORDS = SIGNATURE_BITS / 32;
const WORDS = SIGNATURE_WORDS;
/** Standard deviations of Hamming distance kept above the expected one at the threshold. */
const SIGMAS = 4;
/** Any seed would do, as long as every instance uses the same. */
const HYPERPLANE_SEED = 0x5ca1ab1e;

/** Whether an entry may be served for a lookup, its similarity aside. */
export function passes(entry: VectorEntry, filter: EntryFilter): boolean {
  return entry.expiresAt > filter.now && entry.guard === filter.guard && (!filter.providers || filter.providers.has(entry.provider));
}

/**
 * The largest Hamming distance kept for a threshold: above it, an entry at
 * least that similar would be further than four standard deviations from its
 * expected distance. A threshold of 0 or less keeps everything.
 */
export function hammingBound(threshold: number): number {
  if (threshold <= 0) return SIGNATURE_BITS;
  const p = Math.acos(Math.min(1, threshold)) / Math.PI;
  const expected = SIGNATURE_BITS * p;
  const sigma = Math.sqrt(SIGNATURE_BITS * p * (1 - p));
  return Math.min(SIGNATURE_BITS, Math.ceil(expected + SIGMAS * sigma));
}

/** The dot product (the cosine of unit vectors); 0 for vectors of unequal lengths (two embedders never match). */
export function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  const n = a.length - (a.length % 4);
  let i = 0;
  for (; i < n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < a.length; i++) s0 += a[i] * b[i];
  return s0 + s1 + s2 + s3;
}

/** Bits set in a 32-bit word. */
function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Hyperplanes per vector length, made once: SIGNATURE_BITS vectors of `length` Gaussian numbers. */
const hyperplanesByLength = new Map<number, Float32Array[]>();

function hyperplanes(length: number): Float32Array[] {
  let planes = hyperplanesByLength.get(length);
  if (!planes) {
    const numbers = new Float32Array(SIGNATURE_BITS * length);
    const random = mulberry32(HYPERPLANE_SEED ^ length);
    // Box-Muller: two uniform numbers give two independent standard normal ones.
    for (let i = 0; i < numbers.length; i += 2) {
      const radius = Math.sqrt(-2 * Math.log(1 - random()));
      const angle = 2 * Math.PI * random();
      numbers[i] = radius * Math.cos(angle);
      if (i + 1 < numbers.length) numbers[i + 1] = radius * Math.sin(angle);
    }
    planes = Array.from({ length: SIGNATURE_BITS }, (_, bit) => numbers.subarray(bit * length, (bit + 1) * length));
    hyperplanesByLength.set(length, planes);
  }
  return planes;
}

/** A small seeded generator of uniform numbers in [0, 1): the same sequence everywhere. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The vector's SimHash signature, written into `into` at word `offset`. */
export function writeSignature(vector: Float32Array, into: Uint32Array, offset: number): void {
  const planes = hyperplanes(vector.length);
  for (let word = 0; word < WORDS; word++) {
    let bits = 0;
    for (let bit = 0; bit < 32; bit++) if (dot(planes[word * 32 + bit], vector) >= 0) bits |= 1 << bit;
    into[offset + word] = bits >>> 0;
  }
}

/** The vector's signature alone (tests measure the prefilter with it). */
export function signatureOf(vector: Float32Array): Uint32Array {
  const signature = new Uint32Array(WORDS);
  writeSignature(vector, signature, 0);
  return signature;
}

export function hammingDistance(a: Uint32Array, b: Uint32Array): number {
  let distance = 0;
  for (let word = 0; word < WORDS; word++) distance += popcount(a[word] ^ b[word]);
  return distance;
}

export function createPartitionIndex<Entry extends VectorEntry>(maxEntries: number): PartitionIndex<Entry> {
  // Dense slots, so the scan reads one typed array: an entry's signature is
  // at words [4 * slot, 4 * slot + 4). A removal moves the last slot into the hole.
  let signatures = new Uint32Array(WORDS * 16);
  const slots: Entry[] = [];
  const slotOf = new Map<string, number>();
  // Insertion order (a Map keeps it), so the oldest is the first key.
  const byId = new Map<string, Entry>();
  const digests = new Map<string, Entry>();
  const query = new Uint32Array(WORDS);

  const remove = (id: string): Entry | undefined => {
    const entry = byId.get(id);
    if (!entry) return undefined;
    byId.delete(id);
    if (digests.get(entry.exactDigest) === entry) digests.delete(entry.exactDigest);
    const slot = slotOf.get(id)!;
    slotOf.delete(id);
    const last = slots.length - 1;
    if (slot !== last) {
      const moved = slots[last];
      slots[slot] = moved;
      slotOf.set(moved.id, slot);
      signatures.copyWithin(slot * WORDS, last * WORDS, last * WORDS + WORDS);
    }
    slots.pop();
    return entry;
  };

  return {
    get size() {
      return slots.length;
    },
    add(entry, signature) {
      const left: Entry[] = [];
      const same = remove(entry.id);
      if (same) left.push(same);
      const older = digests.get(entry.exactDigest);
      if (older) left.push(remove(older.id)!);
      while (slots.length >= Math.max(1, maxEntries)) left.push(remove(byId.keys().next().value!)!);
      const slot = slots.length;
      if (signatures.length < (slot + 1) * WORDS) {
        const grown = new Uint32Array(signatures.length * 2);
        grown.set(signatures);
        signatures = grown;
      }
      if (signature) signatures.set(signature.subarray(0, WORDS), slot * WORDS);
      else writeSignature(entry.vector, signatures, slot * WORDS);
      slots.push(entry);
      slotOf.set(entry.id, slot);
      byId.set(entry.id, entry);
      digests.set(entry.exactDigest, entry);
      return left;
    },
    remove,
    get: (id) => byId.get(id),
    byDigest: (digest) => digests.get(digest),
    oldest: () => byId.values().next().value,
    nearest(vector, threshold, filter, among) {
      let best: Entry | undefined;
      let bestSimilarity = -Infinity;
      const consider = (entry: Entry) => {
        if (!passes(entry, filter)) return;
        const similarity = dot(vector, entry.vector);
        if (similarity < threshold) return;
        if (similarity > bestSimilarity || (similarity === bestSimilarity && entry.createdAt > best!.createdAt)) {
          best = entry;
          bestSimilarity = similarity;
        }
      };
      if (among) {
        for (const entry of among) if (byId.get(entry.id) === entry) consider(entry);
      } else if (slots.length > 0) {
        writeSignature(vector, query, 0);
        const [q0, q1, q2, q3] = query;
        const bound = hammingBound(threshold);
        const sig = signatures;
        for (let slot = 0, o = 0; slot < slots.length; slot++, o += WORDS) {
          // One test of the whole distance: a test after part of it was measured slower (most entries pass it).
          if (popcount(sig[o] ^ q0) + popcount(sig[o + 1] ^ q1) + popcount(sig[o + 2] ^ q2) + popcount(sig[o + 3] ^ q3) <= bound) consider(slots[slot]);
        }
      }
      return best ? { entry: best, similarity: bestSimilarity } : undefined;
    },
  };
}
