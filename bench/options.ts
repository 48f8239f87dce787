// The command line both suites share: the Node 24 check, the options of the
// interleaved rounds (--rounds --requests --concurrency --rps-seconds --rps-max
// --warmup --log-level --quick) and the settings they give. Each suite spreads
// ROUND_OPTIONS into its own parseArgs options and adds its own.
import type { ParseArgsOptionsConfig } from "node:util";

/** Exits with a hint when this is not Node 24 (a bare `node` here is 20). */
export function requireNode24(npmCommand: string, file: string): void {
  const major = Number(process.versions.node.split(".")[0]);
  if (major < 24) {
    process.stderr.write(`This benchmark needs Node 24 (found ${process.version}): run \`${npmCommand}\` or \`npx node ${file}\`.\n`);
    process.exit(1);
  }
}

export const ROUND_OPTIONS = {
  rounds: { type: "string" },
  requests: { type: "string" },
  concurrency: { type: "string" },
  "rps-seconds": { type: "string" },
  "rps-max": { type: "string" },
  warmup: { type: "string" },
  "log-level": { type: "string", default: "silent" },
  quick: { type: "boolean", default: false },
} as const satisfies ParseArgsOptionsConfig;

export interface RoundFlags {
  rounds?: string;
  requests?: string;
  concurrency?: string;
  "rps-seconds"?: string;
  "rps-max"?: string;
  warmup?: string;
  "log-level": string;
  quick: boolean;
}

/** The settings of the rounds; `defaults` are the suite's rounds and requests (it picks them for --quick). */
export function roundSettings(flags: RoundFlags, defaults: { rounds: number; requests: number }) {
  const quick = flags.quick;
  return {
    rounds: int(flags.rounds, defaults.rounds),
    requests: int(flags.requests, defaults.requests),
    concurrency: int(flags.concurrency, 50),
    rpsSeconds: Number(flags["rps-seconds"] ?? (quick ? 1 : 2)),
    rpsMax: int(flags["rps-max"], 50_000),
    warmupSeconds: Number(flags.warmup ?? (quick ? 1.5 : 3)),
    /** Pause before each measured phase, so the previous one's leftovers (GC, socket churn) do not land in it. */
    settleMs: 100,
    logLevel: flags["log-level"],
  };
}

/** A positive integer option, or `fallback` when it is not given. */
export function int(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`expected a positive integer, got ${value}`);
  return n;
}
