// An answer's figures for its route's measurements (core/route-stats): taken
// once it is complete, synchronously (the store batches any write to Redis).
import type { RouteMeasurements } from "../route-stats/measurements.ts";
import { sampleOf } from "../route-stats/measurements.ts";
import type { Answering } from "./inference-charge.ts";

export function measureAnswer(
  measurements: RouteMeasurements | undefined,
  answering: Answering | undefined,
  timing: { sentAt: number; firstAt: number } | undefined,
  endedAt: number,
  streamed: boolean,
) {
  if (!measurements || !answering || !timing) return;
  const { route } = answering.attempt;
  const outputTokens = answering.served?.tokens.outputTokens;
  // An answer not streamed comes whole: its first event says nothing of latency, and its throughput is over the whole wait.
  const sample = streamed ? sampleOf({ ...timing, endedAt }, outputTokens) : sampleOf({ sentAt: timing.sentAt, firstAt: timing.sentAt, endedAt }, outputTokens);
  if (!streamed) sample.firstTokenLatencyMs = undefined;
  measurements.record(route.provider.id, route.model.id, sample);
}
