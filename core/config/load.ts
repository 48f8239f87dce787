// Reads and validates the configuration file. Problems are reported all at once,
// each with its path and line inside the file, so an operator can fix them in one go.
import { readFileSync } from "node:fs";
import { LineCounter, parseDocument } from "yaml";
import { schemaProblems, syntaxProblems, type Source } from "./problems.ts";
import { routerConfigSchema, type RouterConfig } from "./schema.ts";

export const DEFAULT_CONFIG_PATH = new URL("../../config/default.yaml", import.meta.url).pathname;

export class ConfigError extends Error {
  readonly problems: string[];
  /** `whole`: one line that says it all (a file that is not there, or empty), instead of the list. */
  constructor(file: string, problems: string[], whole?: string) {
    super(whole ?? `invalid configuration ${file}:\n` + problems.map((p) => "  - " + p).join("\n"));
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/** A problem that is the whole file's: said in one line, naming the file. */
function wholeFileError(file: string, problem: string): ConfigError {
  return new ConfigError(file, [problem], `configuration file ${file} ${problem}`);
}

/** Parses configuration text (YAML is a superset of JSON, so both are accepted). */
export function parseConfig(text: string, file = "<inline>"): RouterConfig {
  const lines = new LineCounter();
  // prettyErrors off: each problem is one line, its position given by syntaxProblems.
  const source: Source = { text, lines, doc: parseDocument(text, { lineCounter: lines, prettyErrors: false }) };
  const syntax = syntaxProblems(source);
  if (syntax.length > 0) throw new ConfigError(file, syntax);
  let raw: unknown;
  try {
    raw = source.doc.toJS();
  } catch (error) {
    // An alias bomb (too many expansions) and the like: nothing to point at.
    throw new ConfigError(file, [(error as Error).message]);
  }
  // Nothing but blank lines and comments: not a configuration with every field missing.
  if (raw === null || raw === undefined) throw wholeFileError(file, "is empty");
  const result = routerConfigSchema.safeParse(raw);
  if (!result.success) throw new ConfigError(file, schemaProblems(result.error.issues, routerConfigSchema, source));
  return result.data;
}

export function loadConfigFile(file: string = DEFAULT_CONFIG_PATH): RouterConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw wholeFileError(file, "not found (ROUTER_CONFIG names the file to use)");
    throw new ConfigError(file, [(error as Error).message]);
  }
  return parseConfig(text, file);
}
