// The core's folders depend on each other one way: no folder imports, directly
// or through others, a folder that imports it back. In particular accounts and
// metering know money, keys and limits, never requests or providers, so a new
// caller (the task service) can meter its work without pulling routing in.
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { importsOf, REPO, sourceFiles } from "../../support/source-imports.ts";

const CORE = join(REPO, "core");

/** `core/accounts/store.ts` -> `accounts`; a file at the top of core/ is its own unit (`errors.ts`). */
const unitOf = (path: string) => path.split("/")[0];

/** unit -> units it imports, each with one file that does it (for the message). */
function unitGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of sourceFiles(CORE)) {
    const from = unitOf(file);
    const edges = graph.get(from) ?? new Map<string, string>();
    graph.set(from, edges);
    for (const specifier of importsOf(readFileSync(join(CORE, file), "utf8"))) {
      const target = relative(CORE, resolve(CORE, dirname(file), specifier));
      if (target.startsWith("..")) continue; // gen/ and the like: outside core
      const to = unitOf(target);
      if (to !== from && !edges.has(to)) edges.set(to, file);
    }
  }
  return graph;
}

/** One cycle of the graph as `a -> b -> a`, or undefined. */
function findCycle(graph: Map<string, Map<string, string>>): string[] | undefined {
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (unit: string): string[] | undefined => {
    if (state.get(unit) === "done") return undefined;
    if (state.get(unit) === "open") return [...path.slice(path.indexOf(unit)), unit];
    state.set(unit, "open");
    path.push(unit);
    for (const next of graph.get(unit)?.keys() ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(unit, "done");
    return undefined;
  };
  for (const unit of graph.keys()) {
    const cycle = visit(unit);
    if (cycle) return cycle;
  }
  return undefined;
}

describe("import direction in core/", () => {
  const graph = unitGraph();

  it.each(["accounts", "metering"])("%s imports nothing from routing, providers or services", (unit) => {
    const edges = graph.get(unit) ?? new Map<string, string>();
    const forbidden = ["routing", "providers", "services"].filter((other) => edges.has(other)).map((other) => `${edges.get(other)} -> ${other}`);
    expect(forbidden).toEqual([]);
  });

  it("has no cycle between its folders", () => {
    const cycle = findCycle(graph);
    const files = cycle?.slice(1).map((to, i) => `${graph.get(cycle[i])!.get(to)} -> ${to}`);
    expect(files).toBeUndefined();
  });

  it("would notice one (the check itself)", () => {
    const graph = new Map([
      ["accounts", new Map([["routing", "accounts/admit.ts"]])],
      ["routing", new Map([["accounts", "routing/run-inference.ts"]])],
    ]);
    expect(findCycle(graph)).toEqual(["accounts", "routing", "accounts"]);
  });
});
