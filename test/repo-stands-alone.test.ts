// A user's clone has nothing beside it: no tracked file may read or link to a
// folder outside the repo (the project's private notes live in a sibling
// `shared` folder on the developers' machines). What tests and scripts need is
// vendored under vendor/ with its licence.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
// Built from parts so that this file does not name the path it looks for.
const SIBLING = ["..", "shared"].join("/");
const NAMES_OUTSIDE = new RegExp(`${SIBLING.replace(/\./g, "\\.")}\\b|/work/${"shared"}\\b`);
const CLIMBS_TO_SHARED = new RegExp(`(?:\\.\\./)*${SIBLING.replace(/\./g, "\\.")}\\b(?:/[\\w.-]+)*`, "g");

/**
 * Whether a line of `file` names the sibling folder: a path climbing to it that,
 * read from the file's folder, leaves the repo or names nothing in it. The repo's
 * own gateway/formats/shared/, imported from a format's folder, is not it.
 */
function namesOutside(file: string, line: string): boolean {
  if (!NAMES_OUTSIDE.test(line)) return false;
  if (new RegExp(`/work/${"shared"}\\b`).test(line)) return true;
  return [...line.matchAll(CLIMBS_TO_SHARED)].some(([path]) => {
    const target = resolve(ROOT, dirname(file), path);
    return relative(ROOT, target).startsWith("..") || !existsSync(target);
  });
}

function trackedFiles(): string[] {
  return execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
    .split("\0")
    .filter(Boolean);
}

describe("the repo stands alone", () => {
  it("no tracked file names the sibling shared folder", () => {
    const offenders: string[] = [];
    for (const file of trackedFiles()) {
      let text: string;
      try {
        text = readFileSync(`${ROOT}${file}`, "utf8");
      } catch {
        continue; // listed but absent (deleted in the work tree): nothing to read
      }
      const lines = text.split("\n");
      lines.forEach((line, i) => {
        if (namesOutside(file, line)) offenders.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
    }
    expect(offenders, "vendor what is needed under vendor/ (with its licence) instead").toEqual([]);
  });

  it("the check recognises the path it forbids", () => {
    expect(NAMES_OUTSIDE.test(`read ${SIBLING}/data/x.json`)).toBe(true);
    expect(NAMES_OUTSIDE.test(`new URL("../${SIBLING}/specs/a.yaml")`)).toBe(true);
    expect(NAMES_OUTSIDE.test("gateway/formats/shared/x.ts")).toBe(false);
    expect(namesOutside("README.md", `see ${SIBLING}/spec/gateway-api.md`)).toBe(true);
    expect(namesOutside("docs/tasks.md", `see ../${SIBLING}/spec/gateway-api.md`)).toBe(true);
    expect(namesOutside("gateway/formats/videos/routes.ts", `import { x } from "${SIBLING}/nothing-here.ts";`)).toBe(true);
    expect(namesOutside("gateway/formats/videos/routes.ts", `import { x } from "/work/${"shared"}/x.ts";`)).toBe(true);
    // The repo's own gateway/formats/shared/, from a format's folder.
    expect(namesOutside("gateway/formats/videos/routes.ts", `import { openAsset } from "${SIBLING}/open-asset.ts";`)).toBe(false);
  });
});
