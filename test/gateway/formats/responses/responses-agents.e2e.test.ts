// Real agents on the gateway's Responses API, on models that are not OpenAI's:
// the OpenAI Agents SDK for JS (@openai/agents, its default OpenAIProvider and
// so its Responses model) runs an agent with a function tool to its final
// output, and Codex CLI (@openai/codex, `codex exec` with a model provider
// whose wire_api is "responses") completes a turn. The gateway runs on the fake
// Anthropic and Gemini upstreams; what they received shows the tool round.
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, OpenAIProvider, Runner, tool } from "@openai/agents";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { agentCliMissing, CODEX_CLI } from "../../../support/agent-clis.ts";
import { signatureOfTurn } from "../../../support/conversation-model.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { parseConfig } from "../../../../core/config/load.ts";
import { closeProtocolUpstreams, lastSent, protocolConfigDocument, startProtocolUpstreams, urlsOf, type Protocol } from "../../../support/protocol-upstreams.ts";
import type { FakeUpstream } from "../../../support/recording-server.ts";

type Json = Record<string, any>;

// "conversation" models sign their thinking per request and refuse a signature they did not give (conversation-model.ts).
const UPSTREAM_MODEL: Record<Protocol, string> = { "openai-compatible": "gpt-agent", anthropic: "claude-agent-conversation", gemini: "gemini-agent", "gemini-interactions": "gemini-ix-agent" };
const TOOL_OUTPUT = "21 degrees and sunny";
const KNOWN_TO_CODEX = "openai/gpt-5.5";
const codexMissing = agentCliMissing("Codex CLI", CODEX_CLI);

describe("real agents through the Responses API", () => {
  let upstreams: Record<Protocol, FakeUpstream>;
  let gateway: Gateway;

  beforeAll(async () => {
    upstreams = await startProtocolUpstreams();
    // Besides agents/<protocol>: openai/gpt-5.5, a model Codex knows (it then sends its custom apply_patch, tool_search and
    // text.verbosity too), served by the Anthropic fake.
    const document = protocolConfigDocument(urlsOf(upstreams), "agents", UPSTREAM_MODEL);
    const onAnthropic = document.models.find((model) => model.id === "agents/anthropic")!;
    document.models.push({ ...onAnthropic, id: KNOWN_TO_CODEX, name: "GPT-5.5 on the Anthropic fake" });
    gateway = await startGateway(parseConfig(JSON.stringify(document)));
  });

  afterAll(async () => {
    await gateway?.close();
    await closeProtocolUpstreams(upstreams ?? {});
  });

  describe.each([
    { protocol: "anthropic" as const, toolResultOf: (sent: Json) => sent.messages.at(-1).content.find((block: Json) => block.type === "tool_result").content },
    { protocol: "gemini" as const, toolResultOf: (sent: Json) => sent.contents.at(-1).parts[0].functionResponse.response },
    { protocol: "gemini-interactions" as const, toolResultOf: (sent: Json) => sent.input.at(-1).result },
  ])("the OpenAI Agents SDK on $protocol", ({ protocol, toolResultOf }) => {
    function weatherAgent() {
      const calls: { city: string }[] = [];
      const getWeather = tool({
        name: "get_weather",
        description: "The current weather of a city",
        parameters: z.object({ city: z.string() }),
        execute: async ({ city }) => {
          calls.push({ city });
          return TOOL_OUTPUT;
        },
      });
      const agent = new Agent({ name: "Weather", instructions: "Answer with the weather.", model: `agents/${protocol}`, tools: [getWeather] });
      // The SDK's default provider (its Responses model), on an openai client pointed at the gateway; no traces leave the machine.
      const runner = new Runner({
        modelProvider: new OpenAIProvider({ openAIClient: new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 }) }),
        tracingDisabled: true,
      });
      return { agent, runner, calls };
    }

    it.each([{ stream: false }, { stream: true }])("runs an agent with a function tool to its final output (stream: $stream)", async ({ stream }) => {
      const { agent, runner, calls } = weatherAgent();
      const before = upstreams[protocol].requests.length;
      const result = stream ? await runner.run(agent, "What is the weather in Paris?", { stream: true }) : await runner.run(agent, "What is the weather in Paris?");
      if ("completed" in result) {
        for await (const _event of result);
        await result.completed;
      }
      expect(calls).toEqual([{ city: "Paris" }]);
      expect(result.finalOutput).toBe(`Hello from ${UPSTREAM_MODEL[protocol]}`);
      // Two model calls: the one that called the tool, then the one that read its output.
      const sent = upstreams[protocol].requests.slice(before).map((request) => request.body as Json);
      expect(sent).toHaveLength(2);
      expect(JSON.stringify(toolResultOf(sent[1]))).toContain(TOOL_OUTPUT);
    });

    it("takes the SDK's model settings: sampling, limits, parallel tool calls, truncation, store, cache retention, reasoning summary, verbosity", async () => {
      const { agent, runner, calls } = weatherAgent();
      const tuned = agent.clone({
        modelSettings: {
          temperature: 0.5,
          topP: 0.9,
          maxTokens: 500,
          parallelToolCalls: false,
          truncation: "auto",
          store: true,
          promptCacheRetention: "24h",
          reasoning: { summary: "auto" },
          text: { verbosity: "medium" },
        },
      });
      const result = await runner.run(tuned, "What is the weather in Paris?");
      expect(calls).toEqual([{ city: "Paris" }]);
      expect(result.finalOutput).toBe(`Hello from ${UPSTREAM_MODEL[protocol]}`);
      const sent = upstreams[protocol].requests.at(-1)!.body as Json;
      if (protocol === "anthropic") {
        expect(sent).toMatchObject({ temperature: 0.5, top_p: 0.9, max_tokens: 500, tool_choice: { type: "auto", disable_parallel_tool_use: true } });
      } else if (protocol === "gemini") {
        expect(sent.generationConfig).toMatchObject({ temperature: 0.5, topP: 0.9, maxOutputTokens: 500 });
      } else {
        expect(sent.generation_config).toMatchObject({ temperature: 0.5, top_p: 0.9, max_output_tokens: 500 });
      }
    });

    it("continues the run through previous_response_id, the stored conversation on the gateway", async () => {
      const { agent, runner } = weatherAgent();
      const first = await runner.run(agent, "What is the weather in Paris?");
      const second = await runner.run(agent, "Thanks. And in one word?", { previousResponseId: first.lastResponseId });
      expect(second.finalOutput).toBe(`Hello from ${UPSTREAM_MODEL[protocol]}`);
      // As the upstream's model saw it (Gemini Interactions keeps the conversation on its side).
      const sent = lastSent(upstreams, protocol);
      // The first run's question, tool round and answer came from the gateway's store.
      expect(JSON.stringify(sent)).toContain("What is the weather in Paris?");
      expect(JSON.stringify(sent)).toContain(TOOL_OUTPUT);
    });
  });

  describe.skipIf(codexMissing).each([
    { protocol: "anthropic" as const, model: "agents/anthropic", effort: undefined, label: "its defaults" },
    { protocol: "gemini" as const, model: "agents/gemini", effort: undefined, label: "its defaults" },
    { protocol: "anthropic" as const, model: "agents/anthropic", effort: "high", label: "model_reasoning_effort high" },
    { protocol: "anthropic" as const, model: KNOWN_TO_CODEX, effort: undefined, label: `a model it knows (${KNOWN_TO_CODEX})` },
    { protocol: "anthropic" as const, model: "agents/anthropic", effort: undefined, label: "supports_websockets (the Responses WebSocket mode)", websocket: true },
  ])(`Codex CLI on $protocol with $label${codexMissing ? ` (${codexMissing})` : ""}`, ({ protocol, model, effort, websocket = false }) => {
    let home: string;

    beforeAll(async () => {
      home = await mkdtemp(join(tmpdir(), "codex-e2e-"));
    });

    afterAll(async () => {
      if (home) await rm(home, { recursive: true, force: true });
    });

    it("codex exec completes a turn: its default tools' calls are answered and the final message printed", { timeout: 60_000 }, async () => {
      const codexHome = join(home, "codex-home");
      const workdir = join(home, "work");
      await mkdir(codexHome, { recursive: true });
      await mkdir(workdir, { recursive: true });
      // A model provider on the gateway, its key from GATEWAY_KEY; nothing that reaches OpenAI (no update check, no analytics).
      await writeFile(
        join(codexHome, "config.toml"),
        [
          `model = "${model}"`,
          `model_provider = "gateway"`,
          `check_for_update_on_startup = false`,
          ...(effort ? [`model_reasoning_effort = "${effort}"`] : []),
          ``,
          `[analytics]`,
          `enabled = false`,
          ``,
          `[model_providers.gateway]`,
          `name = "gateway"`,
          `base_url = "${gateway.apiUrl}"`,
          `wire_api = "responses"`,
          `env_key = "GATEWAY_KEY"`,
          ...(websocket ? [`supports_websockets = true`] : []),
          ``,
        ].join("\n"),
      );
      const before = upstreams[protocol].requests.length;
      const socketTurnsBefore = gateway.sockets.counts.turns;
      const run = await runCodex(["exec", "--strict-config", "--ephemeral", "--skip-git-repo-check", "--color", "never", "--sandbox", "read-only", "What is the weather in Paris?"], {
        cwd: workdir,
        env: { PATH: process.env.PATH ?? "", HOME: home, CODEX_HOME: codexHome, GATEWAY_KEY: TEST_KEY },
      });
      expect(run.code, run.stderr).toBe(0);
      // stdout is the turn's last message alone.
      expect(run.stdout.trim()).toBe(`Hello from ${UPSTREAM_MODEL[protocol]}`);
      // The fake called Codex's first two tools (with arguments Codex refuses); Codex answered both, and the next call read the answers.
      const sent = upstreams[protocol].requests.slice(before).map((request) => request.body as Json);
      expect(sent).toHaveLength(2);
      expect(toolResultCount(protocol, sent[1])).toBe(2);
      // Over the socket, both turns (and any warm-up) went by WebSocket: no fallback to HTTP, so none of its retries' delay.
      if (websocket) expect(gateway.sockets.counts.turns - socketTurnsBefore).toBeGreaterThanOrEqual(2);
      else expect(gateway.sockets.counts.turns).toBe(socketTurnsBefore);
      if (model === KNOWN_TO_CODEX) {
        // Its custom apply_patch, tool_search and web_search were left out; its function tools went upstream.
        const names = (sent[0].tools as Json[]).map((tool) => tool.name);
        expect(names).not.toContain("apply_patch");
        expect(names.slice(0, 2)).toEqual(["exec_command", "write_stdin"]);
      }
      // Asked for reasoning (configured, or effort medium on a model it knows), Anthropic thinks on a budget.
      if (effort || model === KNOWN_TO_CODEX) {
        // Codex keeps no state on the server (store: false): it replays the reasoning item, and Anthropic's signature in its
        // encrypted_content comes back byte for byte, ahead of the tool calls (the fake refuses a signature it did not give).
        expect(sent[0].thinking).toMatchObject({ type: "enabled" });
        const replayed = (sent[1].messages as Json[]).at(-2)!;
        expect(replayed.content[0]).toEqual({ type: "thinking", thinking: "Let me think.", signature: signatureOfTurn("anthropic", sent[0].messages.length) });
        expect(replayed.content.slice(1).map((block: Json) => block.type)).toEqual(["tool_use", "tool_use"]);
      }
    });
  });
});

/** How many tool results the upstream was sent in its last turn. */
function toolResultCount(protocol: "anthropic" | "gemini", sent: Json): number {
  if (protocol === "anthropic") return sent.messages.at(-1).content.filter((block: Json) => block.type === "tool_result").length;
  return sent.contents.at(-1).parts.filter((part: Json) => part.functionResponse).length;
}


/** Runs the codex launcher with stdin closed; killed (and failed) if it outlives the bound. */
function runCodex(args: string[], options: { cwd: string; env: Record<string, string> }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CODEX_CLI, ...args], { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const bound = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`codex did not finish within 45 s: ${stderr}`));
    }, 45_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(bound);
      resolve({ code, stdout, stderr });
    });
  });
}
