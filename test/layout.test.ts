// test/ mirrors the source tree (docs/architecture.md, "Tests"), so a reader
// finds a file's tests where the file is and a new test has one place to go:
// - every folder under test/core/ and test/gateway/ names a folder of core/ or
//   gateway/ (test/gateway/formats/<format>/ a format's folder), except
//   test/gateway/e2e/, which holds the end-to-end tests that cross formats;
// - a test file directly in test/gateway/ or test/core/ tests the module of its
//   name (test/gateway/sse.test.ts tests gateway/sse.ts); the few that check
//   core/ as a whole are listed here;
// - a recorded upstream body sits in test/fixtures/upstreams/<protocol>/, named
//   after what it shows (read by test/support/upstream-recording.ts).
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const REPO = join(import.meta.dirname, "..");

/** Test files directly in test/core/ that check the whole of core/, not one module. */
const WHOLE_CORE_CHECKS = ["format-policy.test.ts"];

/** Where the end-to-end tests across formats live: no mirror of a source folder. */
const E2E = "test/gateway/e2e";

/** Every folder under `dir` (relative to the repository), deepest last. */
function foldersUnder(dir: string): string[] {
  return readdirSync(join(REPO, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const folder = `${dir}/${entry.name}`;
      return [folder, ...foldersUnder(folder)];
    });
}

/** The test files directly in `dir`. */
function testFilesIn(dir: string): string[] {
  return readdirSync(join(REPO, dir)).filter((name) => name.endsWith(".test.ts") && statSync(join(REPO, dir, name)).isFile());
}

/** Test folders that mirror no source folder (`test/core/x` needs `core/x`). */
function unmirroredFolders(folders: readonly string[], isSourceFolder: (path: string) => boolean): string[] {
  return folders.filter((folder) => folder !== E2E && !folder.startsWith(`${E2E}/`) && !isSourceFolder(relative("test", folder)));
}

/** Test files directly in `dir` that name no module beside them in the source (`test/gateway/sse.test.ts` needs `gateway/sse.ts`). */
function unmirroredFiles(dir: string, files: readonly string[], isSourceFile: (path: string) => boolean, allowed: readonly string[] = []): string[] {
  const source = relative("test", dir);
  return files.filter((file) => !allowed.includes(file) && !isSourceFile(`${source}/${file.replace(/\.test\.ts$/, ".ts")}`)).map((file) => `${dir}/${file}`);
}

const isSourceFolder = (path: string) => existsSync(join(REPO, path)) && statSync(join(REPO, path)).isDirectory();
const isSourceFile = (path: string) => existsSync(join(REPO, path)) && statSync(join(REPO, path)).isFile();

describe("test/ mirrors the source tree", () => {
  it.each(["test/core", "test/gateway"])("every folder under %s names a source folder (or is test/gateway/e2e/)", (root) => {
    expect(unmirroredFolders(foldersUnder(root), isSourceFolder)).toEqual([]);
  });

  it("test/gateway/e2e/ is flat", () => {
    expect(foldersUnder(E2E)).toEqual([]);
  });

  it("a test file directly in test/gateway/ tests the gateway module of its name", () => {
    expect(unmirroredFiles("test/gateway", testFilesIn("test/gateway"), isSourceFile)).toEqual([]);
  });

  it("a test file directly in test/core/ tests the core module of its name, or is a check of the whole core", () => {
    expect(unmirroredFiles("test/core", testFilesIn("test/core"), isSourceFile, WHOLE_CORE_CHECKS)).toEqual([]);
  });

  it("test/fixtures/upstreams/ holds one folder per protocol (a folder of core/providers/), of .sse and .json recordings", () => {
    const folders = foldersUnder("test/fixtures/upstreams");
    expect(folders.filter((folder) => !isSourceFolder(`core/providers/${folder.split("/").at(-1)}`) || folder.split("/").length !== 4)).toEqual([]);
    const recordings = folders.flatMap((folder) => readdirSync(join(REPO, folder)).map((file) => `${folder}/${file}`));
    expect(recordings.filter((file) => !/\.(sse|json)$/.test(file))).toEqual([]);
  });

  it("would notice a misplaced test (the check itself)", () => {
    expect(unmirroredFolders(["test/gateway/e2e", "test/gateway/formats/chat-completions", "test/gateway/fromats"], isSourceFolder)).toEqual([
      "test/gateway/fromats",
    ]);
    expect(unmirroredFiles("test/gateway", ["sse.test.ts", "translation-matrix.test.ts"], isSourceFile)).toEqual(["test/gateway/translation-matrix.test.ts"]);
    expect(unmirroredFiles("test/core", ["format-policy.test.ts", "server.test.ts"], isSourceFile, WHOLE_CORE_CHECKS)).toEqual([]);
  });
});
