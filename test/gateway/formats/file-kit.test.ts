// Every format folder uses the same file names for the same jobs
// (docs/architecture.md, "Gateway formats"): routes, decode-request,
// encode-response, encode-stream, encode-error, schema (those the format
// needs), so a reader finds any format's encoder where they found another's.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const FORMATS = join(import.meta.dirname, "../../../gateway/formats");
const FORMAT_TESTS = import.meta.dirname;

/** Folders of gateway/formats/ that are formats (shared/ holds what several use). */
const formatFolders = readdirSync(FORMATS, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== "shared")
  .map((entry) => entry.name);

/** Names the kit has replaced: each job has one name. */
const RETIRED: Record<string, string> = {
  "encode.ts": "encode-response.ts",
  "encode-sync.ts": "encode-response.ts",
  "encode-message.ts": "encode-response.ts",
  "encode-task.ts": "encode-response.ts",
};

/**
 * A format's file names that break the kit: a retired name; a decoder other
 * than decode-request.ts; an encoder of a part (`encode-usage.ts`) in a folder
 * with no encode-response.ts or encode-stream.ts it could be part of.
 */
function offKit(files: readonly string[]): string[] {
  const hasWholeEncoder = files.includes("encode-response.ts") || files.includes("encode-stream.ts");
  return files.flatMap((file) => {
    if (file in RETIRED) return [`${file}: call it ${RETIRED[file]}`];
    if (file.startsWith("decode") && file !== "decode-request.ts") return [`${file}: the decoder is decode-request.ts`];
    if (file.startsWith("encode") && !hasWholeEncoder) return [`${file}: the answer's encoder is encode-response.ts (or encode-stream.ts)`];
    return [];
  });
}

describe("each format's folder", () => {
  it.each(formatFolders)("%s has routes.ts, whose GatewayFormat index.ts lists", (format) => {
    expect(existsSync(join(FORMATS, format, "routes.ts"))).toBe(true);
    expect(readFileSync(join(FORMATS, "index.ts"), "utf8")).toContain(`from "./${format}/routes.ts"`);
  });

  it.each(formatFolders)("%s uses the kit's names", (format) => {
    expect(offKit(readdirSync(join(FORMATS, format)))).toEqual([]);
  });

  it("would notice the old names (the check itself)", () => {
    expect(offKit(["routes.ts", "encode.ts"])).toEqual(["encode.ts: call it encode-response.ts"]);
    expect(offKit(["routes.ts", "decode-body.ts", "encode-parts.ts"])).toEqual([
      "decode-body.ts: the decoder is decode-request.ts",
      "encode-parts.ts: the answer's encoder is encode-response.ts (or encode-stream.ts)",
    ]);
    expect(offKit(["routes.ts", "encode-response.ts", "encode-usage.ts"])).toEqual([]);
  });
});

describe("test/gateway/formats/", () => {
  it("has a folder per format only, for the unit tests of that format's files", () => {
    const folders = readdirSync(FORMAT_TESTS, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(folders.filter((folder) => !formatFolders.includes(folder) && folder !== "shared")).toEqual([]);
  });
});
