// The measurements and prompt-cache affinities a core runs with: shared
// through Redis when REDIS_URL is set (every instance sorts by the same
// figures), else this instance's own.
import type { Environment } from "../catalogue/catalogue.ts";
import { createMemoryCacheAffinity, type CacheAffinity } from "./cache-affinity.ts";
import { createMemoryMeasurements, type RouteMeasurements } from "./measurements.ts";

export async function openMeasurements(env: Environment, options: { weight: number; syncMs: number; logger?: { warn(details: object, message: string): void } }): Promise<RouteMeasurements> {
  if (!env.REDIS_URL) return createMemoryMeasurements(options.weight);
  const { createRedisMeasurements } = await import("./redis-measurements.ts");
  return createRedisMeasurements({ url: env.REDIS_URL, prefix: env.REDIS_PREFIX, ...options });
}

/** The prompt-cache affinities a core runs with: shared through Redis when REDIS_URL is set. */
export async function openCacheAffinity(env: Environment, options: { ttlMs: number; now: () => number; logger?: { warn(details: object, message: string): void } }): Promise<CacheAffinity> {
  if (!env.REDIS_URL) return createMemoryCacheAffinity(options);
  const { createRedisCacheAffinity } = await import("./redis-cache-affinity.ts");
  return createRedisCacheAffinity({ url: env.REDIS_URL, prefix: env.REDIS_PREFIX, ...options });
}
