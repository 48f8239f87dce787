// The Messages API on every provider protocol, through the official
// @anthropic-ai/sdk: messages.create, messages.stream() with finalMessage()
// (the SDK's own accumulator has to accept every stream), and countTokens,
// against the gateway on the fake OpenAI-compatible, Anthropic, Gemini and
// Gemini Interactions upstreams, which refuse what the real APIs refuse. Both paths (/v1 and
// /api/v1) and both auth headers (x-api-key: the SDK's apiKey; Bearer: its
// authToken), in-process and split (the core over Connect/HTTP2).
//
// Each feature shows what the upstream received, in its own wire shape: a tool
// round (tool_use, tool_result, the answer), extended thinking with its
// signature sent back (byte for byte to Anthropic, redacted thinking too),
// image and document input, stop sequences, cache breakpoints, betas, tool
// choices, web search, and what the gateway does not model (a top-level field,
// a block type): sent as is to Anthropic, dropped with a warning elsewhere.
// Errors come in Anthropic's envelope with the spec's fields (an upstream
// failing mid-stream as the error event), and bare model names (what
// Anthropic's SDK users send) resolve through the catalogue. Every Message,
// stream event, count and error body is checked against the SDK's types
// (anthropic-schema.ts), and the raw SSE once per protocol.
import Anthropic, { APIError } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectAnthropicValid } from "../../../support/anthropic-schema.ts";
import { promptTokensOf, redactedOfTurn, signatureOfTurn } from "../../../support/conversation-model.ts";
import { REDACTED_THINKING_TRIGGER } from "../../../support/fake-anthropic-upstream.ts";
import { FAKE_CALL_IDS, turnsOf } from "../../../support/fake-gemini-interactions-upstream.ts";
import { FAKE_COUNTS } from "../../../support/fake-count-tokens.ts";
import type { FakeUpstream } from "../../../support/fake-openai-upstream.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { closeProtocolUpstreams, countedConversation, protocolConfigDocument, PROTOCOLS, startProtocolUpstreams, urlsOf, type Protocol } from "../../../support/protocol-upstreams.ts";
import { parseConfig } from "../../../../core/config/load.ts";

type Json = Record<string, any>;
type Mode = "create" | "stream";
const MODES: Mode[] = ["create", "stream"];

const UPSTREAM_MODEL: Record<Protocol, string> = {
  "openai-compatible": "gpt-conversation",
  anthropic: "claude-conversation",
  gemini: "gemini-3-conversation",
  "gemini-interactions": "gemini-3-conversation",
};
const HELLO = (protocol: Protocol) => `Hello from ${UPSTREAM_MODEL[protocol]}`;
/** The ids each fake gives its tool call; Gemini sends none, so the router makes one. */
const CALL_ID: Partial<Record<Protocol, string>> = { "openai-compatible": "call_fake1", anthropic: "toolu_01FakeCall", "gemini-interactions": FAKE_CALL_IDS[0] };
/** The protocols whose upstream counts tokens (the others are estimated), and those that run a web search. */
const COUNTS_TOKENS: Protocol[] = ["anthropic", "gemini"];
const SEARCHES_THE_WEB: Protocol[] = ["anthropic", "gemini"];
const THOUGHT = "Let me think.";
const QUESTION = "Weather in Paris?";
const TOOL_OUTPUT = '{"celsius":21}';
const PNG = "iVBORw0KGgo=";
const PDF = Buffer.from("%PDF-1.4 fake").toString("base64");

const weatherTool: Anthropic.Tool = {
  name: "get_weather",
  description: "Current weather of a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

/** The two paths the spec names, and the two ways the SDK authenticates. */
type Path = "/v1" | "/api/v1";
type Auth = "x-api-key" | "bearer";
const VARIANTS: { path: Path; auth: Auth }[] = [
  { path: "/v1", auth: "x-api-key" },
  { path: "/v1", auth: "bearer" },
  { path: "/api/v1", auth: "x-api-key" },
  { path: "/api/v1", auth: "bearer" },
];

/** The router's usage fields beside Anthropic's. */
type RouterUsage = Anthropic.Usage & { cost: number; chat_id: string; provider: string };

/**
 * The protocol configuration (models `conv/<protocol>`), plus models for the
 * bare-name cases: `anthropic/claude-sonnet-4-5` alone with its bare name, and
 * `claude-twin` under two providers.
 */
function configFor(upstreams: Record<Protocol, FakeUpstream>) {
  const document = protocolConfigDocument(urlsOf(upstreams), "conv", UPSTREAM_MODEL, [
    { suffix: "cut", upstreamModel: "cut-after-first" },
    { suffix: "down", upstreamModel: "fail-503" },
    { suffix: "cite", upstreamModel: "cite" },
  ]);
  const anthropicModel = document.models.find((model) => model.id === "conv/anthropic")!;
  const renamed = (id: string) => ({ ...anthropicModel, id, name: id });
  // A model whose Anthropic route takes an effort (newer Claude models): adaptive thinking reaches it as such.
  const adaptive = renamed("anthropic/claude-opus-4-6");
  adaptive.providers = adaptive.providers.map((route) => ({ ...route, reasoning_effort_map: { low: "low", medium: "medium", high: "high" } }));
  document.models.push(renamed("anthropic/claude-sonnet-4-5"), renamed("vendor-a/claude-twin"), renamed("vendor-b/claude-twin"), adaptive);
  return parseConfig(JSON.stringify(document));
}

describe.each([{ split: false }, { split: true }])("messages on every provider protocol (split: $split)", ({ split }) => {
  let upstreams: Record<Protocol, FakeUpstream>;
  let gateway: Gateway;
  /** The client Claude Code is: x-api-key, on /v1. */
  let client: Anthropic;

  const clientFor = ({ path, auth }: { path: Path; auth: Auth }, key = TEST_KEY) =>
    new Anthropic({
      // The SDK appends /v1/messages to its base URL.
      baseURL: path === "/v1" ? gateway.url : `${gateway.url}/api`,
      ...(auth === "x-api-key" ? { apiKey: key } : { authToken: key }),
      maxRetries: 0,
    });

  beforeAll(async () => {
    upstreams = await startProtocolUpstreams();
    gateway = await startGateway(configFor(upstreams), { split });
    client = clientFor(VARIANTS[0]);
  });
  afterAll(async () => {
    await gateway?.close();
    if (upstreams) await closeProtocolUpstreams(upstreams);
  });

  interface Sent {
    message: Anthropic.Message;
    /** The one upstream request the call caused. */
    sent: Json;
    upstreamHeaders: Json;
    /** The message's usage with the router's fields (a stream has them in message_delta, which the SDK's accumulator does not keep). */
    usage: RouterUsage;
    warnings: string;
  }

  /** One Messages request, created or streamed, checked against the SDK's types; the answer and what the upstream received. */
  async function send(protocol: Protocol, mode: Mode, params: Omit<Anthropic.MessageCreateParamsNonStreaming, "model"> & Json, options: Anthropic.RequestOptions = {}, via = client, model = `conv/${protocol}`): Promise<Sent> {
    const upstream = upstreams[protocol];
    const before = upstream.requests.length;
    const body = { model, ...params } as Anthropic.MessageCreateParamsNonStreaming;
    const answer = mode === "create" ? await created(via, body, options) : await streamed(via, body, options);
    const calls = upstream.requests.slice(before).filter((request) => !request.path.includes("count"));
    expect(calls).toHaveLength(1);
    return { ...answer, sent: calls[0].body, upstreamHeaders: calls[0].headers };
  }

  async function created(via: Anthropic, body: Anthropic.MessageCreateParamsNonStreaming, options: Anthropic.RequestOptions) {
    const { data, response } = await via.messages.create(body, options).withResponse();
    expectAnthropicValid("Message", data, "the created message");
    expect(response.headers.get("request-id")).toBe(data.id);
    return { message: data, usage: data.usage as RouterUsage, warnings: response.headers.get("x-router-warnings") ?? "" };
  }

  /**
   * Streamed through messages.stream(): every event valid, in Anthropic's
   * order, and finalMessage() (the SDK's accumulator) a valid message that
   * agrees with the events.
   */
  async function streamed(via: Anthropic, body: Anthropic.MessageCreateParamsNonStreaming, options: Anthropic.RequestOptions) {
    const stream = via.messages.stream(body, options);
    const events: Anthropic.MessageStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalMessage();
    for (const event of events) expectAnthropicValid("RawMessageStreamEvent", event, `the ${event.type} event`);
    expectAnthropicOrder(events);
    const message = JSON.parse(JSON.stringify(final)) as Anthropic.Message;
    expectAnthropicValid("Message", message, "finalMessage()");
    const start = events[0] as Anthropic.RawMessageStartEvent;
    expect(message.id).toBe(start.message.id);
    expect(stream.request_id).toBe(message.id);
    // message_delta's usage is cumulative: the accumulated message has its counts.
    const delta = events.at(-2) as Anthropic.RawMessageDeltaEvent;
    expect(message.usage).toMatchObject({ ...pick(delta.usage, ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]) });
    const headers = (await stream.withResponse()).response.headers;
    return { message, usage: { ...message.usage, ...delta.usage } as RouterUsage, warnings: headers.get("x-router-warnings") ?? "" };
  }

  for (const protocol of PROTOCOLS) {
    describe(protocol, () => {
      for (const variant of VARIANTS) {
        it(`${variant.path} with ${variant.auth}: create, stream with finalMessage, countTokens`, async () => {
          const via = clientFor(variant);
          const params = { max_tokens: 64, system: "Be brief.", messages: [{ role: "user" as const, content: "Hi" }] };
          for (const mode of MODES) {
            const { message, usage, sent, upstreamHeaders } = await send(protocol, mode, params, {}, via);
            expect(message).toMatchObject({ type: "message", role: "assistant", model: protocol, stop_reason: "end_turn", stop_sequence: null });
            expect(message.content).toEqual([{ type: "text", text: HELLO(protocol), citations: null }]);
            expect(usage.input_tokens).toBe(promptTokensOf(countedConversation(protocol, sent)) - (usage.cache_read_input_tokens ?? 0));
            expect(usage.provider).toBe(protocol);
            expect(usage.chat_id).toBe(message.id);
            expect(usage.cost).toBeGreaterThan(0);
            // The gateway's own credentials go upstream, never the caller's key.
            expect(JSON.stringify(upstreamHeaders)).not.toContain(TEST_KEY);
          }
          const counted = await via.messages.countTokens({ model: `conv/${protocol}`, ...params });
          expectAnthropicValid("MessageTokensCount", counted, "the count");
          expectCounted(protocol, counted);
        });
      }

      for (const mode of MODES) {
        describe(mode, () => defineFeatures(protocol, mode));
      }
    });
  }

  /** What a Messages request can ask, sent to `protocol`: each test checks the answer and the upstream's own wire shape. */
  function defineFeatures(protocol: Protocol, mode: Mode) {
    it("a tool round: tool_use, then tool_result, then the answer, then a follow-up with the answer sent back", async () => {
      const question: Anthropic.MessageParam = { role: "user", content: QUESTION };
      const first = await send(protocol, mode, { max_tokens: 256, messages: [question], tools: [weatherTool], tool_choice: { type: "auto" } });
      expect(first.message.stop_reason).toBe("tool_use");
      expect(first.message.content).toHaveLength(1);
      const call = first.message.content[0] as Anthropic.ToolUseBlock;
      expect(call).toMatchObject({ type: "tool_use", name: "get_weather", input: { city: "Paris" }, caller: { type: "direct" } });
      if (CALL_ID[protocol]) expect(call.id).toBe(CALL_ID[protocol]);
      expectToolsSent(protocol, first.sent);

      // The assistant turn exactly as it came back, then the result.
      const history: Anthropic.MessageParam[] = [
        question,
        { role: "assistant", content: first.message.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: TOOL_OUTPUT }] },
      ];
      const second = await send(protocol, mode, { max_tokens: 256, messages: history, tools: [weatherTool] });
      expect(second.message.stop_reason).toBe("end_turn");
      expect(second.message.content).toEqual([{ type: "text", text: HELLO(protocol), citations: null }]);
      expect(conversationOf(protocol, second.sent)).toEqual([userTurn(protocol, QUESTION), callTurn(protocol, call.id), resultTurn(protocol, call.id)]);

      // The text answer sent back as it came (citations: null included) with a follow-up question.
      const third = await send(protocol, mode, {
        max_tokens: 256,
        messages: [...history, { role: "assistant", content: second.message.content }, { role: "user", content: "And tomorrow?" }],
        tools: [weatherTool],
      });
      expect(third.message.stop_reason).toBe("tool_use");
      expect(conversationOf(protocol, third.sent).slice(3)).toEqual([assistantText(protocol, HELLO(protocol)), userTurn(protocol, "And tomorrow?")]);
    });

    it("extended thinking: the thinking block with its signature goes back with the tool result", async () => {
      const settings = { max_tokens: 4096, thinking: { type: "enabled" as const, budget_tokens: 2048 }, tools: [weatherTool] };
      const question: Anthropic.MessageParam = { role: "user", content: QUESTION };
      const first = await send(protocol, mode, { ...settings, messages: [question] });
      expect(first.message.content.map((block) => block.type)).toEqual(["thinking", "tool_use"]);
      const thinking = first.message.content[0] as Anthropic.ThinkingBlock;
      // Anthropic and Gemini sign their thinking (per request, of one message here); OpenAI-compatible vendors do not.
      // Anthropic's signature is handed out as it is; another protocol's may carry a prefix naming its signer.
      expect(thinking).toMatchObject({ type: "thinking", thinking: THOUGHT });
      if (protocol === "anthropic") expect(thinking.signature).toBe(signatureOfTurn("anthropic", 1));
      if (protocol === "gemini" || protocol === "gemini-interactions") expect(thinking.signature.endsWith(signatureOfTurn(protocol, 1))).toBe(true);
      if (protocol === "openai-compatible") expect(thinking.signature).toBe("");
      expectThinkingSent(protocol, first.sent);
      const call = first.message.content[1] as Anthropic.ToolUseBlock;

      const second = await send(protocol, mode, {
        ...settings,
        messages: [question, { role: "assistant", content: first.message.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: TOOL_OUTPUT }] }],
      });
      // The conversation models refuse a signature they did not give: this one is theirs.
      expect(second.message.content.map((block) => block.type)).toEqual(["thinking", "text"]);
      expect((second.message.content[1] as Anthropic.TextBlock).text).toBe(HELLO(protocol));
      const turn = conversationOf(protocol, second.sent)[1];
      switch (protocol) {
        case "anthropic":
          // Byte for byte: the thinking block as the client sent it back.
          expect(JSON.stringify(turn.content[0])).toBe(JSON.stringify(thinking));
          expect(turn.content[1]).toMatchObject({ type: "tool_use", id: call.id });
          break;
        case "gemini":
          // Gemini takes no thought text back; the signature rides on the call, where Gemini put it.
          expect(turn).toEqual({ role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: signatureOfTurn("gemini", 1) }] });
          break;
        case "gemini-interactions":
          // The thought step as Google gave it (summary and signature), then the call.
          expect(turn).toEqual({
            model: [
              { type: "thought", signature: signatureOfTurn("gemini-interactions", 1), summary: [{ type: "text", text: THOUGHT }] },
              { type: "function_call", id: call.id, name: "get_weather", arguments: { city: "Paris" } },
            ],
          });
          break;
        case "openai-compatible":
          expect(turn).toMatchObject({ role: "assistant", tool_calls: [{ id: call.id }] });
          break;
      }
    });

    it("image and document input: base64 and URL images, a base64 PDF, plain text and a PDF by URL", async () => {
      const content: Anthropic.ContentBlockParam[] = [
        { type: "text", text: "What are these?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
        { type: "image", source: { type: "url", url: "https://example.com/cat.png" } },
        { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF }, title: "Report" },
        { type: "document", source: { type: "text", media_type: "text/plain", data: "Plain notes." } },
        { type: "document", source: { type: "url", url: "https://example.com/paper.pdf" } },
      ];
      const { message, sent } = await send(protocol, mode, { max_tokens: 256, messages: [{ role: "user", content }] });
      expect(message.content).toEqual([{ type: "text", text: HELLO(protocol), citations: null }]);
      expectMediaSent(protocol, conversationOf(protocol, sent)[0]);
    });

    it("stop_sequences: sent as the protocol's stop; Anthropic says which one ended the answer", async () => {
      // "from" is in every fake's answer ("Hello from <model>"); only Anthropic's fake (as the API) stops at it and says so.
      const { message, sent } = await send(protocol, mode, { max_tokens: 256, stop_sequences: ["from", "END"], messages: [{ role: "user", content: "Hi" }] });
      switch (protocol) {
        case "anthropic":
          expect(sent.stop_sequences).toEqual(["from", "END"]);
          expect(message).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "from", content: [{ type: "text", text: "Hello " }] });
          break;
        case "openai-compatible":
          expect(sent.stop).toEqual(["from", "END"]);
          expect(message).toMatchObject({ stop_reason: "end_turn", stop_sequence: null });
          break;
        case "gemini":
          expect(sent.generationConfig.stopSequences).toEqual(["from", "END"]);
          expect(message).toMatchObject({ stop_reason: "end_turn", stop_sequence: null });
          break;
        case "gemini-interactions":
          expect(sent.generation_config.stop_sequences).toEqual(["from", "END"]);
          expect(message).toMatchObject({ stop_reason: "end_turn", stop_sequence: null });
          break;
      }
    });

    it("cache_control on the system prompt, a block and a tool: unchanged to Anthropic, left out elsewhere", async () => {
      const system: Anthropic.TextBlockParam[] = [{ type: "text", text: "The whole handbook. ".repeat(20), cache_control: { type: "ephemeral", ttl: "1h" } }];
      const user: Anthropic.TextBlockParam[] = [{ type: "text", text: "Weather in Paris?", cache_control: { type: "ephemeral" } }];
      const tool: Anthropic.Tool = { ...weatherTool, cache_control: { type: "ephemeral" } };
      const { message, sent } = await send(protocol, mode, { max_tokens: 256, system, messages: [{ role: "user", content: user }], tools: [tool] });
      if (protocol === "anthropic") {
        expect(sent.system).toEqual(system);
        expect(sent.messages[0].content).toEqual(user);
        expect(sent.tools).toEqual([tool]);
        // The fake reports 3 tokens written and 2 read when it sees a breakpoint.
        expect(message.usage).toMatchObject({ cache_creation_input_tokens: 3, cache_read_input_tokens: 2 });
      } else {
        expect(JSON.stringify(sent)).not.toContain("cache_control");
        expect(JSON.stringify(sent)).toContain("The whole handbook.");
      }
    });

    it("anthropic-beta reaches Anthropic only", async () => {
      const betas = "context-1m-2025-08-07,fine-grained-tool-streaming-2025-05-14";
      const { message, upstreamHeaders } = await send(protocol, mode, { max_tokens: 64, messages: [{ role: "user", content: "Hi" }] }, { headers: { "anthropic-beta": betas } });
      expect(message.stop_reason).toBe("end_turn");
      if (protocol === "anthropic") expect(upstreamHeaders["anthropic-beta"]).toBe(betas);
      else expect(upstreamHeaders).not.toHaveProperty("anthropic-beta");
    });

    it("a top-level field the gateway does not model (container): as is to Anthropic, dropped with a warning elsewhere", async () => {
      const { message, sent, warnings } = await send(protocol, mode, { max_tokens: 64, messages: [{ role: "user", content: "Hi" }], container: "container_011CZ" } as Json as Anthropic.MessageCreateParamsNonStreaming);
      expect(message.stop_reason).toBe("end_turn");
      if (protocol === "anthropic") {
        expect(sent.container).toBe("container_011CZ");
        expect(warnings).toBe("");
      } else {
        expect(JSON.stringify(sent)).not.toContain("container");
        expect(warnings).toContain("container");
      }
    });

    it("a block type the gateway does not model (search_result): as is to Anthropic, dropped with a warning elsewhere", async () => {
      const searchResult = {
        type: "search_result" as const,
        source: "https://example.com/weather",
        title: "Weather today",
        content: [{ type: "text" as const, text: "Paris: sunny, 21 degrees." }],
        citations: { enabled: true },
      };
      const { message, sent, warnings } = await send(protocol, mode, {
        max_tokens: 64,
        messages: [{ role: "user", content: [searchResult, { type: "text", text: "Weather in Paris?" }] }],
      });
      expect(message.stop_reason).toBe("end_turn");
      if (protocol === "anthropic") {
        expect(sent.messages[0].content).toEqual([searchResult, { type: "text", text: "Weather in Paris?" }]);
        expect(warnings).toBe("");
      } else {
        expect(JSON.stringify(sent)).not.toContain("sunny");
        expect(conversationOf(protocol, sent)).toEqual([userTurn(protocol, "Weather in Paris?")]);
        expect(warnings).toContain("search_result blocks are not supported");
      }
    });
  }

  // Anthropic seals thinking its safety systems flag: the redacted_thinking block goes back as it came.
  describe("anthropic redacted thinking", () => {
    for (const mode of MODES) {
      it(`${mode}: redacted_thinking and the signed thinking go back byte for byte ahead of the tool_use`, async () => {
        const settings = { max_tokens: 4096, thinking: { type: "enabled" as const, budget_tokens: 2048 }, tools: [weatherTool] };
        const question: Anthropic.MessageParam = { role: "user", content: `${QUESTION} ${REDACTED_THINKING_TRIGGER}` };
        const first = await send("anthropic", mode, { ...settings, messages: [question] });
        expect(first.message.content.map((block) => block.type)).toEqual(["redacted_thinking", "thinking", "tool_use"]);
        expect(first.message.content[0]).toEqual({ type: "redacted_thinking", data: redactedOfTurn(1) });
        const call = first.message.content[2] as Anthropic.ToolUseBlock;
        const second = await send("anthropic", mode, {
          ...settings,
          messages: [question, { role: "assistant", content: first.message.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: TOOL_OUTPUT }] }],
        });
        expect(second.message.stop_reason).toBe("end_turn");
        // The sealed and the signed block byte for byte; the whole turn as the client sent it (the SDK's accumulator orders tool_use's keys its own way).
        expect(JSON.stringify(second.sent.messages[1].content.slice(0, 2))).toBe(JSON.stringify(first.message.content.slice(0, 2)));
        expect(second.sent.messages[1].content).toEqual(first.message.content);
      });
    }
  });

  // The wire itself, as clients other than the SDK read it.
  describe("the event stream on the wire", () => {
    for (const protocol of PROTOCOLS) {
      it(`${protocol}: each frame's event name is its type, a ping follows message_start, and the data is valid`, async () => {
        const response = await fetch(`${gateway.url}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": TEST_KEY, "anthropic-version": "2023-06-01" },
          body: JSON.stringify({ model: `conv/${protocol}`, max_tokens: 64, stream: true, messages: [{ role: "user", content: "Hi" }] }),
        });
        expect(response.status).toBe(200);
        expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
        const frames = (await response.text())
          .split("\n\n")
          .filter((frame) => frame.trim() !== "")
          .map((frame) => {
            const event = /^event: (.+)$/m.exec(frame)?.[1];
            const data = JSON.parse(/^data: (.+)$/m.exec(frame)![1]) as Json;
            return { event, data };
          });
        for (const { event, data } of frames) expect(event).toBe(data.type);
        expect(frames.slice(0, 2).map(({ event }) => event)).toEqual(["message_start", "ping"]);
        const events = frames.filter(({ event }) => event !== "ping").map(({ data }) => data as Anthropic.MessageStreamEvent);
        for (const event of events) expectAnthropicValid("RawMessageStreamEvent", event, `the ${event.type} event`);
        expectAnthropicOrder(events);
      });
    }
  });

  // Sources an answer cites: the text block's citations, streamed as citations_delta, which the SDK's accumulator gathers.
  describe("citations", () => {
    for (const mode of MODES) {
      it(`${mode}: an OpenAI-compatible url_citation is a web_search_result_location citation of the text block`, async () => {
        const { message } = await send("openai-compatible", mode, { max_tokens: 64, messages: [{ role: "user", content: "Cite it" }] }, {}, client, "conv/openai-compatible-cite");
        expect(message.content).toEqual([
          {
            type: "text",
            text: "Hello from cite",
            citations: [{ type: "web_search_result_location", url: "https://example.com/source", title: "A source", cited_text: expect.any(String), encrypted_index: expect.any(String) }],
          },
        ]);
      });
    }
  });

  describe("anthropic adaptive thinking", () => {
    for (const mode of MODES) {
      it(`${mode}: thinking adaptive with output_config.effort reaches a route that takes an effort as Anthropic's own fields`, async () => {
        const { message, sent } = await send(
          "anthropic",
          mode,
          { max_tokens: 4096, thinking: { type: "adaptive" }, output_config: { effort: "high" }, messages: [{ role: "user", content: "Think" }] } as Json as Anthropic.MessageCreateParamsNonStreaming,
          {},
          client,
          "claude-opus-4-6",
        );
        expect(message.content.map((block) => block.type)).toEqual(["thinking", "text"]);
        expect(sent.thinking).toEqual({ type: "adaptive" });
        expect(sent.output_config).toEqual({ effort: "high" });
      });
    }

    it("output_config.effort max is served as high, the router's highest level, with a warning", async () => {
      const { sent, warnings } = await send(
        "anthropic",
        "create",
        { max_tokens: 4096, thinking: { type: "adaptive" }, output_config: { effort: "max" }, messages: [{ role: "user", content: "Think" }] } as Json as Anthropic.MessageCreateParamsNonStreaming,
        {},
        client,
        "claude-opus-4-6",
      );
      expect(sent.output_config).toEqual({ effort: "high" });
      expect(warnings).toContain("output_config.effort max was served as high");
    });

    it("a field the router does not know inside thinking, output_config or tool_choice is accepted, not sent, and said in a warning", async () => {
      const { sent, warnings } = await send(
        "anthropic",
        "create",
        {
          max_tokens: 4096,
          thinking: { type: "adaptive", future_knob: 1 },
          output_config: { effort: "high", task_budget: { type: "tokens", total: 1000 } },
          messages: [{ role: "user", content: "Think" }],
        } as Json as Anthropic.MessageCreateParamsNonStreaming,
        {},
        client,
        "claude-opus-4-6",
      );
      expect(sent.output_config).toEqual({ effort: "high" });
      expect(sent.thinking).toEqual({ type: "adaptive" });
      expect(warnings).toContain("output_config.task_budget was not sent");
      expect(warnings).toContain("thinking.future_knob was not sent");
      expect(warnings).not.toContain("output_config.effort");
    });
  });

  // ---- more of the request, per protocol (created: the request side is the same streamed) ----

  for (const protocol of PROTOCOLS) {
    describe(`${protocol}: the rest of the request`, () => {
      it("tool_choice any, tool by name, none, and disable_parallel_tool_use, in the protocol's words", async () => {
        const ask = (tool_choice: Anthropic.ToolChoice) => send(protocol, "create", { max_tokens: 256, messages: [{ role: "user", content: QUESTION }], tools: [weatherTool], tool_choice });
        const any = await ask({ type: "any" });
        const named = await ask({ type: "tool", name: "get_weather" });
        const none = await ask({ type: "none" });
        const single = await ask({ type: "auto", disable_parallel_tool_use: true });
        expect(any.message.stop_reason).toBe("tool_use");
        switch (protocol) {
          case "openai-compatible":
            expect([any, named, none, single].map(({ sent }) => sent.tool_choice)).toEqual(["required", { type: "function", function: { name: "get_weather" } }, "none", "auto"]);
            expect(single.sent.parallel_tool_calls).toBe(false);
            break;
          case "anthropic":
            expect([any, named, none, single].map(({ sent }) => sent.tool_choice)).toEqual([
              { type: "any" },
              { type: "tool", name: "get_weather" },
              { type: "none" },
              { type: "auto", disable_parallel_tool_use: true },
            ]);
            break;
          case "gemini":
            expect([any, named, none].map(({ sent }) => sent.toolConfig.functionCallingConfig)).toEqual([
              { mode: "ANY" },
              { mode: "ANY", allowedFunctionNames: ["get_weather"] },
              { mode: "NONE" },
            ]);
            // Gemini has no switch for parallel calls: said, not silently lost.
            expect(single.warnings).toContain("parallel_tool_calls");
            break;
          case "gemini-interactions":
            expect([any, named, none].map(({ sent }) => sent.generation_config.tool_choice)).toEqual(["any", { allowed_tools: { mode: "any", tools: ["get_weather"] } }, "none"]);
            expect(single.warnings).toContain("parallel_tool_calls");
            break;
        }
      });

      it("web search (a server tool): Anthropic's tool as is, Gemini's googleSearch, a 400 naming tools where the protocol has none", async () => {
        const webSearch = { type: "web_search_20250305", name: "web_search", max_uses: 3 } as const;
        const params = { max_tokens: 256, tools: [webSearch], messages: [{ role: "user" as const, content: "News?" }] };
        if (!SEARCHES_THE_WEB.includes(protocol)) {
          const before = upstreams[protocol].requests.length;
          const error = (await client.messages.create({ model: `conv/${protocol}`, ...params }).catch((caught: unknown) => caught)) as APIError;
          expect(error.status).toBe(400);
          expectAnthropicValid("ErrorResponse", error.error, "the error");
          expect(error.error).toMatchObject({ type: "error", error: { type: "invalid_request_error", param: "tools", code: "capability_not_supported" } });
          expect(upstreams[protocol].requests.length).toBe(before);
          return;
        }
        const { sent, warnings } = await send(protocol, "create", params);
        if (protocol === "anthropic") expect(sent.tools).toEqual([webSearch]);
        if (protocol === "gemini") {
          expect(sent.tools).toEqual([{ googleSearch: {} }]);
          expect(warnings).toContain("max_uses");
        }
      });

      it("a tool_result with blocks and is_error", async () => {
        const question: Anthropic.MessageParam = { role: "user", content: QUESTION };
        const first = await send(protocol, "create", { max_tokens: 256, messages: [question], tools: [weatherTool] });
        const call = first.message.content.find((block) => block.type === "tool_use")!;
        const result: Anthropic.ToolResultBlockParam = {
          type: "tool_result",
          tool_use_id: call.id,
          is_error: true,
          content: [
            { type: "text", text: "Service down." },
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
          ],
        };
        const second = await send(protocol, "create", { max_tokens: 256, messages: [question, { role: "assistant", content: first.message.content }, { role: "user", content: [result] }], tools: [weatherTool] });
        // (The OpenAI fake calls the tool again when the last message is not a tool message, as here.)
        if (protocol !== "openai-compatible") expect(second.message.stop_reason).toBe("end_turn");
        const sent = conversationOf(protocol, second.sent).slice(2);
        switch (protocol) {
          case "anthropic":
            expect(sent).toEqual([{ role: "user", content: [result] }]);
            break;
          case "openai-compatible":
            // Tool messages are text only: the text, then the image in a user message after it.
            expect(sent[0]).toMatchObject({ role: "tool", tool_call_id: call.id });
            expect(JSON.stringify(sent[0].content)).toContain("Service down.");
            expect(JSON.stringify(sent.slice(1))).toContain(PNG);
            break;
          case "gemini":
            expect(sent[0].role).toBe("user");
            expect(sent[0].parts[0].functionResponse).toMatchObject({ name: "get_weather" });
            expect(JSON.stringify(sent[0])).toContain("Service down.");
            expect(JSON.stringify(sent[0])).toContain(PNG);
            break;
          case "gemini-interactions":
            // The result as content, text and image, marked as an error.
            expect(sent).toEqual([
              {
                results: [
                  {
                    type: "function_result",
                    call_id: call.id,
                    name: "get_weather",
                    result: [
                      { type: "text", text: "Service down." },
                      { type: "image", data: PNG, mime_type: "image/png" },
                    ],
                    is_error: true,
                  },
                ],
              },
            ]);
            break;
        }
      });

      it("metadata.user_id is the protocol's end-user field; a system turn inside messages is a system instruction", async () => {
        const { sent } = await send(protocol, "create", {
          max_tokens: 64,
          metadata: { user_id: "user-42" },
          messages: [
            { role: "system", content: "Answer in French." } as unknown as Anthropic.MessageParam,
            { role: "user", content: "Hi" },
          ],
        });
        switch (protocol) {
          case "openai-compatible":
            expect(sent.user).toBe("user-42");
            expect(sent.messages).toEqual([
              { role: "system", content: "Answer in French." },
              { role: "user", content: "Hi" },
            ]);
            break;
          case "anthropic":
            expect(sent.metadata).toEqual({ user_id: "user-42" });
            // The API takes system text at the top level only (the fake refuses a system role, as the API does).
            expect(JSON.stringify(sent.system)).toContain("Answer in French.");
            expect(sent.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Hi" }] }]);
            break;
          case "gemini":
            expect(sent.systemInstruction).toEqual({ parts: [{ text: "Answer in French." }] });
            expect(sent.contents).toEqual([{ role: "user", parts: [{ text: "Hi" }] }]);
            break;
          case "gemini-interactions":
            expect(sent.system_instruction).toBe("Answer in French.");
            expect(sent.input).toEqual([{ type: "user_input", content: [{ type: "text", text: "Hi" }] }]);
            break;
        }
      });

      it("countTokens counts the system prompt and tools too (exact where the upstream counts)", async () => {
        const params = { model: `conv/${protocol}`, system: "Be brief.", messages: [{ role: "user" as const, content: QUESTION }] };
        const bare = await client.messages.countTokens(params);
        const withTools = await client.messages.countTokens({ ...params, tools: [weatherTool] });
        expectAnthropicValid("MessageTokensCount", withTools, "the count");
        expect(withTools.input_tokens).toBeGreaterThan(bare.input_tokens);
        expectCounted(protocol, withTools);
      });

      it("an upstream that fails before answering: the error in Anthropic's envelope with the spec's fields", async () => {
        const params = { model: `conv/${protocol}-down`, max_tokens: 64, messages: [{ role: "user" as const, content: "Hi" }] };
        for (const attempt of [() => client.messages.create(params), () => client.messages.stream(params).finalMessage()]) {
          const error = (await attempt().catch((caught: unknown) => caught)) as APIError;
          expect(error).toBeInstanceOf(APIError);
          expect(error.status).toBeGreaterThanOrEqual(500);
          expectAnthropicValid("ErrorResponse", error.error, "the error");
          expect((error.error as Json).error).toMatchObject({ message: expect.any(String), type: expect.any(String), param: null, code: expect.any(String) });
        }
      });

      it("stream: a failure after the answer started is Anthropic's error event, which the SDK raises", async () => {
        const params = { model: `conv/${protocol}-cut`, max_tokens: 64, messages: [{ role: "user" as const, content: "Hi" }] };
        const stream = client.messages.stream(params);
        const events: Anthropic.MessageStreamEvent[] = [];
        const error = await (async () => {
          for await (const event of stream) events.push(event);
        })().catch((caught: unknown) => caught as APIError);
        expect(error).toBeInstanceOf(APIError);
        expectAnthropicValid("ErrorResponse", (error as APIError).error, "the error event");
        // What came before the failure was valid and in order; the error names the request (the message's id).
        expect(events[0].type).toBe("message_start");
        expect((error as APIError).error).toMatchObject({ type: "error", request_id: (events[0] as Anthropic.RawMessageStartEvent).message.id });
        for (const event of events) expectAnthropicValid("RawMessageStreamEvent", event, `the ${event.type} event`);
      });
    });
  }

  // ---- the router's own fields, as in chat completions ----

  describe("router fields", () => {
    for (const mode of MODES) {
      it(`${mode}: the :thinking suffix turns thinking on; models falls back to the next model when the first fails`, async () => {
        const thinking = await send("gemini", mode, { max_tokens: 4096, messages: [{ role: "user", content: "Hi" }] }, {}, client, "conv/gemini:thinking");
        expect(thinking.message.content.map((block) => block.type)).toEqual(["thinking", "text"]);
        expect(thinking.sent.generationConfig.thinkingConfig).toMatchObject({ includeThoughts: true });

        const before = upstreams.anthropic.requests.length;
        const params = { model: "conv/openai-compatible-down", models: ["conv/anthropic"], max_tokens: 64, messages: [{ role: "user" as const, content: "Hi" }] } as Anthropic.MessageCreateParamsNonStreaming;
        const { data: message, response } = await (mode === "create"
          ? client.messages.create(params).withResponse()
          : (async () => {
              const stream = client.messages.stream(params);
              const final = await stream.finalMessage();
              return { data: JSON.parse(JSON.stringify(final)) as Anthropic.Message, response: (await stream.withResponse()).response };
            })());
        expectAnthropicValid("Message", message, "the message");
        expect(message.model).toBe("anthropic");
        expect(message.content).toEqual([{ type: "text", text: HELLO("anthropic"), citations: null }]);
        expect(upstreams.anthropic.requests.length).toBe(before + 1);
        expect(response.status).toBe(200);
      });
    }
  });

  // ---- errors, in Anthropic's envelope with the spec's fields ----

  describe("errors", () => {
    const body = { model: "conv/anthropic", max_tokens: 64, messages: [{ role: "user", content: "Hi" }] };

    for (const path of ["/v1", "/api/v1"] as const) {
      it(`${path}/messages without a key: 401 missing_api_key`, async () => {
        const response = await fetch(`${gateway.url}${path}/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        expect(response.status).toBe(401);
        const answer = await response.json();
        expectAnthropicValid("ErrorResponse", answer, "the error");
        const requestId = response.headers.get("request-id");
        expect(requestId).toBe(response.headers.get("x-request-id"));
        // Both headers these routes read a key from are named.
        const message = "No API key provided. Send x-api-key: <API_KEY> or Authorization: Bearer <API_KEY>.";
        expect(answer).toEqual({ type: "error", error: { message, type: "invalid_request_error", param: null, code: "missing_api_key" }, request_id: requestId });
      });
    }

    for (const variant of VARIANTS) {
      it(`${variant.path} with a wrong ${variant.auth} key: 401 invalid_api_key, and nothing sent upstream`, async () => {
        const before = upstreams.anthropic.requests.length;
        const error = await clientFor(variant, "sk-wrong-key")
          .messages.create(body as Anthropic.MessageCreateParamsNonStreaming)
          .catch((caught: unknown) => caught as APIError);
        expect(error).toBeInstanceOf(APIError);
        expect(error).toMatchObject({ status: 401, type: "invalid_request_error" });
        expectAnthropicValid("ErrorResponse", (error as APIError).error, "the error");
        // The SDK reads the request id from the header; the body has it too.
        expect((error as APIError).requestID).toMatch(/\S/);
        expect((error as APIError).error).toEqual({
          type: "error",
          error: { message: "Invalid API key.", type: "invalid_request_error", param: null, code: "invalid_api_key" },
          request_id: (error as APIError).requestID,
        });
        expect(upstreams.anthropic.requests.length).toBe(before);
      });
    }

    it("x-api-key on /api/v1/chat/completions is no key there: the missing-key 401 in the spec's shape", async () => {
      const response = await fetch(`${gateway.apiUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": TEST_KEY },
        body: JSON.stringify({ model: "conv/anthropic", messages: [{ role: "user", content: "Hi" }] }),
      });
      expect(response.status).toBe(401);
      const message = "No API key provided. Send Authorization: Bearer <API_KEY>.";
      expect(await response.json()).toEqual({ error: { message, type: "invalid_request_error", param: null, code: "missing_api_key" } });
    });

    for (const mode of MODES) {
      it(`${mode}: a field out of range is a 400 naming it`, async () => {
        const bad = { ...body, temperature: 2 } as Anthropic.MessageCreateParamsNonStreaming;
        const error = await (mode === "create" ? client.messages.create(bad) : client.messages.stream(bad).finalMessage()).catch((caught: unknown) => caught as APIError);
        expect(error).toBeInstanceOf(APIError);
        expect((error as APIError).status).toBe(400);
        expectAnthropicValid("ErrorResponse", (error as APIError).error, "the error");
        expect((error as APIError).error).toMatchObject({ type: "error", error: { type: "invalid_request_error", param: "temperature", code: expect.any(String), message: expect.any(String) } });
      });
    }

    it("a body that cannot be read: 400 in the envelope, with the request id in the body and the request-id header", async () => {
      const response = await fetch(`${gateway.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": TEST_KEY }, body: "{not json" });
      expect(response.status).toBe(400);
      const answer = await response.json();
      expectAnthropicValid("ErrorResponse", answer, "the error");
      const requestId = response.headers.get("request-id");
      expect(requestId).toMatch(/\S/);
      expect(requestId).toBe(response.headers.get("x-request-id"));
      expect(answer).toMatchObject({ type: "error", error: { type: "invalid_request_error" }, request_id: requestId });
    });

    it("thinking's budget must be below max_tokens: a 400 naming thinking.budget_tokens", async () => {
      const error = await client.messages
        .create({ ...body, max_tokens: 2000, thinking: { type: "enabled", budget_tokens: 2048 } } as Anthropic.MessageCreateParamsNonStreaming)
        .catch((caught: unknown) => caught as APIError);
      expect((error as APIError).status).toBe(400);
      expect((error as APIError).error).toMatchObject({ type: "error", error: { type: "invalid_request_error", param: "thinking.budget_tokens" } });
    });
  });

  // ---- bare model names: Anthropic's SDK users send `claude-...` with no provider ----

  describe("bare model names", () => {
    const ask = (model: string, mode: Mode = "create") => {
      const params = { model, max_tokens: 64, messages: [{ role: "user" as const, content: "Hi" }] };
      return mode === "create" ? client.messages.create(params) : client.messages.stream(params).finalMessage();
    };

    for (const mode of MODES) {
      it(`${mode}: a name one catalogue model has as its bare name is that model`, async () => {
        const before = upstreams.anthropic.requests.length;
        const message = await ask("claude-sonnet-4-5", mode);
        expectAnthropicValid("Message", JSON.parse(JSON.stringify(message)), "the message");
        // The model that served, as Anthropic names it: bare.
        expect(message.model).toBe("claude-sonnet-4-5");
        expect(upstreams.anthropic.requests.slice(before).map((request) => request.body.model)).toEqual(["claude-conversation"]);
      });
    }

    it("countTokens resolves the bare name too", async () => {
      const counted = await client.messages.countTokens({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "Hi" }] });
      expectAnthropicValid("MessageTokensCount", counted, "the count");
      expect(counted).toMatchObject({ exact: true });
    });

    it("a name several models share is a 400 listing them", async () => {
      const error = (await ask("claude-twin").catch((caught: unknown) => caught)) as APIError;
      expect(error.status).toBe(400);
      expectAnthropicValid("ErrorResponse", error.error, "the error");
      expect(error.error).toMatchObject({ type: "error", error: { type: "invalid_request_error", code: "ambiguous_model", param: "model" } });
      expect((error.error as Json).error.message).toContain("vendor-a/claude-twin, vendor-b/claude-twin");
    });

    it("an unknown name is a 404 model_not_found", async () => {
      const error = (await ask("claude-unknown-9").catch((caught: unknown) => caught)) as APIError;
      expect(error.status).toBe(404);
      expectAnthropicValid("ErrorResponse", error.error, "the error");
      expect(error.error).toMatchObject({ type: "error", error: { code: "model_not_found", param: "model" } });
    });

    it("the full id works as well, and a bare name is no id in chat completions", async () => {
      const message = await ask("anthropic/claude-sonnet-4-5");
      expect(message.model).toBe("claude-sonnet-4-5");
      const response = await fetch(`${gateway.apiUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${TEST_KEY}` },
        body: JSON.stringify({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "Hi" }] }),
      });
      expect(response.status).toBe(404);
    });
  });

  /** Exact (the upstream's count endpoint) on Anthropic and Gemini, an estimate on OpenAI-compatible and Gemini Interactions routes. */
  function expectCounted(protocol: Protocol, counted: Anthropic.MessageTokensCount) {
    const exact = (counted as Anthropic.MessageTokensCount & { exact: boolean }).exact;
    if (!COUNTS_TOKENS.includes(protocol)) {
      expect(exact).toBe(false);
      expect(counted.input_tokens).toBeGreaterThan(0);
      return;
    }
    expect(exact).toBe(true);
    const upstream = upstreams[protocol];
    const request = upstream.requests.at(-1)!;
    expect(request.path).toMatch(/count_?tokens/i);
    expect(counted.input_tokens).toBe(protocol === "anthropic" ? FAKE_COUNTS.anthropic(request.body) : FAKE_COUNTS.gemini(request.body.generateContentRequest));
  }
});

// ---- the conversation each upstream received, in its own wire shape ----

/** The messages (OpenAI, Anthropic), contents (Gemini) or steps as turns (Gemini Interactions) of a request. */
function conversationOf(protocol: Protocol, sent: Json): Json[] {
  if (protocol === "gemini-interactions") return turnsOf(sent.input);
  return protocol === "gemini" ? sent.contents : sent.messages;
}

function userTurn(protocol: Protocol, text: string): Json {
  switch (protocol) {
    case "openai-compatible":
      return { role: "user", content: text };
    case "anthropic":
      return { role: "user", content: [{ type: "text", text }] };
    case "gemini":
      return { role: "user", parts: [{ text }] };
    case "gemini-interactions":
      return { type: "user_input", content: [{ type: "text", text }] };
  }
}

function assistantText(protocol: Protocol, text: string): Json {
  switch (protocol) {
    case "openai-compatible":
      return { role: "assistant", content: text };
    case "anthropic":
      return { role: "assistant", content: [{ type: "text", text }] };
    case "gemini":
      return { role: "model", parts: [{ text }] };
    case "gemini-interactions":
      return { model: [{ type: "model_output", content: [{ type: "text", text }] }] };
  }
}

/** The assistant's call as sent back, without thinking. */
function callTurn(protocol: Protocol, callId: string): Json {
  switch (protocol) {
    case "openai-compatible":
      return { role: "assistant", content: null, tool_calls: [{ id: callId, type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] };
    case "anthropic":
      // The block as the client sent it back (its `caller` too): Anthropic gets the original.
      return { role: "assistant", content: [{ type: "tool_use", id: callId, name: "get_weather", input: { city: "Paris" }, caller: { type: "direct" } }] };
    case "gemini":
      // Gemini 3 refuses a function call without a signature: unsigned, it gets Gemini's documented stand-in.
      return { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "skip_thought_signature_validator" }] };
    case "gemini-interactions":
      // Likewise: Google's stand-in as the thought before the call.
      return { model: [{ type: "thought", signature: "skip_thought_signature_validator" }, { type: "function_call", id: callId, name: "get_weather", arguments: { city: "Paris" } }] };
  }
}

function resultTurn(protocol: Protocol, callId: string): Json {
  switch (protocol) {
    case "openai-compatible":
      return { role: "tool", tool_call_id: callId, content: TOOL_OUTPUT };
    case "anthropic":
      return { role: "user", content: [{ type: "tool_result", tool_use_id: callId, content: TOOL_OUTPUT }] };
    case "gemini":
      return { role: "user", parts: [{ functionResponse: { name: "get_weather", response: JSON.parse(TOOL_OUTPUT) } }] };
    case "gemini-interactions":
      return { results: [{ type: "function_result", call_id: callId, name: "get_weather", result: TOOL_OUTPUT }] };
  }
}

function expectToolsSent(protocol: Protocol, sent: Json) {
  const { name, description, input_schema } = weatherTool;
  switch (protocol) {
    case "openai-compatible":
      expect(sent.tools).toEqual([{ type: "function", function: { name, description, parameters: input_schema } }]);
      expect(sent.tool_choice).toBe("auto");
      return;
    case "anthropic":
      expect(sent.tools).toEqual([weatherTool]);
      expect(sent.tool_choice).toEqual({ type: "auto" });
      return;
    case "gemini":
      expect(sent.tools).toEqual([{ functionDeclarations: [{ name, description, parametersJsonSchema: input_schema }] }]);
      expect(sent.toolConfig).toEqual({ functionCallingConfig: { mode: "AUTO" } });
      return;
    case "gemini-interactions":
      expect(sent.tools).toEqual([{ type: "function", name, description, parameters: input_schema }]);
      expect(sent.generation_config.tool_choice).toBe("auto");
      return;
  }
}

/** Thinking on a budget of 2048 of max_tokens 4096, in the protocol's words. */
function expectThinkingSent(protocol: Protocol, sent: Json) {
  switch (protocol) {
    case "openai-compatible":
      expect(sent.reasoning_effort).toBeTruthy();
      return;
    case "anthropic":
      expect(sent).toMatchObject({ max_tokens: 4096, thinking: { type: "enabled", budget_tokens: 2048 } });
      return;
    case "gemini":
      expect(sent.generationConfig).toMatchObject({ maxOutputTokens: 4096, thinkingConfig: { includeThoughts: true } });
      return;
    case "gemini-interactions":
      // A budget of half max_tokens is the medium level.
      expect(sent.generation_config).toMatchObject({ max_output_tokens: 4096, thinking_level: "medium", thinking_summaries: "auto" });
      return;
  }
}

/** The user turn of the media test, in the protocol's own blocks. */
function expectMediaSent(protocol: Protocol, turn: Json) {
  const notes = Buffer.from("Plain notes.").toString("base64");
  switch (protocol) {
    case "anthropic":
      expect(turn.content).toEqual([
        { type: "text", text: "What are these?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
        { type: "image", source: { type: "url", url: "https://example.com/cat.png" } },
        { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF }, title: "Report" },
        { type: "document", source: { type: "text", media_type: "text/plain", data: "Plain notes." } },
        { type: "document", source: { type: "url", url: "https://example.com/paper.pdf" } },
      ]);
      return;
    case "gemini":
      expect(turn.parts).toEqual([
        { text: "What are these?" },
        { inlineData: { mimeType: "image/png", data: PNG } },
        { fileData: expect.objectContaining({ fileUri: "https://example.com/cat.png" }) },
        { inlineData: { mimeType: "application/pdf", data: PDF } },
        { inlineData: { mimeType: "text/plain", data: notes } },
        { fileData: expect.objectContaining({ fileUri: "https://example.com/paper.pdf" }) },
      ]);
      return;
    case "gemini-interactions":
      expect(turn.content).toEqual([
        { type: "text", text: "What are these?" },
        { type: "image", data: PNG, mime_type: "image/png" },
        { type: "image", uri: "https://example.com/cat.png", mime_type: "image/png" },
        { type: "document", data: PDF, mime_type: "application/pdf" },
        // Plain text is text: Interactions documents are PDFs and office files.
        { type: "text", text: "Plain notes." },
        { type: "document", uri: "https://example.com/paper.pdf", mime_type: "application/pdf" },
      ]);
      return;
    case "openai-compatible":
      expect(turn.content).toEqual([
        { type: "text", text: "What are these?" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
        { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
        { type: "file", file: { file_data: `data:application/pdf;base64,${PDF}` } },
        { type: "file", file: { file_data: `data:text/plain;base64,${notes}` } },
        // The protocol has no file URL: OpenRouter-style vendors take one as file_data.
        { type: "file", file: { file_data: "https://example.com/paper.pdf" } },
      ]);
      return;
  }
}

function pick(object: object, fields: string[]): Json {
  return Object.fromEntries(Object.entries(object).filter(([field]) => fields.includes(field)));
}

/** message_start first, each block started, given its deltas and stopped in index order, then message_delta and message_stop. */
function expectAnthropicOrder(events: Anthropic.MessageStreamEvent[]) {
  expect(events[0].type).toBe("message_start");
  expect(events.at(-2)!.type).toBe("message_delta");
  expect(events.at(-1)!.type).toBe("message_stop");
  let open: number | undefined;
  let next = 0;
  for (const event of events.slice(1, -2)) {
    switch (event.type) {
      case "content_block_start":
        expect(open).toBeUndefined();
        expect(event.index).toBe(next++);
        open = event.index;
        break;
      case "content_block_delta":
        expect(event.index).toBe(open);
        break;
      case "content_block_stop":
        expect(event.index).toBe(open);
        open = undefined;
        break;
      default:
        throw new Error(`${event.type} inside the content blocks`);
    }
  }
  expect(open).toBeUndefined();
}
