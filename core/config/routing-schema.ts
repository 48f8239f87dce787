// The `routing` block of the configuration: how routes are measured for
// `provider.sort`, and prompt-cache stickiness (docs/routing.md, "Routing preferences").
import { z } from "zod";

export const ROUTING_DEFAULTS = { measurement_weight: 0.3, measurement_sync_ms: 1000, cache_stickiness_seconds: 300 };

export const routingSchema = z
  .object({
    /** The weight of a new answer in a route's exponentially weighted latency and throughput (0 < w <= 1). */
    measurement_weight: z.number().positive().max(1).default(ROUTING_DEFAULTS.measurement_weight),
    /** How often an instance writes its measurements to Redis and reads the others' (with REDIS_URL). */
    measurement_sync_ms: z.number().int().positive().default(ROUTING_DEFAULTS.measurement_sync_ms),
    /** How long a provider whose answer showed prompt-cache activity is tried first for the same opening; 0: never. */
    cache_stickiness_seconds: z.number().int().nonnegative().default(ROUTING_DEFAULTS.cache_stickiness_seconds),
  })
  .strict();

export type RoutingConfig = z.infer<typeof routingSchema>;
