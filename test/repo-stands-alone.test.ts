// A user's clone has nothing beside it: no tracked file may read or link to a
// folder outside the repo (the project's private notes live in a sibling
// `shared` folder on the developers' machines). What tests and scripts need is
// vendored under vendor/ with its licence.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
// Built from parts so that this file does not name the path it looks for.
const SIBLING = ["..", "shared"].join("/");
const NAMES_OUTSIDE = new RegExp(`${SIBLING.replace(/\./g, "\\.")}\\b|/work/${"shared"}\\b`);

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
        if (NAMES_OUTSIDE.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
    }
    expect(offenders, "vendor what is needed under vendor/ (with its licence) instead").toEqual([]);
  });

  it("the check recognises the path it forbids", () => {
    expect(NAMES_OUTSIDE.test(`read ${SIBLING}/data/x.json`)).toBe(true);
    expect(NAMES_OUTSIDE.test(`new URL("../${SIBLING}/specs/a.yaml")`)).toBe(true);
    expect(NAMES_OUTSIDE.test("gateway/formats/shared/x.ts")).toBe(false);
  });
});
