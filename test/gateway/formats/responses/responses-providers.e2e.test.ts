// The Responses API on every provider protocol: the official openai SDK's
// responses.create and responses.stream against the gateway on the fake
// OpenAI-compatible, Anthropic, Gemini and Gemini Interactions upstreams, which refuse what the
// real APIs refuse. A three-turn conversation continued through
// previous_response_id alone, with a function-call round in it, shows on each
// turn what the upstream received: the replayed history in the upstream's own
// wire shape, the thinking signatures of earlier turns sent back byte for
// byte, and the replayed history charged as the prompt tokens the upstream
// counted (the fakes' "conversation" models count them from the request), the
// account paying exactly the answers' costs. Background answers on each
// protocol are polled to completion, listed, continued, deleted and cancelled.
// Every response and every stream event is checked against OpenAI's schema.
// All of it runs in-process and split (the core over Connect/HTTP2), so the
// signatures and sealed reasoning also survive the core's wire.
import OpenAI, { type APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { promptTokensOf, redactedOfTurn, signatureOfTurn, type Signer } from "../../../support/conversation-model.ts";
import { femtosOf, nanosRoundedUp } from "../../../support/exact-money.ts";
import { REDACTED_THINKING_TRIGGER } from "../../../support/fake-anthropic-upstream.ts";
import { FAKE_CALL_IDS, turnsOf } from "../../../support/fake-gemini-interactions-upstream.ts";
import type { FakeUpstream } from "../../../support/fake-openai-upstream.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { expectValid } from "../../../support/openai-schema.ts";
import {
  closeProtocolUpstreams,
  costFemtos,
  countedConversation,
  lastSent,
  protocolConfig,
  PROTOCOLS,
  startProtocolUpstreams,
  urlsOf,
  type Protocol,
} from "../../../support/protocol-upstreams.ts";

type Json = Record<string, any>;
type Mode = "create" | "stream";
/** How long vi.waitFor polls for a background answer to reach a status. */
const COMPLETED_WITHIN = { timeout: 10_000, interval: 20 };

const UPSTREAM_MODEL: Record<Protocol, string> = {
  "openai-compatible": "gpt-conversation",
  anthropic: "claude-conversation",
  gemini: "gemini-3-conversation",
  "gemini-interactions": "gemini-3-conversation",
};
/** The call id each fake gives its tool call; Gemini sends none, so the router makes one. */
const CALL_ID: Partial<Record<Protocol, string>> = { "openai-compatible": "call_fake1", anthropic: "toolu_01FakeCall", "gemini-interactions": FAKE_CALL_IDS[0] };
const THOUGHT = "Let me think.";
const QUESTION = "Weather in Paris?";
const FOLLOW_UP = "And tomorrow?";
const TOOL_OUTPUT = '{"celsius":21}';

const weatherTool: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "Current weather of a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};
/** What every turn asks besides its input: the tool, and thinking (a budget of 80% of 4096 on Anthropic and Gemini, the high level on Gemini Interactions). */
const SETTINGS = { tools: [weatherTool], reasoning: { effort: "high" as const }, max_output_tokens: 4096 };

/** The router's usage fields, which the SDK's types do not know. */
type RouterUsage = OpenAI.Responses.ResponseUsage & { cost: number; chat_id: string; provider: string };

describe.each([{ split: false }, { split: true }])("responses on every provider protocol (split: $split)", ({ split }) => {
  let upstreams: Record<Protocol, FakeUpstream>;
  let gateway: Gateway;
  let client: OpenAI;

  beforeAll(async () => {
    upstreams = await startProtocolUpstreams();
    gateway = await startGateway(protocolConfig(urlsOf(upstreams), "conv", UPSTREAM_MODEL, [{ suffix: "hang", upstreamModel: "hang" }]), { split });
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    if (upstreams) await closeProtocolUpstreams(upstreams);
  });

  /** org_test's balance in nano-dollars, once every settlement is in. */
  async function balance(): Promise<bigint> {
    await gateway.core.accounts.idle();
    return gateway.core.accounts.stores.credits.balance("org_test");
  }

  /** One request through the SDK, created or streamed; the answer and the one upstream request it caused. */
  async function send(protocol: Protocol, mode: Mode, params: Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, "model">) {
    const upstream = upstreams[protocol];
    const before = upstream.requests.length;
    const body = { model: `conv/${protocol}`, ...params };
    const response = mode === "create" ? await created(body) : await streamed(body);
    expect(upstream.requests.length - before).toBe(1);
    return { response, sent: lastSent(upstreams, protocol), raw: upstream.requests.at(-1)!.body };
  }

  async function created(body: OpenAI.Responses.ResponseCreateParamsNonStreaming) {
    const response = await client.responses.create(body);
    expectValid("Response", response, "response");
    return response;
  }

  /** Streamed: every event valid and numbered from 0, the last one response.completed with the response finalResponse gives. */
  async function streamed(body: OpenAI.Responses.ResponseCreateParamsNonStreaming) {
    const stream = client.responses.stream({ ...body, stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    for (const event of events) expectValid("ResponseStreamEvent", event, "stream event");
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const last = events.at(-1)!;
    expect(last.type).toBe("response.completed");
    expect((last as OpenAI.Responses.ResponseCompletedEvent).response.id).toBe(final.id);
    const response = JSON.parse(JSON.stringify(final)) as OpenAI.Responses.Response;
    expectValid("Response", response, "final response");
    return response;
  }

  for (const protocol of PROTOCOLS) {
    describe(protocol, () => {
      for (const mode of ["create", "stream"] as const) {
        describe(mode, () => {
          it("answers a string input: one message item, usage with the cost of what the upstream counted", async () => {
            const { response, sent } = await send(protocol, mode, { input: "Hi", instructions: "Be brief." });
            expect(response.status).toBe("completed");
            expect(response.output).toHaveLength(1);
            expect(response.output[0]).toMatchObject({ type: "message", role: "assistant", status: "completed" });
            expect(outputText(response)).toBe(`Hello from ${UPSTREAM_MODEL[protocol]}`);
            expect((response.usage as RouterUsage).provider).toBe(protocol);
            expect((response.usage as RouterUsage).chat_id).toBe(response.id);
            expectChargedAsCounted(protocol, response, sent, { reasoning: false });
          });

          it("continues three turns through previous_response_id alone, across a function-call round", async () => {
            const balanceBefore = await balance();
            // Turn 1: the model thinks, then calls the tool.
            const first = await send(protocol, mode, { ...SETTINGS, input: QUESTION });
            expect(first.response.output.map((item) => item.type)).toEqual(["reasoning", "function_call"]);
            const call = first.response.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
            expect(call).toMatchObject({ name: "get_weather", status: "completed" });
            expect(JSON.parse(call.arguments)).toEqual({ city: "Paris" });
            if (CALL_ID[protocol]) expect(call.call_id).toBe(CALL_ID[protocol]);
            expectReasoningItem(protocol, first.response, 1);
            expect(conversationOf(protocol, first.sent)).toEqual([userTurn(protocol, QUESTION)]);
            await gateway.core.conversations.idle();

            // Turn 2: only the tool's output; the call and its thinking come from the stored turn.
            const second = await send(protocol, mode, {
              ...SETTINGS,
              previous_response_id: first.response.id,
              input: [{ type: "function_call_output", call_id: call.call_id, output: TOOL_OUTPUT }],
            });
            expect(second.response.previous_response_id).toBe(first.response.id);
            expect(outputText(second.response)).toBe(`Hello from ${UPSTREAM_MODEL[protocol]}`);
            expectReasoningItem(protocol, second.response, 3);
            const roundTrip = [userTurn(protocol, QUESTION), callTurn(protocol, call.call_id), resultTurn(protocol, call.call_id)];
            expect(conversationOf(protocol, second.sent)).toEqual(roundTrip);
            await gateway.core.conversations.idle();

            // Turn 3: a follow-up question; both earlier turns are replayed, each with its own signature.
            const third = await send(protocol, mode, { ...SETTINGS, previous_response_id: second.response.id, input: FOLLOW_UP });
            expect(third.response.status).toBe("completed");
            expect(conversationOf(protocol, third.sent)).toEqual([...roundTrip, answerTurn(protocol), userTurn(protocol, FOLLOW_UP)]);
            // Gemini Interactions keeps the conversation: each continuation names the interaction before it and sends only its own input.
            if (protocol === "gemini-interactions") {
              expect([second.raw, third.raw].map((raw) => [raw.previous_interaction_id, turnsOf(raw.input).length])).toEqual([
                [expect.stringMatching(/^v1_fake-stored-/), 1],
                [expect.stringMatching(/^v1_fake-stored-/), 1],
              ]);
            }

            // The replayed history is the prompt the upstream counted, and charged as such: each turn dearer than the last.
            const answers = [first, second, third];
            for (const { response, sent } of answers) expectChargedAsCounted(protocol, response, sent, { reasoning: true });
            const inputTokens = answers.map(({ response }) => response.usage!.input_tokens);
            expect(inputTokens[1]).toBeGreaterThan(inputTokens[0]);
            expect(inputTokens[2]).toBeGreaterThan(inputTokens[1]);
            const costs = answers.map(({ response }) => femtosOf((response.usage as RouterUsage).cost));
            expect(costs[1]).toBeGreaterThan(costs[0]);
            expect(costs[2]).toBeGreaterThan(costs[1]);
            // And the account paid exactly that: each answer's cost, rounded up to the nano-dollar.
            expect(balanceBefore - (await balance())).toBe(costs.reduce((sum, cost) => sum + nanosRoundedUp(cost), 0n));
          });

          it("sends the same history when the caller replays the output items itself (store: false)", async () => {
            const question = { role: "user" as const, content: QUESTION };
            const first = await send(protocol, mode, { ...SETTINGS, store: false, input: [question] });
            const call = first.response.output.find((item) => item.type === "function_call")!;
            // The items exactly as they came back (ids, status, encrypted_content), then the tool's output.
            const items = JSON.parse(JSON.stringify(first.response.output)) as OpenAI.Responses.ResponseInputItem[];
            const second = await send(protocol, mode, {
              ...SETTINGS,
              store: false,
              input: [question, ...items, { type: "function_call_output", call_id: call.call_id, output: TOOL_OUTPUT }],
            });
            expect(outputText(second.response)).toBe(`Hello from ${UPSTREAM_MODEL[protocol]}`);
            expect(conversationOf(protocol, second.sent)).toEqual([userTurn(protocol, QUESTION), callTurn(protocol, call.call_id), resultTurn(protocol, call.call_id)]);
          });
        });
      }
    });
  }
  // Stored and background responses on each protocol: the core runs the answer
  // apart from the HTTP request, and the turn it keeps is as whole as a foreground one.
  for (const protocol of PROTOCOLS) {
    describe(`${protocol} in the background`, () => {
      it("queued at once, retrieved until completed, its input listed, continued with its signature, then deleted", async () => {
        const queued = await client.responses.create({ model: `conv/${protocol}`, ...SETTINGS, input: QUESTION, background: true });
        expectValid("Response", queued, "queued response");
        expect(queued).toMatchObject({ status: expect.stringMatching(/^(queued|in_progress)$/), background: true, output: [] });
        const done = await vi.waitFor(async () => {
          const polled = await client.responses.retrieve(queued.id);
          expect(polled.status).toBe("completed");
          return polled;
        }, COMPLETED_WITHIN);
        expectValid("Response", done, "completed background response");
        expect(done.output.map((item) => item.type)).toEqual(["reasoning", "function_call"]);
        expectReasoningItem(protocol, done, 1);
        const sent = lastSent(upstreams, protocol);
        expect(conversationOf(protocol, sent)).toEqual([userTurn(protocol, QUESTION)]);
        expectChargedAsCounted(protocol, done, sent, { reasoning: true });

        const items = await client.responses.inputItems.list(queued.id);
        expect(items.data).toMatchObject([{ type: "message", role: "user", content: [{ type: "input_text", text: QUESTION }] }]);

        const call = done.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
        const output = { type: "function_call_output" as const, call_id: call.call_id, output: TOOL_OUTPUT };
        const continued = await send(protocol, "create", { ...SETTINGS, previous_response_id: queued.id, input: [output] });
        expect(conversationOf(protocol, continued.sent)).toEqual([userTurn(protocol, QUESTION), callTurn(protocol, call.call_id), resultTurn(protocol, call.call_id)]);

        expect(await client.responses.delete(queued.id)).toMatchObject({ id: queued.id, deleted: true });
        expect(await client.responses.retrieve(queued.id).catch((error: unknown) => (error as APIError).status)).toBe(404);
        const refused = await client.responses.create({ model: `conv/${protocol}`, ...SETTINGS, previous_response_id: queued.id, input: [output] }).catch((error: unknown) => error as APIError);
        expect(refused).toMatchObject({ status: 400, param: "previous_response_id", code: "previous_response_not_found" });
      });

      it("cancelled while the upstream answers: the upstream call is cut and it stays cancelled", async () => {
        const upstream = upstreams[protocol];
        const before = upstream.requests.length;
        const queued = await client.responses.create({ model: `conv/${protocol}-hang`, input: QUESTION, background: true });
        await vi.waitFor(async () => {
          expect(upstream.requests.length).toBe(before + 1);
          expect((await client.responses.retrieve(queued.id)).status).toBe("in_progress");
        }, COMPLETED_WITHIN);
        const aborted = upstream.nextAbort();
        const cancelled = await client.responses.cancel(queued.id);
        expectValid("Response", cancelled, "cancelled response");
        expect(cancelled).toMatchObject({ id: queued.id, status: "cancelled", background: true });
        await aborted;
        expect((await client.responses.retrieve(queued.id)).status).toBe("cancelled");
      });
    });
  }

  // Anthropic seals thinking its safety systems flag (redacted_thinking): it is
  // the gateway's encrypted_content `redacted@anthropic:<data>`, and goes back as it came.
  describe("anthropic redacted thinking", () => {
    for (const mode of ["create", "stream"] as const) {
      it(`${mode}: the sealed block goes back byte for byte, through previous_response_id and through replayed items`, async () => {
        const question = `${QUESTION} ${REDACTED_THINKING_TRIGGER}`;
        const first = await send("anthropic", mode, { ...SETTINGS, input: question });
        expect(first.response.output.map((item) => item.type)).toEqual(["reasoning", "reasoning", "function_call"]);
        const sealed = first.response.output[0] as OpenAI.Responses.ResponseReasoningItem;
        expect(sealed.summary).toEqual([]);
        expect(sealed.encrypted_content).toBe(`redacted@anthropic:${redactedOfTurn(1)}`);
        const call = first.response.output[2] as OpenAI.Responses.ResponseFunctionToolCall;
        const callTurn = {
          role: "assistant",
          content: [
            { type: "redacted_thinking", data: redactedOfTurn(1) },
            { type: "thinking", thinking: THOUGHT, signature: signatureOfTurn("anthropic", 1) },
            { type: "tool_use", id: call.call_id, name: "get_weather", input: { city: "Paris" } },
          ],
        };
        const expected = [userTurn("anthropic", question), callTurn, resultTurn("anthropic", call.call_id)];
        const output = { type: "function_call_output" as const, call_id: call.call_id, output: TOOL_OUTPUT };
        await gateway.core.conversations.idle();

        const continued = await send("anthropic", mode, { ...SETTINGS, previous_response_id: first.response.id, input: [output] });
        expect(continued.response.status).toBe("completed");
        expect(conversationOf("anthropic", continued.sent)).toEqual(expected);

        const items = JSON.parse(JSON.stringify(first.response.output)) as OpenAI.Responses.ResponseInputItem[];
        const replayed = await send("anthropic", mode, { ...SETTINGS, store: false, input: [{ role: "user", content: question }, ...items, output] });
        expect(replayed.response.status).toBe("completed");
        expect(conversationOf("anthropic", replayed.sent)).toEqual(expected);
      });
    }
  });

  // A conversation continued on another provider: the stored turn is replayed in
  // the new provider's shape, and reasoning another provider signed stays out
  // (Anthropic and Gemini refuse a signature they did not give). Anthropic <->
  // Gemini is not here yet: the hub's reasoning does not say who signed it, so
  // each is sent the other's signature and refuses it.
  const CROSSINGS: [Protocol, Protocol][] = [
    ["openai-compatible", "anthropic"],
    ["openai-compatible", "gemini"],
    ["anthropic", "openai-compatible"],
    ["gemini", "openai-compatible"],
    // Both sign in base64: each must leave out the other's signature (ReasoningPart.signed_by), which it would refuse.
    ["anthropic", "gemini"],
    ["gemini", "anthropic"],
    // Google's two protocols sign alike (base64) but each takes back only its own signatures.
    ["gemini", "gemini-interactions"],
    ["gemini-interactions", "gemini"],
    ["anthropic", "gemini-interactions"],
    ["gemini-interactions", "openai-compatible"],
  ];
  describe("continued on another provider", () => {
    for (const [from, to] of CROSSINGS) {
      it(`${from} -> ${to}: the function-call round goes on without ${from}'s reasoning`, async () => {
        const first = await send(from, "create", { ...SETTINGS, input: QUESTION });
        const call = first.response.output.find((item) => item.type === "function_call")!;
        await gateway.core.conversations.idle();
        const second = await send(to, "create", {
          ...SETTINGS,
          previous_response_id: first.response.id,
          input: [{ type: "function_call_output", call_id: call.call_id, output: TOOL_OUTPUT }],
        });
        expect(second.response.status).toBe("completed");
        expect(outputText(second.response)).toBe(`Hello from ${UPSTREAM_MODEL[to]}`);
        expect(conversationOf(to, second.sent)).toEqual([userTurn(to, QUESTION), unsignedCallTurn(to, call.call_id), resultTurn(to, call.call_id)]);
        // Anthropic refuses a thinking tool loop whose call turn has no signed thinking: thinking is off for this request.
        if (to === "anthropic") expect(second.sent.thinking).toBeUndefined();
      });
    }
  });
});

function outputText(response: OpenAI.Responses.Response): string {
  return response.output
    .flatMap((item) => (item.type === "message" ? item.content : []))
    .map((part) => (part.type === "output_text" ? part.text : ""))
    .join("");
}

/**
 * The reasoning item first: the thought as its summary, and (Anthropic,
 * Gemini) the signature the upstream gave this request, of `messageCount`
 * messages, as encrypted_content. OpenAI-compatible vendors sign nothing.
 */
function expectReasoningItem(protocol: Protocol, response: OpenAI.Responses.Response, messageCount: number) {
  const reasoning = response.output[0] as OpenAI.Responses.ResponseReasoningItem;
  expect(reasoning.type).toBe("reasoning");
  expect(reasoning.summary).toEqual([{ type: "summary_text", text: THOUGHT }]);
  if (protocol === "openai-compatible") expect(reasoning.encrypted_content ?? undefined).toBeUndefined();
  else expect(reasoning.encrypted_content).toBe(`sig@${protocol}:${signatureOfTurn(protocol as Signer, messageCount)}`);
}

/** input_tokens is what the upstream counted of the request it got, and the cost is exactly that at the route's prices. */
function expectChargedAsCounted(protocol: Protocol, response: OpenAI.Responses.Response, sent: Json, { reasoning }: { reasoning: boolean }) {
  const prompt = promptTokensOf(countedConversation(protocol, sent));
  const usage = response.usage as RouterUsage;
  // Fixed by each fake: OpenAI reports 2 cached and 4 completion tokens; Anthropic 5 out;
  // Gemini (either protocol) 2 cached and 5 candidates, plus 3 thought tokens when thinking.
  const tokens = {
    "openai-compatible": { cached: 2, completion: 4 },
    anthropic: { cached: 0, completion: 5 },
    gemini: { cached: 2, completion: reasoning ? 8 : 5 },
    "gemini-interactions": { cached: 2, completion: reasoning ? 8 : 5 },
  }[protocol];
  expect(usage.input_tokens).toBe(prompt);
  expect(usage.input_tokens_details.cached_tokens).toBe(tokens.cached);
  expect(usage.output_tokens).toBe(tokens.completion);
  expect(femtosOf(usage.cost)).toBe(costFemtos({ prompt, cacheWrite: 0, ...tokens }));
}

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

/** Turn 1's answer as replayed: its thinking (signed by turn 1's request, of one message) before the call. */
function callTurn(protocol: Protocol, callId: string): Json {
  switch (protocol) {
    case "openai-compatible":
      return { role: "assistant", content: null, tool_calls: [{ id: callId, type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] };
    case "anthropic":
      return {
        role: "assistant",
        content: [
          { type: "thinking", thinking: THOUGHT, signature: signatureOfTurn("anthropic", 1) },
          { type: "tool_use", id: callId, name: "get_weather", input: { city: "Paris" } },
        ],
      };
    case "gemini":
      // Gemini takes no thought text back; the signature rides on the call, as Gemini put it there.
      return { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: signatureOfTurn("gemini", 1) }] };
    case "gemini-interactions":
      // The thought step with its summary and signature, then the call by its id.
      return {
        model: [
          { type: "thought", signature: signatureOfTurn("gemini-interactions", 1), summary: [{ type: "text", text: THOUGHT }] },
          { type: "function_call", id: callId, name: "get_weather", arguments: { city: "Paris" } },
        ],
      };
  }
}

/** Another provider's call as replayed: no reasoning; Gemini's documented stand-in where its own signature would be. */
function unsignedCallTurn(protocol: Protocol, callId: string): Json {
  const call = callTurn(protocol, callId);
  switch (protocol) {
    case "openai-compatible":
      return call;
    case "anthropic":
      return { ...call, content: call.content.filter((block: Json) => block.type !== "thinking") };
    case "gemini":
      return { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "skip_thought_signature_validator" }] };
    case "gemini-interactions":
      return { model: [{ type: "thought", signature: "skip_thought_signature_validator" }, call.model[1]] };
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

/** Turn 2's answer as replayed: its thinking (signed by turn 2's request, of three messages) before the text. */
function answerTurn(protocol: Protocol): Json {
  const text = `Hello from ${UPSTREAM_MODEL[protocol]}`;
  switch (protocol) {
    case "openai-compatible":
      return { role: "assistant", content: text };
    case "anthropic":
      return {
        role: "assistant",
        content: [
          { type: "thinking", thinking: THOUGHT, signature: signatureOfTurn("anthropic", 3) },
          { type: "text", text },
        ],
      };
    case "gemini":
      return { role: "model", parts: [{ text, thoughtSignature: signatureOfTurn("gemini", 3) }] };
    case "gemini-interactions":
      return {
        model: [
          { type: "thought", signature: signatureOfTurn("gemini-interactions", 3), summary: [{ type: "text", text: THOUGHT }] },
          { type: "model_output", content: [{ type: "text", text }] },
        ],
      };
  }
}
