// Measurements shared by every instance through Redis (REDIS_URL): each
// instance buffers its answers' samples and, on a timer, applies them to one
// hash in one script, which answers the whole hash back, so one round trip
// both writes this instance's samples and reads the others'. Routing reads
// the copy in memory: nothing on an answer's path waits for Redis.
import { defineScript, type CommandParser } from "redis";
import { connectRedisStore } from "../accounts/redis-connect.ts";
import { createRedisGuard } from "../accounts/redis-guard.ts";
import { routeStatsRedisKeys } from "./redis-keys.ts";
import { DEFAULT_WEIGHT, routeKey, type RouteMeasurement, type RouteMeasurements, type RouteSample } from "./measurements.ts";

export interface RedisMeasurementsOptions {
  url: string;
  /** Put before the key name; default "rtr:". */
  prefix?: string;
  weight?: number;
  /** How often buffered samples are written and the shared figures read; default 1 s. */
  syncMs?: number;
  logger?: { warn(details: object, message: string): void };
}

/** At most this many samples wait for the next write (a Redis away for long loses the oldest). */
const MAX_BUFFERED = 10_000;

// ARGV: the hash, the weight, then per sample its route, latency and throughput
// ("" when not measured). Fields: <route>\0l (latency), \0t (throughput), \0n (samples).
const APPLY = `
local key, weight = ARGV[1], tonumber(ARGV[2])
for i = 3, #ARGV, 3 do
  local route, latency, throughput = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  for _, metric in ipairs({ { 'l', latency }, { 't', throughput } }) do
    if metric[2] ~= '' then
      local field = route .. '\\0' .. metric[1]
      local sample = tonumber(metric[2])
      local previous = tonumber(redis.call('HGET', key, field))
      local value = sample
      if previous then value = previous + weight * (sample - previous) end
      redis.call('HSET', key, field, string.format('%.17g', value))
    end
  end
  redis.call('HINCRBY', key, route .. '\\0n', 1)
end
return redis.call('HGETALL', key)
`;

const applyScript = defineScript({
  SCRIPT: APPLY,
  NUMBER_OF_KEYS: 0,
  parseCommand(parser: CommandParser, key: string, weight: number, samples: string[]) {
    parser.push(key, String(weight), ...samples);
  },
  transformReply: (reply: unknown) => reply as string[],
});

export async function createRedisMeasurements(options: RedisMeasurementsOptions): Promise<RouteMeasurements> {
  const client = await connectRedisStore({ url: options.url, store: "route measurements", scripts: { applySamples: applyScript }, logger: options.logger });
  const guarded = createRedisGuard("route measurements", 2_000);
  const key = routeStatsRedisKeys(options.prefix).measurements();
  const weight = options.weight ?? DEFAULT_WEIGHT;
  let known = new Map<string, RouteMeasurement>();
  let buffered: string[] = [];
  let running: Promise<void> | undefined;
  let failing = false;

  const syncOnce = async () => {
    const samples = buffered;
    buffered = [];
    try {
      known = readHash(await guarded("sync", () => client.applySamples(key, weight, samples)));
      failing = false;
    } catch (error) {
      // Kept for the next try; said once per outage.
      buffered = [...samples, ...buffered].slice(-MAX_BUFFERED * 3);
      if (!failing) options.logger?.warn({ err: error }, "route measurements could not be shared through Redis; retrying");
      failing = true;
    }
  };
  const sync = () => (running ??= syncOnce().finally(() => (running = undefined)));
  const timer = setInterval(() => void sync(), options.syncMs ?? 1_000);
  timer.unref();

  return {
    get: (providerId, modelId) => known.get(routeKey(providerId, modelId)),
    record(providerId, modelId, sample: RouteSample) {
      buffered.push(routeKey(providerId, modelId), numberOrEmpty(sample.firstTokenLatencyMs), numberOrEmpty(sample.throughputTokensPerSecond));
      if (buffered.length > MAX_BUFFERED * 3) buffered.splice(0, 3);
    },
    async sync() {
      // A sync already under way may have taken its samples before the latest: run once more after it.
      await running;
      await sync();
    },
    async close() {
      clearInterval(timer);
      await running;
      if (buffered.length > 0) await sync();
      if (!client.isOpen) return;
      if (client.isReady) await client.close();
      else client.destroy();
    },
  };
}

const numberOrEmpty = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? "" : String(value));

/** The hash's fields (HGETALL's flat list) as measurements by route. */
function readHash(flat: string[]): Map<string, RouteMeasurement> {
  const routes = new Map<string, RouteMeasurement>();
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const separator = flat[i].lastIndexOf("\u0000");
    const route = flat[i].slice(0, separator);
    const value = Number(flat[i + 1]);
    const measurement = routes.get(route) ?? { samples: 0 };
    const metric = flat[i].slice(separator + 1);
    if (metric === "l") measurement.firstTokenLatencyMs = value;
    else if (metric === "t") measurement.throughputTokensPerSecond = value;
    else if (metric === "n") measurement.samples = value;
    routes.set(route, measurement);
  }
  return routes;
}
