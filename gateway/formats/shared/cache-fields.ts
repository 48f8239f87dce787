// The semantic cache's top-level answer fields (docs/cache.md): `cached`, and
// on a hit `similarity`. Only a request that used the cache (the `cache_key`
// header) has them, in every format that serves it.
import type { ResponseStart } from "../../../gen/router/v1/inference_pb.js";

export interface CacheFields {
  cached?: boolean;
  similarity?: number;
}

export function cacheFields(start: Pick<ResponseStart, "cache">): CacheFields {
  const { cache } = start;
  if (!cache) return {};
  return cache.hit ? { cached: true, similarity: roundedSimilarity(cache.similarity) } : { cached: false };
}

/** Six decimals: a float32 dot product's digits beyond them are noise. */
const roundedSimilarity = (similarity: number) => Math.round(similarity * 1e6) / 1e6;
