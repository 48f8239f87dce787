// Preloaded (`node --import`) into every child of the benchmark: the upstream,
// the floor proxy and the real gateway. It answers the parent's IPC question
// "how much CPU have you used?" with process.cpuUsage() (all threads: main,
// libuv pool, GC helpers) and exits when the parent goes away, so a crashed
// benchmark never leaves servers behind. The gateway's own code is unchanged.
interface CpuQuestion {
  type: "bench:cpu";
  id: number;
}

if (process.send) {
  process.on("message", (message: unknown) => {
    const question = message as CpuQuestion | null;
    if (question?.type !== "bench:cpu") return;
    const { user, system } = process.cpuUsage();
    process.send!({ type: "bench:cpu", id: question.id, user, system, rss: process.memoryUsage.rss() });
  });
  // The parent died or closed the channel: stop serving (a normal exit, so
  // --cpu-prof still writes its profile).
  process.on("disconnect", () => process.exit(0));
}
