// The local vector index: its signature prefilter keeps every entry similar
// enough (recall measured against a scan of every vector, on random and on
// clustered vectors), and its bookkeeping (replacement by id and by digest,
// the bound, removal) keeps the dense slots right.
import { describe, expect, it } from "vitest";
import { createPartitionIndex, dot, hammingBound, hammingDistance, signatureOf, type VectorEntry } from "../../../../core/cache/index/vector-index.ts";
import { clusteredVectors, vectorSource } from "../../../support/cache-vectors.ts";

const FILTER = { guard: "", now: 0 };

function entry(id: string, vector: Float32Array, fields: Partial<VectorEntry> = {}): VectorEntry {
  return { id, exactDigest: `digest-${id}`, vector, guard: "", provider: "p", model: "m", createdAt: 0, expiresAt: 1, ...fields };
}

/** Every (query, entry) pair's similarity and signatures' Hamming distance. */
function pairsOf(queries: Float32Array[], entries: Float32Array[]): { similarity: number; distance: number }[] {
  const entrySignatures = entries.map(signatureOf);
  return queries.flatMap((query) => {
    const signature = signatureOf(query);
    return entries.map((vector, i) => ({ similarity: dot(query, vector), distance: hammingDistance(signature, entrySignatures[i]) }));
  });
}

/** Of the pairs at least `threshold` similar, how many the prefilter keeps. */
function pairRecall(pairs: { similarity: number; distance: number }[], threshold: number): { similar: number; kept: number } {
  const bound = hammingBound(threshold);
  const similar = pairs.filter((pair) => pair.similarity >= threshold);
  return { similar: similar.length, kept: similar.filter((pair) => pair.distance <= bound).length };
}

/** The best entry by a scan of every vector, given each entry's similarity to the query. */
function bruteForce(similarities: number[], threshold: number): number | undefined {
  let best: number | undefined;
  similarities.forEach((similarity, i) => {
    if (similarity >= threshold && (best === undefined || similarity > similarities[best])) best = i;
  });
  return best;
}

const THRESHOLDS = [0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99];

describe("the signature prefilter", () => {
  const datasets = [
    {
      name: "random vectors, queries near some of them",
      make() {
        const source = vectorSource(256, 1);
        const entries = Array.from({ length: 2000 }, () => source.random());
        // Spreads of 0.05 to 0.8: cosines of about 0.999 down to 0.78 to their entry.
        const queries = Array.from({ length: 400 }, () => source.near(entries[Math.floor(source.uniform() * entries.length)], 0.05 + 0.75 * source.uniform()));
        return { entries, queries };
      },
    },
    {
      name: "clustered vectors (topics of 20 prompts), queries from the same topics",
      make() {
        const source = vectorSource(256, 2);
        const all = clusteredVectors(source, 2400, 20);
        // Every sixth prompt is a query: its topic's other prompts are in the index.
        return { entries: all.filter((_, i) => i % 6 !== 0), queries: all.filter((_, i) => i % 6 === 0) };
      },
    },
  ];

  for (const dataset of datasets) {
    it(`keeps every pair at or above thresholds 0.7 to 0.99: ${dataset.name}`, () => {
      const { entries, queries } = dataset.make();
      const pairs = pairsOf(queries, entries);
      for (const threshold of THRESHOLDS) {
        const { similar, kept } = pairRecall(pairs, threshold);
        expect(similar, `pairs at ${threshold}`).toBeGreaterThanOrEqual(10);
        expect(kept, `pairs kept at ${threshold}`).toBe(similar);
      }
    });

    it(`finds what a scan of every vector finds: ${dataset.name}`, () => {
      const { entries, queries } = dataset.make();
      const index = createPartitionIndex<VectorEntry>(entries.length);
      entries.forEach((vector, i) => index.add(entry(String(i), vector)));
      const similarities = queries.map((query) => entries.map((vector) => dot(query, vector)));
      for (const threshold of [0.8, 0.9]) {
        let hits = 0;
        for (const [q, query] of queries.entries()) {
          const expected = bruteForce(similarities[q], threshold);
          const found = index.nearest(query, threshold, FILTER);
          expect(found?.entry.id).toBe(expected === undefined ? undefined : String(expected));
          if (found) {
            hits++;
            expect(found.similarity).toBe(similarities[q][expected!]);
          }
        }
        expect(hits).toBeGreaterThan(queries.length / 10);
      }
    });
  }

  it("derives a bound that grows as the threshold falls, keeping everything at 0", () => {
    expect(hammingBound(0.99)).toBeLessThan(hammingBound(0.9));
    expect(hammingBound(0.9)).toBeLessThan(hammingBound(0.8));
    expect(hammingBound(0)).toBe(128);
    expect(hammingBound(-0.5)).toBe(128);
  });

  it("gives the same signature to the same vector, on any instance (a seeded generator)", () => {
    const vector = vectorSource(64, 9).random();
    expect([...signatureOf(vector)]).toEqual([...signatureOf(Float32Array.from(vector))]);
  });
});

describe("a partition index's bookkeeping", () => {
  const source = vectorSource(32, 3);

  it("evicts the oldest beyond its bound and keeps finding the others after slots move", () => {
    const index = createPartitionIndex<VectorEntry>(3);
    const vectors = Array.from({ length: 5 }, () => source.random());
    const left = vectors.map((vector, i) => index.add(entry(String(i), vector)).map((gone) => gone.id));
    expect(left).toEqual([[], [], [], ["0"], ["1"]]);
    expect(index.size).toBe(3);
    expect(index.oldest()?.id).toBe("2");
    for (const i of [2, 3, 4]) expect(index.nearest(vectors[i], 0.999, FILTER)?.entry.id).toBe(String(i));
    expect(index.nearest(vectors[0], 0.999, FILTER)).toBeUndefined();
    expect(index.remove("2")?.id).toBe("2");
    expect(index.remove("2")).toBeUndefined();
    for (const i of [3, 4]) expect(index.nearest(vectors[i], 0.999, FILTER)?.entry.id).toBe(String(i));
  });

  it("replaces the older entry of the same digest and an entry of the same id", () => {
    const index = createPartitionIndex<VectorEntry>(10);
    const [a, b, c] = [source.random(), source.random(), source.random()];
    index.add(entry("1", a, { exactDigest: "d" }));
    expect(index.add(entry("2", b, { exactDigest: "d" })).map((gone) => gone.id)).toEqual(["1"]);
    expect(index.byDigest("d")?.id).toBe("2");
    expect(index.nearest(a, 0.999, FILTER)).toBeUndefined();
    expect(index.add(entry("2", c, { exactDigest: "e" })).map((gone) => gone.id)).toEqual(["2"]);
    expect(index.byDigest("d")).toBeUndefined();
    expect(index.size).toBe(1);
  });

  it("skips expired entries, other guards and other providers, and prefers the newest of equals", () => {
    const index = createPartitionIndex<VectorEntry>(10);
    const vector = source.random();
    index.add(entry("old", vector, { createdAt: 1, expiresAt: 100, exactDigest: "x" }));
    index.add(entry("new", vector, { createdAt: 2, expiresAt: 50, exactDigest: "y" }));
    expect(index.nearest(vector, 0.9, { guard: "", now: 10 })?.entry.id).toBe("new");
    expect(index.nearest(vector, 0.9, { guard: "", now: 50 })?.entry.id).toBe("old");
    expect(index.nearest(vector, 0.9, { guard: "", now: 100 })).toBeUndefined();
    expect(index.nearest(vector, 0.9, { guard: "7", now: 10 })).toBeUndefined();
    expect(index.nearest(vector, 0.9, { guard: "", now: 10, providers: new Set(["q"]) })).toBeUndefined();
    expect(index.nearest(vector, 0.9, { guard: "", now: 10, providers: new Set(["p"]) })?.entry.id).toBe("new");
  });
});
