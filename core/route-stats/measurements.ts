// What each (provider, model) route measured: first-token latency and output
// throughput, exponentially weighted, for `provider.sort` (throughput, latency)
// and the catalogue's provider entries. Recording is synchronous and cheap (the
// answer's path never waits for it); a shared store batches its writes.

/** One answer's figures: either may be missing (an answer too short to time). */
export interface RouteSample {
  firstTokenLatencyMs?: number;
  throughputTokensPerSecond?: number;
}

/** A route's weighted figures as this instance knows them. */
export interface RouteMeasurement {
  firstTokenLatencyMs?: number;
  throughputTokensPerSecond?: number;
  samples: number;
}

/** What routing reads: synchronous, from memory. */
export interface MeasurementsView {
  get(providerId: string, modelId: string): RouteMeasurement | undefined;
}

export interface RouteMeasurements extends MeasurementsView {
  /** Takes one answer's figures; never waits (a shared store writes them in the background). */
  record(providerId: string, modelId: string, sample: RouteSample): void;
  /** Writes what is buffered and reads what the other instances measured (a timer does it too). */
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** The weight of a new sample in the average (routing.measurements.weight). */
export const DEFAULT_WEIGHT = 0.3;

/** The next weighted average: the sample itself when there is none yet. */
export function weighted(previous: number | undefined, sample: number, weight: number): number {
  return previous === undefined ? sample : previous + weight * (sample - previous);
}

export function routeKey(providerId: string, modelId: string): string {
  return `${providerId}\u0000${modelId}`;
}

/** One instance's measurements (no REDIS_URL): the averages are updated as they come. */
export function createMemoryMeasurements(weight = DEFAULT_WEIGHT): RouteMeasurements {
  const routes = new Map<string, RouteMeasurement>();
  return {
    get: (providerId, modelId) => routes.get(routeKey(providerId, modelId)),
    record(providerId, modelId, sample) {
      const key = routeKey(providerId, modelId);
      routes.set(key, applySample(routes.get(key), sample, weight));
    },
    sync: async () => {},
    close: async () => {},
  };
}

export function applySample(previous: RouteMeasurement | undefined, sample: RouteSample, weight: number): RouteMeasurement {
  return {
    firstTokenLatencyMs: sample.firstTokenLatencyMs === undefined ? previous?.firstTokenLatencyMs : weighted(previous?.firstTokenLatencyMs, sample.firstTokenLatencyMs, weight),
    throughputTokensPerSecond:
      sample.throughputTokensPerSecond === undefined ? previous?.throughputTokensPerSecond : weighted(previous?.throughputTokensPerSecond, sample.throughputTokensPerSecond, weight),
    samples: (previous?.samples ?? 0) + 1,
  };
}

/**
 * One answer's sample: latency from sending to the first event; throughput as
 * output tokens over the time from the first event to the end (none when that
 * time is 0 or no token came: nothing to divide).
 */
export function sampleOf(timing: { sentAt: number; firstAt: number; endedAt: number }, outputTokens: number | undefined): RouteSample {
  const streaming = timing.endedAt - timing.firstAt;
  return {
    firstTokenLatencyMs: Math.max(0, timing.firstAt - timing.sentAt),
    throughputTokensPerSecond: outputTokens && streaming > 0 ? outputTokens / (streaming / 1000) : undefined,
  };
}
