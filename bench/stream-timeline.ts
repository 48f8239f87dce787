// The streams suite's --timeline: where in a phase the slow first tokens were,
// and the hop's GC pauses over 2 ms meanwhile, as one line per phase. It showed
// that a gateway's tail came from one long pause late in the ramp (when most
// streams are open and the event loop is busiest), which the p99 alone hides.
import type { ProbeStats } from "./children.ts";
import type { StreamResult } from "./stream-load.ts";

/** A first token slower than this counts as slow on the timeline. */
const SLOW_MS = 5;
/** Node's PerformanceObserver `gc` kinds, by the name the timeline gives them. */
const KIND_NAME: Record<number, string> = { 1: "minor", 4: "major", 8: "incremental", 16: "weak" };

/** `name`: slow first tokens per tenth of the ramp; pauses over 2 ms from the ramp's start to `windowMs` after it. */
export function timelineLine(name: string, result: StreamResult, stats: ProbeStats | undefined, windowMs: number): string {
  const places = result.firstTokenByPlace;
  const tenth = Math.ceil(places.length / 10);
  const slow = Array.from({ length: 10 }, (_, i) => places.slice(i * tenth, (i + 1) * tenth).filter((ms) => ms > SLOW_MS).length);
  const pauses = (stats?.longPauses ?? [])
    .map((pause) => ({ ...pause, offset: pause.at - result.startedAt }))
    .filter(({ offset }) => offset >= 0 && offset < windowMs)
    .map(({ offset, ms, kind }) => `${offset.toFixed(0)} ms: ${ms.toFixed(1)} ${KIND_NAME[kind] ?? kind}`);
  return `  ${name}: first tokens over ${SLOW_MS} ms per tenth of the ramp ${slow.join(" ")}; GC pauses over 2 ms in the first ${windowMs} ms: ${pauses.join(", ") || "none"}`;
}
