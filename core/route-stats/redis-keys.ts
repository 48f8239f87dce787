// Every Redis key name of the route statistics, in one place (docs rule 2).
// The organisation and the model are URI-encoded, so they hold no ':' and two
// (organisation, model, opening) triples never share a name.

export const DEFAULT_REDIS_PREFIX = "rtr:";

export interface RouteStatsRedisKeys {
  /** Hash: every route's weighted latency, throughput and sample count (redis-measurements.ts). */
  measurements(): string;
  /**
   * String `<expires ms> <provider id>`: the provider whose answer last showed prompt-cache
   * activity for this opening of the organisation's requests to the model, expiring with it.
   */
  cacheAffinity(organizationId: string, modelId: string, opening: string): string;
}

export function routeStatsRedisKeys(prefix: string = DEFAULT_REDIS_PREFIX): RouteStatsRedisKeys {
  return {
    measurements: () => `${prefix}route-measurements`,
    cacheAffinity: (organizationId, modelId, opening) => `${prefix}cache-affinity:${encodeURIComponent(organizationId)}:${encodeURIComponent(modelId)}:${opening}`,
  };
}
