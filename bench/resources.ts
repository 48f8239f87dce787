// What a benchmark run owns (its children, its load clients, a temp dir) and
// taking it down: at the end, on failure and on Ctrl-C. Children exit by
// themselves when the benchmark goes (the CPU probe watches IPC); the temp dir
// is removed on any exit.
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Child } from "./children.ts";
import type { Client } from "./load.ts";
import { log } from "./report.ts";

export class RunResources {
  readonly clients: Client[] = [];
  /** Stopped together, first. */
  readonly children: Child[] = [];
  /** Stopped after the others: servers they use (redis-server). */
  readonly lastChildren: Child[] = [];
  tempDir: string | undefined;
  private readonly closers: (() => void)[] = [];

  /** Installs the exit (temp dir) and SIGINT (cleanup, exit 130) handlers. */
  constructor() {
    process.once("exit", () => {
      if (this.tempDir) rmSync(this.tempDir, { recursive: true, force: true });
    });
    process.once("SIGINT", () => {
      log("interrupted: stopping the children");
      void this.cleanup().finally(() => process.exit(130));
    });
  }

  async makeTempDir(prefix: string): Promise<string> {
    this.tempDir = await mkdtemp(path.join(os.tmpdir(), prefix));
    return this.tempDir;
  }

  /** Something to close first, synchronously (a connection of the benchmark's own). */
  onCleanup(close: () => void): void {
    this.closers.push(close);
  }

  /** Closes what was registered, the clients (`graceful`: let pending requests finish), the children, then the temp dir. */
  async cleanup(options: { graceful?: boolean } = {}): Promise<void> {
    for (const close of this.closers) close();
    await Promise.allSettled(this.clients.map((client) => (options.graceful ? client.pool.close() : client.pool.destroy())));
    await Promise.allSettled(this.children.map((child) => child.stop()));
    await Promise.allSettled(this.lastChildren.map((child) => child.stop()));
    if (this.tempDir) await rm(this.tempDir, { recursive: true, force: true });
  }
}
