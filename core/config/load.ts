// Reads and validates the configuration file. Problems are reported all at once,
// each with its path inside the file, so an operator can fix them in one go.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { routerConfigSchema, type RouterConfig } from "./schema.ts";

export const DEFAULT_CONFIG_PATH = new URL("../../config/default.yaml", import.meta.url).pathname;

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(file: string, problems: string[]) {
    super(`invalid configuration ${file}:\n` + problems.map((p) => "  - " + p).join("\n"));
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/** Parses configuration text (YAML is a superset of JSON, so both are accepted). */
export function parseConfig(text: string, file = "<inline>"): RouterConfig {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new ConfigError(file, [(error as Error).message]);
  }
  const result = routerConfigSchema.safeParse(raw);
  if (!result.success) {
    throw new ConfigError(
      file,
      result.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`),
    );
  }
  return result.data;
}

export function loadConfigFile(file: string = DEFAULT_CONFIG_PATH): RouterConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(file, [(error as Error).message]);
  }
  return parseConfig(text, file);
}
