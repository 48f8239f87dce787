// The relative imports of the repository's own source files, for the tests
// that keep its folders' import direction (core's folders, the gateway, wire/).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export const REPO = resolve(import.meta.dirname, "../..");

/** Every `.ts` file under `dir`, as paths relative to it. */
export function sourceFiles(dir: string, under = dir): string[] {
  return readdirSync(under, { withFileTypes: true }).flatMap((entry) => {
    const path = join(under, entry.name);
    if (entry.isDirectory()) return sourceFiles(dir, path);
    return entry.name.endsWith(".ts") ? [relative(dir, path)] : [];
  });
}

/** Relative specifiers of static imports, re-exports and dynamic imports. */
export function importsOf(source: string): string[] {
  const pattern = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.[^"']+)["']/g;
  return [...source.matchAll(pattern)].map((match) => match[1]);
}

/** Relative specifiers imported for their types alone (`import type { X } from "..."`): no code is loaded. */
export function typeOnlyImportsOf(source: string): string[] {
  const pattern = /\bimport\s+type\s[^;]*?\bfrom\s*["'](\.[^"']+)["']/g;
  return [...source.matchAll(pattern)].map((match) => match[1]);
}

export interface SourceImport {
  /** The importing file, relative to the repository (`gateway/app.ts`). */
  file: string;
  /** The imported file, relative to the repository (`core/errors.ts`). */
  target: string;
  typeOnly: boolean;
}

/** Every relative import of the `.ts` files under `folder` (relative to the repository). */
export function repoImports(folder: string): SourceImport[] {
  const root = join(REPO, folder);
  return sourceFiles(root).flatMap((path) => {
    const file = join(folder, path);
    const source = readFileSync(join(REPO, file), "utf8");
    const typeOnly = new Set(typeOnlyImportsOf(source));
    return importsOf(source).map((specifier) => ({
      file,
      target: relative(REPO, resolve(REPO, dirname(file), specifier)),
      typeOnly: typeOnly.has(specifier),
    }));
  });
}
