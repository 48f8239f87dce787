// What Claude Code sends on the Messages API, replayed: the two request bodies
// Claude Code 2.1.330 was captured sending through the gateway
// (test/fixtures/claude-code/: its first turn, and the turn that answers two
// tool calls) go through Anthropic's SDK the way Claude Code sends them (the
// beta endpoint, ?beta=true, with its anthropic-beta values), streamed as
// captured and as JSON, on the fake Anthropic, OpenAI-compatible and Gemini
// upstreams. Every field is served: to Anthropic the request arrives as sent
// (tools with defer_loading, tool_use blocks with their caller, cache
// breakpoints, context_management, metadata), the one move being the
// mid-conversation system message, which joins the top-level system; elsewhere
// what the protocol cannot carry is dropped with a warning.
import { readFileSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectAnthropicValid } from "../../../support/anthropic-schema.ts";
import { CLAUDE_CODE_BETAS, claudeCodeConfig, MODEL_ID, UPSTREAM_MODEL } from "../../../support/claude-code-catalogue.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { closeProtocolUpstreams, PROTOCOLS, startProtocolUpstreams, urlsOf, type Protocol } from "../../../support/protocol-upstreams.ts";
import type { FakeUpstream } from "../../../support/recording-server.ts";

type Json = Record<string, any>;

const FIXTURES = new URL("../../../fixtures/claude-code/", import.meta.url);
const TURNS = ["claude-code-2.1.330-turn1.json", "claude-code-2.1.330-turn2.json"] as const;

function fixture(name: string): Json {
  return JSON.parse(readFileSync(new URL(name, FIXTURES), "utf8")) as Json;
}

describe("the requests Claude Code sends", () => {
  let upstreams: Record<Protocol, FakeUpstream>;
  let gateway: Gateway;
  let client: Anthropic;

  beforeAll(async () => {
    upstreams = await startProtocolUpstreams();
    gateway = await startGateway(claudeCodeConfig(urlsOf(upstreams)));
    client = new Anthropic({ apiKey: TEST_KEY, baseURL: gateway.url, maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
    await closeProtocolUpstreams(upstreams ?? {});
  });

  /** The captured body on `protocol`'s model through the SDK's beta endpoint, streamed or not; the final Message and the warnings. */
  async function replay(name: string, protocol: Protocol, stream: boolean) {
    const { stream: _captured, ...body } = fixture(name);
    const params = { ...body, model: MODEL_ID[protocol], betas: CLAUDE_CODE_BETAS } as unknown as Anthropic.Beta.MessageCreateParamsNonStreaming;
    if (!stream) {
      // With max_tokens 32000 the SDK wants a timeout for a call that is not streamed (Claude Code's fallback sets one so).
      const { data, response } = await client.beta.messages.create(params, { timeout: 300_000 }).withResponse();
      return { message: data as unknown as Json, warnings: response.headers.get("x-router-warnings") ?? "" };
    }
    const events = client.beta.messages.stream(params);
    const message = (await events.finalMessage()) as unknown as Json;
    return { message, warnings: (await events.withResponse()).response.headers.get("x-router-warnings") ?? "" };
  }

  const sentTo = (protocol: Protocol) => upstreams[protocol].requests.at(-1)!;

  describe.each(PROTOCOLS)("on %s", (protocol) => {
    it.each([
      { name: TURNS[0], stream: true },
      { name: TURNS[0], stream: false },
      { name: TURNS[1], stream: true },
      { name: TURNS[1], stream: false },
    ])("$name (stream: $stream) is served", async ({ name, stream }) => {
      const { message, warnings } = await replay(name, protocol, stream);
      expectAnthropicValid("Message", message, `${name} on ${protocol}`);
      if (name === TURNS[0]) {
        // Offered Claude Code's tools, the fake calls the first two.
        expect(message.stop_reason).toBe("tool_use");
        expect(message.content.filter((block: Json) => block.type === "tool_use").map((block: Json) => block.name)).toEqual(["Agent", "Bash"]);
      } else {
        expect(message.stop_reason).toBe("end_turn");
        expect(message.content.at(-1)).toMatchObject({ type: "text", text: `Hello from ${UPSTREAM_MODEL[protocol]}` });
      }
      if (protocol === "anthropic") expect(warnings).toBe("");
      else expect(warnings).toContain("context_management is not supported");
    });
  });

  describe("to Anthropic", () => {
    it("the request arrives as Claude Code sent it, its system message joining the top-level system", async () => {
      const captured = fixture(TURNS[1]);
      await replay(TURNS[1], "anthropic", true);
      const { headers, body: sent } = sentTo("anthropic");
      expect(String(headers["anthropic-beta"]).split(",")).toEqual(CLAUDE_CODE_BETAS);
      // Tools whole (defer_loading, the last one's cache breakpoint); blocks whole (tool_use's caller, the tool_result's cache breakpoint).
      expect(sent.tools).toEqual(captured.tools);
      const systemMessages = (captured.messages as Json[]).filter((message) => message.role === "system");
      expect(systemMessages).toHaveLength(1);
      expect(sent.messages).toEqual((captured.messages as Json[]).filter((message) => message.role !== "system"));
      expect(sent.system).toEqual([...captured.system, { type: "text", text: systemMessages[0].content }]);
      expect(sent).toMatchObject({
        model: UPSTREAM_MODEL.anthropic,
        max_tokens: captured.max_tokens,
        metadata: captured.metadata,
        context_management: captured.context_management,
        output_config: captured.output_config,
        thinking: { type: "adaptive" },
        stream: true,
      });
    });
  });

  describe.each(["openai-compatible", "gemini"] as const)("to %s", (protocol) => {
    it("Claude Code's tools are functions, its tool round tool results, and its system messages system text", async () => {
      const captured = fixture(TURNS[1]);
      await replay(TURNS[1], protocol, true);
      const sent = sentTo(protocol).body;
      const toolNames = (captured.tools as Json[]).map((tool) => tool.name);
      if (protocol === "openai-compatible") {
        expect((sent.tools as Json[]).map((tool) => tool.function.name)).toEqual(toolNames);
        const tools = (sent.messages as Json[]).filter((message) => message.role === "tool");
        expect(tools.map((message) => message.tool_call_id)).toEqual(["toolu_01FakeCall", "toolu_02FakeCall"]);
        expect((sent.messages as Json[]).filter((message) => message.role === "system")).toHaveLength(2);
      } else {
        expect((sent.tools as Json[]).flatMap((tool) => tool.functionDeclarations.map((declaration: Json) => declaration.name))).toEqual(toolNames);
        const responses = (sent.contents as Json[]).flatMap((content) => content.parts).filter((part: Json) => part.functionResponse);
        expect(responses.map((part: Json) => part.functionResponse.name)).toEqual(["Agent", "Bash"]);
        expect(JSON.stringify(sent.systemInstruction)).toContain("# Environment");
      }
    });
  });
});
