// The coding-agent CLIs (Claude Code, Codex CLI) weigh about 770 MB, so they are
// not project dependencies: `npm run install:agent-clis` installs them into
// test/agent-clis/ (its own lockfile). Without them the agent end-to-end tests
// skip, naming that step; `.ci/run` installs them and sets REQUIRE_AGENT_CLIS=1,
// which turns a missing CLI into a failure, so CI always runs those tests.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const INSTALLED = new URL("../agent-clis/node_modules/", import.meta.url);

export const CLAUDE_CLI = fileURLToPath(new URL("@anthropic-ai/claude-code/bin/claude.exe", INSTALLED));
export const CODEX_CLI = fileURLToPath(new URL("@openai/codex/bin/codex.js", INSTALLED));

/**
 * Why a test of `cli` cannot run here (a skip note), or undefined when it can.
 * Throws instead when REQUIRE_AGENT_CLIS is set, so a run that must cover the
 * agents fails loudly rather than skipping.
 */
export function agentCliMissing(name: string, path: string): string | undefined {
  if (existsSync(path)) return undefined;
  const note = `skipped: ${name} is not installed (run \`npm run install:agent-clis\`)`;
  if (process.env.REQUIRE_AGENT_CLIS) throw new Error(`${name} is required (REQUIRE_AGENT_CLIS) but missing at ${path}: run \`npm run install:agent-clis\``);
  return note;
}
