// Claude Code itself on the gateway's Messages API (issue 11's proof): the real
// CLI (@anthropic-ai/claude-code, a native binary its postinstall puts in place)
// runs `claude -p` with ANTHROPIC_BASE_URL on a gateway this test starts, and
// completes a turn on an Anthropic, an OpenAI-compatible and a Gemini model
// (the fakes). Offered Claude Code's tools, each fake calls the first two with
// arguments Claude Code refuses (its validation error names them, so they
// arrived whole); Claude Code answers both calls and prints the fake's answer
// to the next request. On scripted fakes (scripted-tool-upstream.ts) the model
// asks Claude Code's Read tool for a file of its work dir, and answers with what
// Claude Code read. It runs in a temp HOME and config dir with every switch
// that keeps it offline (no update check, telemetry, error reports or other
// nonessential traffic: traced, it opens no connection but the gateway's).
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentCliMissing, CLAUDE_CLI } from "../../../support/agent-clis.ts";
import { signatureOfTurn } from "../../../support/conversation-model.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { claudeCodeConfig, MODEL_ID, UPSTREAM_MODEL } from "../../../support/claude-code-catalogue.ts";
import { closeProtocolUpstreams, startProtocolUpstreams, urlsOf, type Protocol } from "../../../support/protocol-upstreams.ts";
import type { FakeUpstream } from "../../../support/recording-server.ts";
import { ANSWER_PREFIX, startScriptedToolUpstream, type ScriptedCall } from "../../../support/scripted-tool-upstream.ts";

type Json = Record<string, any>;

/** What the file Claude Code reads in the real tool round says. */
const FILE_LINE = "Paris: 21 degrees and sunny";

const claudeMissing = agentCliMissing("Claude Code", CLAUDE_CLI);

describe.skipIf(claudeMissing)(`Claude Code on the gateway${claudeMissing ? ` (${claudeMissing})` : ""}`, () => {
  let upstreams: Record<Protocol, FakeUpstream>;
  let gateway: Gateway;
  let home: string;

  beforeAll(async () => {
    upstreams = await startProtocolUpstreams();
    gateway = await startGateway(claudeCodeConfig(urlsOf(upstreams)));
    home = await mkdtemp(join(tmpdir(), "claude-code-e2e-"));
  });

  afterAll(async () => {
    await gateway?.close();
    await closeProtocolUpstreams(upstreams ?? {});
    if (home) await rm(home, { recursive: true, force: true });
  });

  /**
   * `claude -p <prompt> --model <model>` in a fresh HOME and work dir (`prepare` sees the
   * latter first), on the gateway (or `on`) under `basePath`, with the key in `keyVariable`.
   */
  async function claude(prompt: string, options: ClaudeOptions) {
    const runHome = await mkdtemp(join(home, "run-"));
    const workdir = join(runHome, "work");
    await mkdir(workdir);
    await mkdir(join(runHome, "tmp"));
    await options.prepare?.(workdir);
    // Its debug log says what went wrong in a failed run (its errors and retries): `troubles`.
    const debugLog = join(runHome, "debug.log");
    const run = await runClaude(["-p", prompt, ...(options.model ? ["--model", options.model] : []), "--debug-file", debugLog], {
      cwd: workdir,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: runHome,
        CLAUDE_CONFIG_DIR: join(runHome, ".claude"),
        // Its messaging sockets (cc-socks/) go under TMPDIR, so nothing is left outside the temp home.
        TMPDIR: join(runHome, "tmp"),
        // Claude Code appends /v1/messages to the base URL.
        ANTHROPIC_BASE_URL: `${(options.on ?? gateway).url}${options.basePath}`,
        // ANTHROPIC_API_KEY is sent as x-api-key, ANTHROPIC_AUTH_TOKEN as Authorization: Bearer.
        [options.keyVariable]: options.key ?? TEST_KEY,
        ...OFFLINE,
        ...options.env,
      },
    });
    const troubles = (await readFile(debugLog, "utf8").catch(() => "")).split("\n").filter((line) => /\[(ERROR|WARN)\]/.test(line)).join("\n");
    return { ...run, troubles };
  }

  describe.each([
    { protocol: "anthropic" as const, model: "claude-agent", keyVariable: "ANTHROPIC_API_KEY" as const, basePath: "", how: "its bare name, x-api-key, /v1" },
    { protocol: "anthropic" as const, model: "anthropic/claude-agent", keyVariable: "ANTHROPIC_AUTH_TOKEN" as const, basePath: "/api", how: "its id, Bearer, /api/v1" },
    { protocol: "openai-compatible" as const, model: "openai/gpt-agent", keyVariable: "ANTHROPIC_AUTH_TOKEN" as const, basePath: "/api", how: "its id, Bearer, /api/v1" },
    { protocol: "openai-compatible" as const, model: "gpt-agent", keyVariable: "ANTHROPIC_API_KEY" as const, basePath: "", how: "its bare name, x-api-key, /v1" },
    { protocol: "gemini" as const, model: "gemini-agent", keyVariable: "ANTHROPIC_API_KEY" as const, basePath: "", how: "its bare name, x-api-key, /v1" },
  ])("on $protocol, the model by $how", ({ protocol, ...options }) => {
    it("claude -p completes a turn: the fake's tool calls are answered and its final answer printed", { timeout: 90_000 }, async () => {
      const before = upstreams[protocol].requests.length;
      const run = await claude("What is the weather in Paris?", options);
      expect(run.code, run.stdout + run.stderr + run.troubles).toBe(0);
      expect(run.stdout.trim()).toBe(`Hello from ${UPSTREAM_MODEL[protocol]}`);

      // Two model calls: the one that called Claude Code's tools, then the one that read its answers.
      const sent = upstreams[protocol].requests.slice(before);
      expect(sent, run.troubles).toHaveLength(2);
      expect(toolNamesOf(protocol, sent[0].body)).toEqual(expect.arrayContaining(["Bash", "Read", "Edit", "Write"]));
      const results = toolResultsOf(protocol, sent[1].body);
      expect(results).toHaveLength(2);
      // Claude Code validated the arguments the fake streamed (the second call's {"city": "London"}) and said what was wrong.
      expect(results[1]).toContain("InputValidationError");
      expect(results[1]).toContain("An unexpected parameter `city` was provided");

      if (protocol === "anthropic") {
        const [first, second] = sent;
        // Claude Code's betas and beta fields reach Anthropic, its adaptive thinking and effort as they were asked.
        expect(first.headers["anthropic-beta"]).toContain("claude-code-20250219");
        expect(first.body).toMatchObject({ thinking: { type: "adaptive" }, output_config: { effort: "high" }, context_management: { edits: [{ type: "clear_thinking_20251015" }] } });
        // The signed thinking of turn 1 came back byte for byte ahead of the two calls (the fake refuses one it did not sign).
        const replayed = (second.body.messages as Json[]).at(-2)!;
        expect(replayed.content[0]).toEqual({ type: "thinking", thinking: "Let me think.", signature: signatureOfTurn("anthropic", first.body.messages.length) });
        expect(replayed.content.slice(1).map((block: Json) => block.type)).toEqual(["tool_use", "tool_use"]);
      }
      if (protocol === "openai-compatible") expect(sent[0].body.reasoning_effort).toBe("high");
    });
  });

  it.each<{ label: string; model: string | undefined; env: Record<string, string>; protocol: Protocol }>([
    { label: "ANTHROPIC_MODEL instead of --model", model: undefined, env: { ANTHROPIC_MODEL: MODEL_ID.gemini }, protocol: "gemini" },
    { label: "--model haiku, the alias ANTHROPIC_DEFAULT_HAIKU_MODEL names", model: "haiku", env: { ANTHROPIC_DEFAULT_HAIKU_MODEL: MODEL_ID["openai-compatible"] }, protocol: "openai-compatible" },
  ])("the model can come from the environment: $label", { timeout: 90_000 }, async ({ model, env, protocol }) => {
    const before = upstreams[protocol].requests.length;
    const run = await claude("Hi", { model, keyVariable: "ANTHROPIC_API_KEY", basePath: "", env });
    expect(run.code, run.stdout + run.stderr + run.troubles).toBe(0);
    expect(run.stdout.trim()).toBe(`Hello from ${UPSTREAM_MODEL[protocol]}`);
    expect(upstreams[protocol].requests.length, run.troubles).toBe(before + 2);
  });

  describe("a real tool round", () => {
    // The scripted fakes call Claude Code's Read tool on a file of its work dir, then answer with what it read.
    const readCall: ScriptedCall = { name: "Read", input: {} };
    let scripted: Partial<Record<Protocol, FakeUpstream>>;
    let readingGateway: Gateway;

    beforeAll(async () => {
      const [anthropic, openai] = await Promise.all([startScriptedToolUpstream("anthropic", readCall), startScriptedToolUpstream("openai-compatible", readCall)]);
      scripted = { anthropic, "openai-compatible": openai };
      readingGateway = await startGateway(claudeCodeConfig({ ...urlsOf(upstreams), anthropic: anthropic.url, "openai-compatible": openai.url }));
    });

    afterAll(async () => {
      await readingGateway?.close();
      await closeProtocolUpstreams(scripted ?? {});
    });

    it.each(["anthropic", "openai-compatible"] as const)("on %s: Claude Code reads the file the model asks for and the model answers from it", { timeout: 90_000 }, async (protocol) => {
      const prepare = async (workdir: string) => {
        await writeFile(join(workdir, "weather.txt"), `${FILE_LINE}\n`);
        readCall.input = { file_path: join(workdir, "weather.txt") };
      };
      const run = await claude("What does weather.txt say?", { model: MODEL_ID[protocol], keyVariable: "ANTHROPIC_API_KEY", basePath: "", on: readingGateway, prepare });
      expect(run.code, run.stdout + run.stderr + run.troubles).toBe(0);
      expect(run.stdout.startsWith(ANSWER_PREFIX), run.stdout).toBe(true);
      // Read's own rendering: numbered lines.
      expect(run.stdout).toContain(`1\t${FILE_LINE}`);
      const sent = scripted[protocol]!.requests.slice(-2).map((request) => request.body as Json);
      expect(toolResultsOf(protocol, sent[1]).join()).toContain(FILE_LINE);
    });
  });

  it("a wrong key ends the run with the gateway's 401 and no upstream call", { timeout: 90_000 }, async () => {
    const before = upstreams.anthropic.requests.length;
    // Claude Code retries a 401 (ten times, backing off) unless the answer says x-should-retry: false; one try is enough here.
    const run = await claude("Hi", { model: "claude-agent", keyVariable: "ANTHROPIC_API_KEY", basePath: "", key: "sk-wrong", env: { CLAUDE_CODE_MAX_RETRIES: "0" } });
    expect(run.code).toBe(1);
    expect(run.stdout.trim()).toBe("Failed to authenticate. API Error: 401 Invalid API key.");
    expect(upstreams.anthropic.requests.length).toBe(before);
  });
});

interface ClaudeOptions {
  model?: string;
  keyVariable: "ANTHROPIC_API_KEY" | "ANTHROPIC_AUTH_TOKEN";
  basePath: string;
  key?: string;
  env?: Record<string, string>;
  on?: Gateway;
  prepare?: (workdir: string) => Promise<void>;
}

/**
 * What keeps Claude Code offline and non-interactive besides print mode: no
 * nonessential traffic (which also turns off the auto-updater, telemetry and
 * error reports; each is also set on its own), no feature-flag fetches.
 */
const OFFLINE = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_AUTOUPDATER: "1",
  DISABLE_TELEMETRY: "1",
  DISABLE_ERROR_REPORTING: "1",
  DISABLE_GROWTHBOOK: "1",
};

function toolNamesOf(protocol: Protocol, sent: Json): string[] {
  if (protocol === "anthropic") return (sent.tools as Json[]).map((tool) => tool.name);
  if (protocol === "openai-compatible") return (sent.tools as Json[]).map((tool) => tool.function.name);
  return (sent.tools as Json[]).flatMap((tool) => (tool.functionDeclarations ?? []).map((declaration: Json) => declaration.name));
}

/** The text of each tool result in the last turn the upstream was sent. */
function toolResultsOf(protocol: Protocol, sent: Json): string[] {
  if (protocol === "anthropic") {
    return (sent.messages.at(-1).content as Json[]).filter((block) => block.type === "tool_result").map((block) => JSON.stringify(block.content));
  }
  if (protocol === "openai-compatible") {
    return (sent.messages as Json[]).filter((message) => message.role === "tool").map((message) => JSON.stringify(message.content));
  }
  return (sent.contents.at(-1).parts as Json[]).filter((part) => part.functionResponse).map((part) => JSON.stringify(part.functionResponse.response));
}

const BOUND_MS = 60_000;

/** Runs claude with stdin closed; killed (and failed) if it outlives the bound. */
function runClaude(args: string[], options: { cwd: string; env: Record<string, string> }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLAUDE_CLI, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const bound = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`claude did not finish within ${BOUND_MS / 1000} s: ${stdout}${stderr}`));
    }, BOUND_MS);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(bound);
      resolve({ code, stdout, stderr });
    });
  });
}
