// Prompt-cache affinities shared by every instance through Redis (REDIS_URL):
// one string per (organisation, model, opening) with a TTL, so the provider an
// instance saw caching is preferred by all of them. A lookup is one MGET for
// all of a request's models; remembering is a SET nobody waits for. Redis
// being away only turns stickiness off (said once per outage): it never fails
// a request.
import { connectRedisStore } from "../accounts/redis-connect.ts";
import { createRedisGuard } from "../accounts/redis-guard.ts";
import type { AffinityKey, CacheAffinity } from "./cache-affinity.ts";
import { routeStatsRedisKeys } from "./redis-keys.ts";

export interface RedisCacheAffinityOptions {
  url: string;
  /** Put before the key names; default "rtr:". */
  prefix?: string;
  ttlMs: number;
  /** The expiry is checked against this clock too (Redis's TTL only cleans up), so an injected clock moves it. */
  now: () => number;
  logger?: { warn(details: object, message: string): void };
}

/** A lookup is on the request's path: a Redis slower than this means no stickiness this time. */
const LOOKUP_TIMEOUT_MS = 250;

export async function createRedisCacheAffinity(options: RedisCacheAffinityOptions): Promise<CacheAffinity> {
  const client = await connectRedisStore({ url: options.url, store: "prompt-cache affinity", scripts: {}, logger: options.logger });
  const guarded = createRedisGuard("prompt-cache affinity", LOOKUP_TIMEOUT_MS);
  const keys = routeStatsRedisKeys(options.prefix);
  const nameOf = (key: AffinityKey) => keys.cacheAffinity(key.organizationId, key.modelId, key.opening);
  let failing = false;
  const failed = (error: unknown) => {
    if (!failing) options.logger?.warn({ err: error }, "prompt-cache affinities could not be shared through Redis; routing goes on without them");
    failing = true;
  };

  return {
    async lookup(wanted) {
      try {
        const values = await guarded("lookup", () => client.mGet(wanted.map(nameOf)));
        failing = false;
        const now = options.now();
        return values.map((value) => providerOf(value, now));
      } catch (error) {
        failed(error);
        return wanted.map(() => undefined);
      }
    },
    remember(key, providerId) {
      const expiresAt = options.now() + options.ttlMs;
      client.set(nameOf(key), `${expiresAt} ${providerId}`, { expiration: { type: "PX", value: options.ttlMs } }).then(() => (failing = false), failed);
    },
    async close() {
      if (!client.isOpen) return;
      if (client.isReady) await client.close();
      else client.destroy();
    },
  };
}

/** The provider of a stored `<expires ms> <provider id>`, unless it expired by the core's clock. */
function providerOf(value: string | null, now: number): string | undefined {
  if (value === null) return undefined;
  const space = value.indexOf(" ");
  return space > 0 && Number(value.slice(0, space)) > now ? value.slice(space + 1) : undefined;
}
