// The Messages API on every provider protocol, through the official
// @anthropic-ai/sdk: messages.create, messages.stream() with finalMessage()
// (the SDK's own accumulator has to accept every stream), and countTokens,
// against the gateway on the fake OpenAI-compatible, Anthropic and Gemini
// upstreams, which refuse what the real APIs refuse. Both paths (/v1 and
// /api/v1) and both auth headers (x-api-key: the SDK's apiKey; Bearer: its
// authToken), in-process and split (the core over Connect/HTTP2).
//
// Each feature shows what the upstream received, in its own wire shape: a tool
// round (tool_use, tool_result, the answer), extended thinking with its
// signature sent back (byte for byte to Anthropic), image and document input,
// stop sequences, cache breakpoints, betas, and what the gateway does not model
// (a top-level field, a block type): sent as is to Anthropic, dropped with a
// warning elsewhere. Errors come in Anthropic's envelope with the spec's
// fields, and bare model names (what Anthropic's SDK users send) resolve
// through the catalogue. Every Message, stream event, count and error body is
// checked against the SDK's types (anthropic-schema.ts).
import Anthropic, { APIError } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectAnthropicValid } from "../support/anthropic-schema.ts";
import { promptTokensOf, signatureOfTurn } from "../support/conversation-model.ts";
import { FAKE_COUNTS } from "../support/fake-count-tokens.ts";
import type { FakeUpstream } from "../support/fake-openai-upstream.ts";
import { startGateway, TEST_KEY, type Gateway } from "../support/harness.ts";
import { closeProtocolUpstreams, countedConversation, protocolConfigDocument, PROTOCOLS, startProtocolUpstreams, urlsOf, type Protocol } from "../support/protocol-upstreams.ts";
import { parseConfig } from "../../core/config/load.ts";

type Json = Record<string, any>;
type Mode = "create" | "stream";
const MODES: Mode[] = ["create", "stream"];

const UPSTREAM_MODEL: Record<Protocol, string> = { "openai-compatible": "gpt-conversation", anthropic: "claude-conversation", gemini: "gemini-3-conversation" };
const HELLO = (protocol: Protocol) => `Hello from ${UPSTREAM_MODEL[protocol]}`;
/** The ids each fake gives its tool call; Gemini sends none, so the router makes one. */
const CALL_ID: Partial<Record<Protocol, string>> = { "openai-compatible": "call_fake1", anthropic: "toolu_01FakeCall" };
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
  const document = protocolConfigDocument(urlsOf(upstreams), "conv", UPSTREAM_MODEL);
  const anthropicModel = document.models.find((model) => model.id === "conv/anthropic")!;
  const renamed = (id: string) => ({ ...anthropicModel, id, name: id });
  document.models.push(renamed("anthropic/claude-sonnet-4-5"), renamed("vendor-a/claude-twin"), renamed("vendor-b/claude-twin"));
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
  async function send(protocol: Protocol, mode: Mode, params: Omit<Anthropic.MessageCreateParamsNonStreaming, "model"> & Json, options: Anthropic.RequestOptions = {}, via = client): Promise<Sent> {
    const upstream = upstreams[protocol];
    const before = upstream.requests.length;
    const body = { model: `conv/${protocol}`, ...params } as Anthropic.MessageCreateParamsNonStreaming;
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
    });
  }

  /** Exact (the upstream's count endpoint) on Anthropic and Gemini, an estimate on OpenAI-compatible routes. */
  function expectCounted(protocol: Protocol, counted: Anthropic.MessageTokensCount) {
    const exact = (counted as Anthropic.MessageTokensCount & { exact: boolean }).exact;
    if (protocol === "openai-compatible") {
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
