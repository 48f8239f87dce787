// Preloaded (`node --import`) into every child of the benchmark: the upstream,
// the floor proxy and the real gateway. It answers the parent's IPC question
// "how much CPU have you used?" with process.cpuUsage() (all threads: main,
// libuv pool, GC helpers), and with what explains a latency tail: the GC pauses
// and the longest event-loop stall since the last question, and the most heap
// in use meanwhile. On request it writes a heap snapshot. It exits when the
// parent goes away, so a crashed benchmark never leaves servers behind. The
// gateway's own code is unchanged.
import { constants, monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import v8 from "node:v8";

type Question = { type: "bench:cpu"; id: number } | { type: "bench:heapsnapshot"; id: number; path: string };

/** Pauses over 2 ms since the last question, with their wall-clock start (ms since the epoch) and Node's kind (1 minor, 4 major, 8 incremental, 16 weak callbacks): the streams suite's --timeline. */
const longPauses: { at: number; ms: number; kind: number }[] = [];
/** GC pauses since the last question: young generation (scavenges) and the rest (mark-compact, incremental steps, weak callbacks). */
const gc = { youngCount: 0, youngMs: 0, youngMaxMs: 0, fullCount: 0, fullMs: 0, fullMaxMs: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as { detail?: { kind?: number } }).detail?.kind ?? 0;
    if (entry.duration > 2) longPauses.push({ at: performance.timeOrigin + entry.startTime, ms: entry.duration, kind });
    const young = kind === constants.NODE_PERFORMANCE_GC_MINOR;
    if (young) {
      gc.youngCount++;
      gc.youngMs += entry.duration;
      gc.youngMaxMs = Math.max(gc.youngMaxMs, entry.duration);
    } else {
      gc.fullCount++;
      gc.fullMs += entry.duration;
      gc.fullMaxMs = Math.max(gc.fullMaxMs, entry.duration);
    }
  }
}).observe({ entryTypes: ["gc"] });

// Event-loop stalls, GC and long synchronous runs alike (a stall longer than the
// 10-ms sampling interval is measured whole; a finer one would wake the loop 1 000 times a second).
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

// The most heap in use, sampled every 50 ms (the peak of a phase, not the end).
let heapPeak = 0;
setInterval(() => (heapPeak = Math.max(heapPeak, v8.getHeapStatistics().used_heap_size)), 50).unref();

function takeStats() {
  const stats = {
    gc: { ...gc },
    loopDelayMaxMs: loopDelay.max / 1e6,
    loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
    heapPeakBytes: heapPeak,
    longPauses: longPauses.splice(0),
  };
  Object.assign(gc, { youngCount: 0, youngMs: 0, youngMaxMs: 0, fullCount: 0, fullMs: 0, fullMaxMs: 0 });
  loopDelay.reset();
  heapPeak = 0;
  return stats;
}

/**
 * With BENCH_ALLOC_PROFILE=<file> (the streams suite's --alloc-profile): V8's sampling heap
 * profiler over the child's whole life, objects later collected included, so the profile is
 * where the allocations were made rather than what is still alive (bench/alloc-summary.ts reads it).
 */
const allocationProfile = process.env.BENCH_ALLOC_PROFILE ? await startAllocationProfile(process.env.BENCH_ALLOC_PROFILE) : undefined;

async function startAllocationProfile(file: string) {
  const { Session } = await import("node:inspector/promises");
  const { writeFile } = await import("node:fs/promises");
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 16_384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return {
    async write() {
      const { profile } = await session.post("HeapProfiler.stopSampling");
      await writeFile(file, JSON.stringify(profile));
    },
  };
}

if (process.send) {
  process.on("message", (message: unknown) => {
    const question = message as Question | null;
    if (question?.type === "bench:heapsnapshot") {
      v8.writeHeapSnapshot(question.path);
      process.send!({ type: "bench:heapsnapshot", id: question.id });
      return;
    }
    if (question?.type !== "bench:cpu") return;
    const { user, system } = process.cpuUsage();
    process.send!({ type: "bench:cpu", id: question.id, user, system, rss: process.memoryUsage.rss(), stats: takeStats() });
  });
  // The parent died or closed the channel: stop serving (a normal exit, so
  // --cpu-prof still writes its profile, and an allocation profile is written first).
  process.on("disconnect", async () => {
    await allocationProfile?.write();
    process.exit(0);
  });
}
