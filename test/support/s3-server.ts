// A private S3-compatible server for tests: s3rver in a child process
// (s3rver-main.ts says why), on an ephemeral port, with a fresh directory and
// one bucket. It knows one account, S3RVER: another access key id is refused.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** s3rver's built-in account: the only access key id it takes. */
export const S3_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

const ENTRY = fileURLToPath(new URL("./s3rver-main.ts", import.meta.url));
/** A guard against a server that neither listens nor exits; never reached by a healthy start. */
const STARTUP_GUARD_MS = 15_000;

export interface S3Server {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  bucket: string;
  close(): Promise<void>;
}

export async function startS3Server(bucket = "router-assets"): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), "s3rver-test-"));
  const child = spawn(process.execPath, ["--openssl-legacy-provider", ENTRY, directory, bucket], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = once(child, "exit");
  const lines = createInterface({ input: child.stdout });
  const listening = new Promise<number>((resolve, reject) => {
    lines.once("line", (line) => resolve((JSON.parse(line) as { port: number }).port));
    exited.then(([code]) => reject(new Error(`s3rver exited (${code}) before listening: ${stderr}`)), reject);
  });
  const guard = setTimeout(() => child.kill(), STARTUP_GUARD_MS);
  let port: number;
  try {
    port = await listening;
  } finally {
    clearTimeout(guard);
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    async close() {
      child.stdin.end();
      await exited;
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
