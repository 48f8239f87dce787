// gen/ is output only: `buf lint` passes and `buf generate` (the committed
// buf.gen.yaml, written to a temporary directory) reproduces gen/ byte for byte.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const bin = join(root, "node_modules", ".bin");
const buf = join(bin, "buf");
const run = promisify(execFile);

// buf runs the local protoc-gen-es plugin from PATH, and the plugin runs on `node`:
// put this project's plugin and this Node first.
const env = { ...process.env, PATH: [bin, dirname(process.execPath), process.env.PATH].join(delimiter) };

function bufRun(...args: string[]) {
  return run(buf, args, { cwd: root, env, timeout: 60_000 });
}

/** Paths of every file under a directory, relative to it, sorted. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

let out: string;

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), "buf-generate-"));
});

afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("protobuf contracts", () => {
  it("pass buf lint", async () => {
    // execFile rejects on a non-zero exit, with buf's findings on stdout.
    const { stdout, stderr } = await bufRun("lint");
    expect(stdout + stderr).toBe("");
  });

  it("generate exactly the committed gen/ (never hand-edited)", async () => {
    await bufRun("generate", "--output", out);
    const generatedDir = join(out, "gen");
    const committedDir = join(root, "gen");
    const generated = filesUnder(generatedDir);
    expect(generated.length).toBeGreaterThan(0);
    expect(generated).toContain(join("router", "v1", "inference_pb.js"));
    // Same set of files: nothing missing from gen/, nothing extra left in it.
    expect(filesUnder(committedDir)).toEqual(generated);
    for (const file of generated) {
      const fresh = readFileSync(join(generatedDir, file));
      const committed = readFileSync(join(committedDir, file));
      expect(committed.equals(fresh), `gen/${file} differs from buf generate output; run npm run generate`).toBe(true);
    }
  });
});
