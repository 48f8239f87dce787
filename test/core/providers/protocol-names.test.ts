// A protocol is named in two places only: its registry line
// (core/providers/registry.ts) and its own folder (core/providers/<name>/).
// Anywhere else, a protocol's name as a value ("kling", a `=== "simulator"`
// branch) or a table keyed by protocol would be one more file that a new
// protocol has to touch. Maps built from the registry (Partial<Record<
// ProviderProtocol, ...>>) are not tables: nothing lists the protocols there.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROTOCOL_NAMES } from "../../../core/providers/registry.ts";

const ROOT = join(import.meta.dirname, "../../..");

/** The product's source and its scripts; tests and benchmarks configure protocols by name, as operators do. */
const SCANNED = ["core", "gateway", "wire", "scripts"];

/** Files that must name protocols, and why. Keep it short. */
const ALLOWED: Record<string, string> = {
  "core/providers/registry.ts": "the registry: one line per protocol",
  "scripts/build-default-config.ts": "the bundled configuration's providers name their protocols, as any configuration does",
  "gateway/formats/interactions/decode-request.ts": "provider options are keyed by protocol: Google's own settings go to Google's two protocols",
};

interface SourceFile {
  path: string;
  text: string;
}

function sourceFiles(): SourceFile[] {
  return SCANNED.flatMap((folder) =>
    readdirSync(join(ROOT, folder), { recursive: true, encoding: "utf8" })
      .filter((name) => name.endsWith(".ts"))
      .map((name) => join(folder, name))
      .map((path) => ({ path, text: readFileSync(join(ROOT, path), "utf8") })),
  );
}

/** The protocol whose own folder holds the file, if any. */
function ownProtocol(path: string, protocols: readonly string[]): string | undefined {
  const match = /^core\/providers\/([^/]+)\//.exec(path);
  return match && protocols.includes(match[1]) ? match[1] : undefined;
}

/** Each way a file names protocols it should not, as `path: what`. */
function offenders(files: SourceFile[], protocols: readonly string[]): string[] {
  const found: string[] = [];
  for (const { path, text } of files) {
    if (ALLOWED[path]) continue;
    const own = ownProtocol(path, protocols);
    const others = protocols.filter((protocol) => protocol !== own);
    const names = others.map((name) => name.replace(/[-]/g, "\\-")).join("|");
    // A name as a string value: `"kling"`, `'simulator'`, a template's `gemini`, an object key `"openai-compatible":`.
    for (const match of text.matchAll(new RegExp(`["'\`](${names})["'\`]`, "g"))) found.push(`${path}: names ${match[1]}`);
    // A bare object key: `anthropic: ...` at the start of a line, the shape of a table.
    for (const match of text.matchAll(new RegExp(`^\\s*(${names})\\??\\s*:`, "gm"))) found.push(`${path}: keys a table by ${match[1]}`);
    // A table every protocol must fill: Record<ProviderProtocol, ...> (not Partial) or a mapped type over all of them.
    if (/(?<!Partial<)Record<\s*ProviderProtocol\b/.test(text) || /\[\s*\w+\s+in\s+ProviderProtocol\s*\]\s*:/.test(text)) {
      found.push(`${path}: a table keyed by every protocol`);
    }
  }
  return found;
}

describe("protocol names", () => {
  it("appear only in the registry and each protocol's own folder", () => {
    expect(offenders(sourceFiles(), PROTOCOL_NAMES)).toEqual([]);
  });

  it("would be noticed elsewhere (the check itself)", () => {
    const protocols = ["openai-compatible", "kling", "simulator"];
    const files: SourceFile[] = [
      { path: "core/config/schema.ts", text: 'if (provider.protocol === "kling") {}' },
      { path: "core/providers/token-estimates.ts", text: "const PROFILES: Record<ProviderProtocol, number> = {\n  \"openai-compatible\": 1,\n  simulator: 2,\n};" },
      { path: "core/tasks/keyed.ts", text: "type T = { [P in ProviderProtocol]: number };" },
      { path: "core/providers/kling/media.ts", text: 'const signer = "simulator";' },
      // Not offences: a protocol naming itself, a map built from the registry, the allow-listed registry.
      { path: "core/providers/kling/adapter.ts", text: 'const own = "kling";' },
      { path: "core/tasks/run-job.ts", text: "adapters: Partial<Record<ProviderProtocol, MediaJobAdapter>>;" },
      { path: "core/providers/registry.ts", text: '"openai-compatible": {}, kling: {}' },
    ];
    expect(offenders(files, protocols)).toEqual([
      "core/config/schema.ts: names kling",
      "core/providers/token-estimates.ts: names openai-compatible",
      "core/providers/token-estimates.ts: keys a table by simulator",
      "core/providers/token-estimates.ts: a table keyed by every protocol",
      "core/tasks/keyed.ts: a table keyed by every protocol",
      "core/providers/kling/media.ts: names simulator",
    ]);
  });
});
