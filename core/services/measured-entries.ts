// Provider entries with their routes' measurements (throughput, first-token
// latency), as the catalogue service answers them. Here, not in catalogue/:
// route-stats/' Redis stores connect through accounts/, which reads catalogue/,
// so catalogue/ reading route-stats/ would close a cycle.
import { create } from "@bufbuild/protobuf";
import { ProviderEntrySchema, RouteMeasurementsSchema, type ProviderEntry } from "../../gen/router/v1/catalogue_pb.js";
import type { MeasurementsView } from "../route-stats/measurements.ts";

/** The entries with what their routes measured; the same array when no route has any (the answers built at start stay shared). */
export function withMeasurements(entries: ProviderEntry[], measurements: MeasurementsView | undefined): ProviderEntry[] {
  if (!measurements) return entries;
  const measured = entries.map((entry) => measurements.get(entry.providerId, entry.modelId));
  if (measured.every((m) => m === undefined)) return entries;
  return entries.map((entry, index) => {
    const m = measured[index];
    if (!m) return entry;
    return create(ProviderEntrySchema, {
      ...entry,
      measured: create(RouteMeasurementsSchema, {
        throughputTokensPerSecond: m.throughputTokensPerSecond,
        firstTokenLatencyMs: m.firstTokenLatencyMs,
        samples: BigInt(m.samples),
      }),
    });
  });
}
