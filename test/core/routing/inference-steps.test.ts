// run-inference.ts is split by job (issue 19): prepare, fallback, relay and
// settle are modules of their own, and run-inference only strings them
// together. These checks keep the steps apart: no step runs another's code,
// and the orchestrator does none of their work itself.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROUTING = resolve(import.meta.dirname, "../../../core/routing");
const source = (file: string) => readFileSync(resolve(ROUTING, file), "utf8");

/** Specifiers a module imports or re-exports at run time (type-only imports left out). */
function runtimeImports(text: string): string[] {
  const pattern = /^(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s*["']([^"']+)["']/gms;
  return [...text.matchAll(pattern)].map((match) => match[1]);
}

/** The steps in the order an inference takes them. */
const STEPS = ["prepare-inference.ts", "fallback.ts", "relay.ts", "settle.ts"];

describe("run-inference's steps", () => {
  it.each(STEPS)("%s runs no other step's code", (step) => {
    const others = [...STEPS.filter((other) => other !== step), "run-inference.ts"].map((other) => `./${other}`);
    expect(runtimeImports(source(step)).filter((specifier) => others.includes(specifier))).toEqual([]);
  });

  it("the errors they end with depend on no step", () => {
    expect(runtimeImports(source("inference-errors.ts")).filter((specifier) => specifier.startsWith("./"))).toEqual([]);
  });

  it("run-inference.ts only strings the steps together: it reaches no provider, account, conversation or price itself", () => {
    const reached = runtimeImports(source("run-inference.ts")).filter((specifier) => /^\.\.\/(providers|accounts|conversations|billing|metering|auth)\//.test(specifier));
    expect(reached).toEqual([]);
    expect(source("run-inference.ts")).not.toMatch(/\bcreate\(/);
  });

  it("would notice a step importing another (the check itself)", () => {
    const text = 'import type { A } from "./relay.ts";\nimport {\n  b,\n} from "./settle.ts";\nexport { c } from "./fallback.ts";\n';
    expect(runtimeImports(text)).toEqual(["./settle.ts", "./fallback.ts"]);
  });
});
