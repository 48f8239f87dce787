// The cache's top-level answer fields (docs/cache.md): only a request that
// used the cache (the `cache_key` header) has them, in every format that
// serves it. A chat answer has `cached`, and on a hit `similarity`; a media
// create answer has `cached`, and on a hit `usage_id`, the hit's own usage
// record (its charge, a tenth of the task's; docs/tasks.md, "Cache").
import type { ResponseStart } from "../../../gen/router/v1/inference_pb.js";
import type { CreateImageResponse, CreateVideoResponse } from "../../../gen/router/v1/tasks_pb.js";

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

export function mediaCacheFields(cacheKey: string, created: Pick<CreateImageResponse | CreateVideoResponse, "cached" | "usageId">): { cached?: boolean; usage_id?: string } {
  if (!cacheKey) return {};
  return created.cached ? { cached: true, usage_id: created.usageId } : { cached: false };
}
