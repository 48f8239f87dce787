// The whole machine's CPU time (Linux /proc/stat), so that a suite can tell how
// much of the machine other processes used while it measured: on a shared VM
// that is most of the noise.
import { readFileSync } from "node:fs";

/** Busy and total CPU time of the whole machine so far, in µs (Linux /proc/stat; undefined elsewhere). */
export function machineCpu(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = fields;
    const tick = 1e6 / 100; // USER_HZ
    const busy = (user + nice + system + irq + softirq + (steal ?? 0)) * tick;
    return { busy, total: busy + (idle + iowait) * tick };
  } catch {
    return undefined;
  }
}
