// What the gateway may load, so a split deployment's gateway loads none of the
// core's planner: gen/, wire/ (the public JSON and limits it shares with the
// core, which itself depends on gen/ only) and three leaf files of core/. The
// composition root alone reaches further. Formats never import each other:
// what two share lives in gateway/formats/shared/.
import { describe, expect, it } from "vitest";
import { repoImports, type SourceImport } from "../../support/source-imports.ts";

/** The core files any gateway module may import: each depends on gen/ and packages only. */
const CORE_FOR_GATEWAY = ["core/errors.ts", "core/ids.ts", "core/warnings.ts"];

/** The composition root's further imports: the in-process core and the process's startup. */
const COMPOSITION_ROOT: Record<string, string[]> = {
  "gateway/main.ts": ["core/server.ts", "core/startup.ts", "core/host-port.ts"],
};

/** Imports for types alone (no code loaded): the in-process deployment hands the gateway a Core. */
const TYPE_ONLY: Record<string, string[]> = {
  "gateway/core-client.ts": ["core/create-core.ts"],
};

const describeImport = ({ file, target }: SourceImport) => `${file} -> ${target}`;

/** The gateway imports that reach beyond gateway/, gen/ and wire/ and are not allowed. */
function gatewayImportsRefused(imports: readonly SourceImport[]): string[] {
  return imports
    .filter(({ file, target, typeOnly }) => {
      if (/^(gateway|gen|wire)\//.test(target)) return false;
      if (CORE_FOR_GATEWAY.includes(target) || COMPOSITION_ROOT[file]?.includes(target)) return false;
      return !(typeOnly && TYPE_ONLY[file]?.includes(target));
    })
    .map(describeImport);
}

/** `gateway/formats/videos/routes.ts` -> `videos`; undefined outside a format folder (shared/ is none). */
function formatOf(path: string): string | undefined {
  const match = /^gateway\/formats\/([^/]+)\//.exec(path);
  return match && match[1] !== "shared" ? match[1] : undefined;
}

/** Imports from one format folder into another's, or from shared/ into a format's. */
function crossFormatImports(imports: readonly SourceImport[]): string[] {
  return imports
    .filter(({ file, target }) => {
      const to = formatOf(target);
      if (!to) return false;
      const from = formatOf(file);
      return from !== to && file.startsWith("gateway/formats/") && file !== "gateway/formats/index.ts";
    })
    .map(describeImport);
}

describe("gateway imports", () => {
  const imports = repoImports("gateway");

  it("reach core only through errors.ts, ids.ts and warnings.ts (and the composition root's list)", () => {
    expect(gatewayImportsRefused(imports)).toEqual([]);
  });

  it("never join two formats: shared pieces live in gateway/formats/shared/ (index.ts composes them)", () => {
    expect(crossFormatImports(imports)).toEqual([]);
  });

  it("would notice the old seams (the checks themselves)", () => {
    const old = (file: string, target: string, typeOnly = false): SourceImport => ({ file, target, typeOnly });
    expect(
      gatewayImportsRefused([
        old("gateway/formats/videos/routes.ts", "core/tasks/task-not-found.ts"),
        old("gateway/formats/images/routes.ts", "core/tasks/image-result.ts"),
        old("gateway/read-body.ts", "core/well-formed.ts"),
        old("gateway/app.ts", "core/create-core.ts"),
        old("gateway/main.ts", "core/server.ts"),
        old("gateway/core-client.ts", "core/create-core.ts", true),
      ]),
    ).toEqual(["gateway/formats/videos/routes.ts -> core/tasks/task-not-found.ts", "gateway/formats/images/routes.ts -> core/tasks/image-result.ts", "gateway/read-body.ts -> core/well-formed.ts", "gateway/app.ts -> core/create-core.ts"]);
    expect(
      crossFormatImports([
        old("gateway/formats/chat-completions/routes.ts", "gateway/formats/videos/chat-video.ts"),
        old("gateway/formats/shared/open-asset.ts", "gateway/formats/images/routes.ts"),
        old("gateway/formats/images/routes.ts", "gateway/formats/shared/open-asset.ts"),
        old("gateway/formats/index.ts", "gateway/formats/videos/chat-video.ts"),
      ]),
    ).toEqual(["gateway/formats/chat-completions/routes.ts -> gateway/formats/videos/chat-video.ts", "gateway/formats/shared/open-asset.ts -> gateway/formats/images/routes.ts"]);
  });
});

describe("wire/", () => {
  it("depends on gen/ only (and packages), so the gateway and the core both load it alone", () => {
    const refused = repoImports("wire").filter(({ target }) => !/^(gen|wire)\//.test(target));
    expect(refused.map(describeImport)).toEqual([]);
  });
});
