// Deterministic unit vectors for the cache index's tests and benchmark: random
// ones, and clustered ones shaped like prompts' embeddings (topics far apart,
// prompts of one topic spread around it, some near-duplicates of each other).
import { mulberry32 } from "../../core/cache/index/vector-index.ts";

export interface VectorSource {
  /** A uniformly random unit vector. */
  random(): Float32Array;
  /** `base` moved by noise of norm `spread` (relative to its unit length), normalised again. */
  near(base: Float32Array, spread: number): Float32Array;
  /** A uniform number in [0, 1). */
  uniform(): number;
}

export function vectorSource(dimensions: number, seed: number): VectorSource {
  const uniform = mulberry32(seed);
  const gaussian = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  const random = () => normalised(Float32Array.from({ length: dimensions }, gaussian));
  return {
    random,
    uniform,
    near(base, spread) {
      const noise = random();
      return normalised(base.map((value, i) => value + spread * noise[i]));
    },
  };
}

export function normalised(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  return vector.map((value) => value / norm);
}

/**
 * `count` vectors in topics of `perTopic`: a prompt is either new to its topic,
 * at a spread of 0.3 to 1.5 from it (cosine about 0.96 to 0.55 to the topic),
 * or (one in three) a rewording of an earlier prompt of the topic, at a spread
 * of 0.1 to 0.6 from it (cosine about 0.995 to 0.86), as users ask again.
 */
export function clusteredVectors(source: VectorSource, count: number, perTopic = 20): Float32Array[] {
  const vectors: Float32Array[] = [];
  let topic = source.random();
  let topicStart = 0;
  for (let i = 0; i < count; i++) {
    if (i % perTopic === 0) [topic, topicStart] = [source.random(), i];
    const earlier = i - topicStart;
    if (earlier > 0 && source.uniform() < 1 / 3) vectors.push(source.near(vectors[topicStart + Math.floor(source.uniform() * earlier)], 0.1 + 0.5 * source.uniform()));
    else vectors.push(source.near(topic, 0.3 + 1.2 * source.uniform()));
  }
  return vectors;
}
