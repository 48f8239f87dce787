// The output both suites share: progress lines on stderr, number formats, the
// line that says on what a run ran, the targets table, and writing the
// markdown report to stdout and bench/results/.
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
/** The checkout this benchmark belongs to: the gateway it runs by default, the commit it reports. */
export const ROOT = path.dirname(BENCH_DIR);
export const RESULTS_DIR = path.join(BENCH_DIR, "results");

/** A progress line, on stderr (stdout carries the report). */
export const log = (line: string) => process.stderr.write(line + "\n");

export function fmt(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "n/a";
}

export function signed(value: number, digits: number): string {
  return Number.isFinite(value) ? (value >= 0 ? "+" : "") + value.toFixed(digits) : "n/a";
}

/** `min–max` of the values (or with another separator, such as " to "). */
export function range(values: number[], digits: number, separator = "–"): string {
  return `${fmt(Math.min(...values), digits)}${separator}${fmt(Math.max(...values), digits)}`;
}

export const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL");

export function gitDescription(): string {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "core", "gateway", "gen"], { cwd: ROOT, encoding: "utf8" }).trim();
    return dirty ? `${commit} (core/gateway have uncommitted changes)` : commit;
  } catch {
    return "unknown";
  }
}

/** Date · commit · Node · `extra` (versions of other servers) · CPUs · OS · load average. */
export function environmentLine(extra: string[] = []): string {
  const cpus = os.cpus();
  return [
    new Date().toISOString(),
    `commit ${gitDescription()}`,
    `Node ${process.version}`,
    ...extra,
    `${cpus.length} × ${cpus[0]?.model ?? "?"}`,
    `${os.type()} ${os.release()}`,
    `load average before the report ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`,
  ].join(" · ");
}

/** The "## Targets" section: one table row per check. */
export function targetsSection(checks: string[]): string[] {
  return ["## Targets", "", "| target | measured | result |", "| --- | --- | --- |", ...checks, ""];
}

/** The report to stdout and to `bench/results/<name>`. */
export async function writeReport(name: string, report: string, totalSeconds: number): Promise<void> {
  const file = path.join(RESULTS_DIR, name);
  process.stdout.write(report);
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(file, report);
  log(`written to ${path.relative(ROOT, file)} (${fmt(totalSeconds, 0)} s)`);
}
