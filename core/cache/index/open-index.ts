// The cache index a core runs with: Redis when REDIS_URL is set (shared by
// every instance, so what one stores every other finds), else memory.
import type { Environment } from "../../catalogue/catalogue.ts";
import type { CacheIndex } from "./cache-index.ts";
import { createMemoryCacheIndex } from "./memory-index.ts";

export async function openCacheIndex(
  env: Environment,
  options: { maxEntriesPerPartition: number; maxEntryBytes?: number; logger?: { warn(details: object, message: string): void; info?(details: object, message: string): void } },
): Promise<CacheIndex> {
  if (!env.REDIS_URL) return createMemoryCacheIndex(options);
  const { createRedisCacheIndex } = await import("./redis-index.ts");
  return createRedisCacheIndex({ url: env.REDIS_URL, prefix: env.REDIS_PREFIX, ...options });
}
