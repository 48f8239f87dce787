// The fake upstreams refuse what the real APIs refuse, so a test of an adapter
// fails when the adapter sends a request the real API would turn down. Each
// refusal rule has one request here that the fake must refuse (with the real
// API's status and error shape), beside a valid request it must answer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactedOfTurn, signatureOfTurn } from "./conversation-model.ts";
import { REDACTED_THINKING_TRIGGER, startFakeAnthropicUpstream } from "./fake-anthropic-upstream.ts";
import { startFakeGeminiInteractionsUpstream } from "./fake-gemini-interactions-upstream.ts";
import { startFakeGeminiUpstream } from "./fake-gemini-upstream.ts";
import { startFakeUpstream } from "./fake-openai-upstream.ts";
import type { FakeUpstream } from "./recording-server.ts";

type Json = Record<string, any>;

async function post(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: Json }> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Json };
}

describe("the fake OpenAI upstream", () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
  });
  afterAll(() => upstream.close());

  const KEY = { authorization: "Bearer sk-test" };
  const VALID = { model: "gpt-test", messages: [{ role: "user", content: "Hi" }] };
  const send = (body: unknown, headers: Record<string, string> = KEY) => post(`${upstream.url}/chat/completions`, headers, body);

  /** OpenAI's error body: a 4xx with {error: {message, type, param, code}}. */
  function expectOpenAiError(answer: { status: number; body: Json }, status: number, message: RegExp, param: unknown = null) {
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual({ error: { message: expect.stringMatching(message), type: "invalid_request_error", param, code: expect.toBeOneOf([null, expect.any(String)]) } });
  }

  it("answers a valid request, vendor extensions included", async () => {
    expect((await send(VALID)).status).toBe(200);
    const history = [{ role: "user", content: "Hi" }, { role: "assistant", content: "Hello", reasoning_content: "Let me think." }, { role: "user", content: "Again" }];
    expect((await send({ ...VALID, messages: history, top_k: 5, repetition_penalty: 1.1, thinking: { type: "enabled" } })).status).toBe(200);
    expect((await send({ ...VALID, enable_thinking: true, thinking_budget: 1024 })).status).toBe(200);
    expect((await send({ ...VALID, reasoning: { effort: "low" } })).status).toBe(200);
  });

  it("refuses a request without a key (401)", async () => {
    expectOpenAiError(await send(VALID, {}), 401, /didn't provide an API key/);
  });

  it("refuses a key not sent as `Bearer <key>` (401)", async () => {
    expectOpenAiError(await send(VALID, { authorization: "sk-test" }), 401, /Incorrect API key/);
    expectOpenAiError(await send(VALID, { authorization: "Bearer " }), 401, /Incorrect API key/);
  });

  it("serves a -local model without a key, as a keyless local server does", async () => {
    expect((await send({ ...VALID, model: "ok-local" }, {})).status).toBe(200);
  });

  it("refuses an unknown request field (400)", async () => {
    expectOpenAiError(await send({ ...VALID, max_token: 10 }), 400, /^Unrecognized request argument supplied: max_token$/, "max_token");
  });

  it("refuses a body not declared application/json (415), whatever it holds", async () => {
    expectOpenAiError(await send(VALID, { ...KEY, "content-type": "text/plain" }), 415, /^Unsupported content type: 'text\/plain'/);
    expect((await send(VALID, { ...KEY, "content-type": "application/json; charset=utf-8" })).status).toBe(200);
  });

  it("serves POST /v1/chat/completions only: another path or method is 404 Invalid URL", async () => {
    expectOpenAiError(await post(`${upstream.url}/completions`, KEY, VALID), 404, /^Invalid URL \(POST \/v1\/completions\)$/);
    expectOpenAiError(await post(`${upstream.url}/chat/completions/extra`, KEY, VALID), 404, /^Invalid URL \(POST \/v1\/chat\/completions\/extra\)$/);
    const get = await fetch(`${upstream.url}/chat/completions`, { headers: KEY });
    expectOpenAiError({ status: get.status, body: (await get.json()) as Json }, 404, /^Invalid URL \(GET \/v1\/chat\/completions\)$/);
  });

  it("refuses an unknown message field (400)", async () => {
    const messages = [{ role: "user", content: "Hi", reasoning: "x" }];
    expectOpenAiError(await send({ ...VALID, messages }), 400, /'reasoning' was unexpected/, "messages.0");
  });

  it("refuses a role OpenAI does not have (400)", async () => {
    expectOpenAiError(await send({ ...VALID, messages: [{ role: "model", content: "Hi" }] }), 400, /Invalid request/, expect.stringMatching(/^messages\.0/));
  });

  it("refuses an empty message list (400)", async () => {
    expectOpenAiError(await send({ ...VALID, messages: [] }), 400, /'messages' must NOT have fewer than 1 items/, "messages");
  });

  it("refuses a value out of the schema's range (400)", async () => {
    expectOpenAiError(await send({ ...VALID, temperature: 3 }), 400, /'temperature' must be <= 2/, "temperature");
  });

  const CALLS = { role: "assistant", content: null, tool_calls: [1, 2].map((n) => ({ id: `call_${n}`, type: "function", function: { name: "get_weather", arguments: "{}" } })) };
  const answer = (n: number) => ({ role: "tool", tool_call_id: `call_${n}`, content: "21C" });

  it("answers a tool loop whose calls are all answered", async () => {
    expect((await send({ ...VALID, messages: [VALID.messages[0], CALLS, answer(2), answer(1)] })).status).toBe(200);
  });

  it("refuses tool calls not all answered by the tool messages after them (400)", async () => {
    const messages = [VALID.messages[0], CALLS, answer(1), { role: "user", content: "Well?" }];
    expectOpenAiError(await send({ ...VALID, messages }), 400, /^An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'\. The following tool_call_ids did not have response messages: call_2$/, expect.any(String));
  });

  it("refuses a tool message that answers no call of the turn before (400)", async () => {
    const messages = [VALID.messages[0], CALLS, answer(1), answer(2), answer(3)];
    expectOpenAiError(await send({ ...VALID, messages }), 400, /messages with role 'tool' must be a response to a preceeding message with 'tool_calls'/, "messages.[4].role");
  });

  it("refuses a tool call without its function (400)", async () => {
    const messages = [{ role: "user", content: "Hi" }, { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function" }] }];
    expectOpenAiError(await send({ ...VALID, messages }), 400, /Invalid request/, expect.stringMatching(/^messages\.1/));
  });
});

describe("the fake Anthropic upstream", () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeAnthropicUpstream();
  });
  afterAll(() => upstream.close());

  const HEADERS = { "x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01" };
  const VALID = { model: "claude-test", max_tokens: 4096, messages: [{ role: "user", content: "Hi" }] };
  const THINKING = { ...VALID, thinking: { type: "enabled", budget_tokens: 2048 } };
  const TOOLS = [{ name: "get_weather", input_schema: { type: "object" } }];
  const CALL = { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} };
  const RESULT = { type: "tool_result", tool_use_id: "toolu_1", content: "21C" };
  const SIGNED_THINKING = { type: "thinking", thinking: "Let me think.", signature: "sig" };
  const send = (body: unknown, headers: Record<string, string> = HEADERS) => post(`${upstream.url}/messages`, headers, body);

  /** Anthropic's error body: {type: "error", error: {type, message}}. */
  function expectAnthropicError(answer: { status: number; body: Json }, status: number, message: RegExp) {
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual({ type: "error", error: { type: status === 401 ? "authentication_error" : "invalid_request_error", message: expect.stringMatching(message) } });
  }
  const refused = async (body: unknown, message: RegExp) => expectAnthropicError(await send(body), 400, message);

  it("answers valid requests, including what the API allows that a stricter reading would not", async () => {
    expect((await send(VALID)).status).toBe(200);
    // Consecutive turns of one role are combined, and the first turn need not be the user's.
    const turns = [{ role: "assistant", content: "Hello" }, { role: "user", content: "Hi" }, { role: "user", content: "Again" }];
    expect((await send({ ...VALID, messages: turns })).status).toBe(200);
    expect((await send({ ...THINKING, temperature: 1, top_p: 0.95 })).status).toBe(200);
    const loop = [{ role: "user", content: "Weather?" }, { role: "assistant", content: [SIGNED_THINKING, CALL] }, { role: "user", content: [RESULT, { type: "text", text: "Thanks" }] }];
    expect((await send({ ...THINKING, tools: TOOLS, messages: loop })).status).toBe(200);
    // With interleaved thinking the budget may pass max_tokens.
    const interleaved = { ...HEADERS, "anthropic-beta": "interleaved-thinking-2025-05-14" };
    expect((await send({ ...THINKING, max_tokens: 2048 }, interleaved)).status).toBe(200);
  });

  it("refuses, for a conversation model, a thinking signature it did not give (400), as the real API checks them", async () => {
    const loop = (signature: string) => [{ role: "user", content: "Weather?" }, { role: "assistant", content: [{ ...SIGNED_THINKING, signature }, CALL] }, { role: "user", content: [RESULT] }];
    const model = "claude-conversation";
    expect((await send({ ...THINKING, model, tools: TOOLS, messages: loop(signatureOfTurn("anthropic", 1)) })).status).toBe(200);
    await refused({ ...THINKING, model, tools: TOOLS, messages: loop(signatureOfTurn("gemini", 1)) }, /^messages\.1\.content\.0: Invalid `signature` in `thinking` block$/);
  });

  it("answers the documented test string with redacted thinking, and refuses, for a conversation model, redacted data it did not give (400)", async () => {
    const answer = await send({ ...THINKING, messages: [{ role: "user", content: `Hi ${REDACTED_THINKING_TRIGGER}` }] });
    expect(answer.body.content.map((block: Json) => block.type)).toEqual(["redacted_thinking", "thinking", "text"]);
    const model = "claude-conversation";
    const turns = (data: string) => [{ role: "user", content: "Hi" }, { role: "assistant", content: [{ type: "redacted_thinking", data }, { type: "text", text: "Hello" }] }, { role: "user", content: "Again" }];
    expect((await send({ ...THINKING, model, messages: turns(redactedOfTurn(1)) })).status).toBe(200);
    await refused({ ...THINKING, model, messages: turns("c2VhbGVk") }, /^messages\.1\.content\.0: Invalid `data` in `redacted_thinking` block$/);
  });

  it("refuses a request without x-api-key (401)", async () => {
    expectAnthropicError(await send(VALID, { "anthropic-version": "2023-06-01" }), 401, /^x-api-key header is required$/);
  });

  it("refuses a request without anthropic-version (400)", async () => {
    expectAnthropicError(await send(VALID, { "x-api-key": "sk-ant-test" }), 400, /^anthropic-version: header is required$/);
  });

  it("refuses a body not declared application/json (400), and a method other than POST (404)", async () => {
    expectAnthropicError(await send(VALID, { ...HEADERS, "content-type": "text/plain" }), 400, /^content-type: expected application\/json, got "text\/plain"$/);
    const counted = await post(`${upstream.url}/messages/count_tokens`, { ...HEADERS, "content-type": "text/plain" }, { model: VALID.model, messages: VALID.messages });
    expectAnthropicError(counted, 400, /^content-type: expected application\/json/);
    expect((await fetch(`${upstream.url}/messages`, { headers: HEADERS })).status).toBe(404);
  });

  it("refuses an unknown field (400)", async () => {
    await refused({ ...VALID, top_logprobs: 2 }, /^top_logprobs: Extra inputs are not permitted$/);
  });

  it("refuses a request without max_tokens (400)", async () => {
    await refused({ model: "claude-test", messages: VALID.messages }, /^max_tokens: Field required$/);
  });

  it("refuses a system turn among the messages (400)", async () => {
    await refused({ ...VALID, messages: [{ role: "system", content: "Be brief." }, ...VALID.messages] }, /^messages\.0\.role: Input should be 'user' or 'assistant'$/);
  });

  it("refuses an empty message list and an empty text block (400)", async () => {
    await refused({ ...VALID, messages: [] }, /at least one message is required/);
    await refused({ ...VALID, messages: [{ role: "user", content: [{ type: "text", text: "" }] }] }, /text content blocks must be non-empty/);
  });

  it("refuses a temperature above 1 (400)", async () => {
    await refused({ ...VALID, temperature: 1.5 }, /^temperature: /);
  });

  it("refuses a tool_use without its tool_result in the next turn (400)", async () => {
    const messages = [{ role: "user", content: "Weather?" }, { role: "assistant", content: [CALL] }, { role: "user", content: "Well?" }];
    await refused({ ...VALID, tools: TOOLS, messages }, /^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1/);
  });

  it("refuses a tool_result whose call is not in the turn before (400)", async () => {
    const messages = [{ role: "user", content: [RESULT] }];
    await refused({ ...VALID, tools: TOOLS, messages }, /unexpected `tool_use_id` found in `tool_result` blocks: toolu_1/);
  });

  it("refuses text ahead of the tool results in their turn (400)", async () => {
    const messages = [{ role: "user", content: "Weather?" }, { role: "assistant", content: [CALL] }, { role: "user", content: [{ type: "text", text: "Here:" }, RESULT] }];
    await refused({ ...VALID, tools: TOOLS, messages }, /`tool_result` blocks must come first/);
  });

  it("refuses a thinking budget below 1024 (400)", async () => {
    await refused({ ...VALID, thinking: { type: "enabled", budget_tokens: 1000 } }, /budget_tokens: Input should be greater than or equal to 1024/);
  });

  it("refuses a thinking budget not below max_tokens (400)", async () => {
    await refused({ ...THINKING, max_tokens: 2048 }, /`max_tokens` must be greater than `thinking.budget_tokens`/);
  });

  it("refuses a budget with adaptive thinking (400)", async () => {
    await refused({ ...VALID, thinking: { type: "adaptive", budget_tokens: 2048 } }, /thinking\.adaptive\.budget_tokens: Extra inputs are not permitted/);
  });

  it("refuses a temperature other than 1 while thinking (400)", async () => {
    await refused({ ...THINKING, temperature: 0.5 }, /`temperature` may only be set to 1 when thinking is enabled/);
  });

  it("refuses top_k while thinking (400)", async () => {
    await refused({ ...THINKING, top_k: 40 }, /`top_k` must be unset when thinking is enabled/);
  });

  it("refuses top_p below 0.95 while thinking (400)", async () => {
    await refused({ ...THINKING, top_p: 0.9 }, /`top_p` must be greater than or equal to 0.95/);
  });

  it("refuses a forced tool choice while thinking (400)", async () => {
    await refused({ ...THINKING, tools: TOOLS, tool_choice: { type: "tool", name: "get_weather" } }, /^Thinking may not be enabled when tool_choice forces tool use\.$/);
    await refused({ ...THINKING, tools: TOOLS, tool_choice: { type: "any" } }, /^Thinking may not be enabled when tool_choice forces tool use\.$/);
  });

  it("refuses thinking blocks after other blocks of an assistant turn (400)", async () => {
    const messages = [{ role: "user", content: "Hi" }, { role: "assistant", content: [{ type: "text", text: "Hello" }, SIGNED_THINKING] }, { role: "user", content: "Again" }];
    await refused({ ...VALID, messages }, /If an assistant message contains any thinking blocks, the first block must be thinking/);
  });

  it("refuses a thinking tool loop whose assistant turn does not start with its thinking (400)", async () => {
    const loop = [{ role: "user", content: "Weather?" }, { role: "assistant", content: [CALL] }, { role: "user", content: [RESULT] }];
    await refused({ ...THINKING, tools: TOOLS, messages: loop }, /^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`/);
  });
});

describe("the fake Gemini upstream", () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeGeminiUpstream();
  });
  afterAll(() => upstream.close());

  const KEY = { "x-goog-api-key": "gemini-secret" };
  const HI = { role: "user", parts: [{ text: "Hi" }] };
  const VALID = { contents: [HI] };
  const TOOLS = [{ functionDeclarations: [{ name: "get_weather", parametersJsonSchema: { type: "object", additionalProperties: false } }] }];
  const CALL = { functionCall: { name: "get_weather", args: { city: "Paris" } } };
  const RESPONSE = { functionResponse: { name: "get_weather", response: { output: "21C" } } };
  const send = (body: unknown, { model = "gemini-test", headers = KEY as Record<string, string>, query = "" } = {}) =>
    post(`${upstream.url}/models/${model}:generateContent${query}`, headers, body);

  /** Google's error body: {error: {code, message, status}}, the code being the HTTP status. */
  function expectGoogleError(answer: { status: number; body: Json }, status: number, googleStatus: string, message: RegExp) {
    expect(answer.status).toBe(status);
    expect(answer.body.error).toMatchObject({ code: status, status: googleStatus, message: expect.stringMatching(message) });
  }
  const refused = async (body: unknown, message: RegExp, model?: string) => expectGoogleError(await send(body, { model }), 400, "INVALID_ARGUMENT", message);

  it("answers valid requests, in camelCase or snake_case, keyed by header or query", async () => {
    expect((await send(VALID)).status).toBe(200);
    expect((await send(VALID, { headers: {}, query: "?key=gemini-secret" })).status).toBe(200);
    const snake = { contents: [HI], system_instruction: { parts: [{ text: "Be brief." }] }, generation_config: { max_output_tokens: 10, thinking_config: { thinking_budget: 1024 } } };
    expect((await send(snake, { model: "gemini-2.5-flash" })).status).toBe(200);
    const loop = { contents: [HI, { role: "model", parts: [CALL] }, { role: "user", parts: [RESPONSE] }], tools: TOOLS, toolConfig: { functionCallingConfig: { mode: "AUTO" } } };
    expect((await send(loop)).status).toBe(200);
    const levels = { contents: [HI], generationConfig: { thinkingConfig: { thinkingLevel: "low", includeThoughts: true }, responseModalities: ["TEXT", "IMAGE"] } };
    expect((await send(levels, { model: "gemini-3-flash-preview" })).status).toBe(200);
  });

  it("refuses a request without a key (403)", async () => {
    expectGoogleError(await send(VALID, { headers: {} }), 403, "PERMISSION_DENIED", /Method doesn't allow unregistered callers/);
  });

  it("refuses a body not declared application/json (400), and a method other than POST (404)", async () => {
    expectGoogleError(await send(VALID, { headers: { ...KEY, "content-type": "text/plain" } }), 400, "INVALID_ARGUMENT", /^Invalid JSON payload received: the Content-Type is "text\/plain"/);
    const counted = await post(`${upstream.url}/models/gemini-test:countTokens`, { ...KEY, "content-type": "text/plain" }, VALID);
    expectGoogleError(counted, 400, "INVALID_ARGUMENT", /^Invalid JSON payload received: the Content-Type/);
    expect((await fetch(`${upstream.url}/models/gemini-test:generateContent`, { headers: KEY })).status).toBe(404);
  });

  it("refuses an unknown field, naming where it is (400)", async () => {
    const answer = await send({ ...VALID, generationConfig: { maxTokens: 10 } });
    expectGoogleError(answer, 400, "INVALID_ARGUMENT", /^Invalid JSON payload received\. Unknown name "maxTokens" at 'generation_config': Cannot find field\.$/);
    expect(answer.body.error.details).toEqual([{ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field: "generation_config", description: expect.any(String) }] }]);
    await refused({ ...VALID, temperature: 0.5 }, /^Invalid JSON payload received\. Unknown name "temperature": Cannot find field\.$/);
    await refused({ contents: [{ role: "user", parts: [{ text: "Hi", cache_control: {} }] }] }, /Unknown name "cache_control" at 'contents\[0\]\.parts\[0\]'/);
    await refused({ ...VALID, tools: [{ functionDeclarations: [{ name: "f", strict: true }] }] }, /Unknown name "strict" at 'tools\[0\]\.function_declarations\[0\]'/);
    await refused({ ...VALID, toolConfig: { functionCallingConfig: { mode: "ANY", allowed: ["f"] } } }, /Unknown name "allowed" at 'tool_config\.function_calling_config'/);
    await refused({ ...VALID, systemInstruction: { parts: [{ content: "Be brief." }] } }, /Unknown name "content" at 'system_instruction\.parts\[0\]'/);
    await refused({ ...VALID, safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", level: "BLOCK_NONE" }] }, /Unknown name "level" at 'safety_settings\[0\]'/);
  });

  it("refuses an enum value the API does not have (400)", async () => {
    await refused({ ...VALID, toolConfig: { functionCallingConfig: { mode: "REQUIRED" } } }, /^Invalid value at 'tool_config\.function_calling_config\.mode'/);
    await refused({ ...VALID, generationConfig: { responseModalities: ["TEXT", "VIDEO_CLIP"] } }, /^Invalid value at 'generation_config\.response_modalities\[1\]'/);
  });

  it("refuses roles other than user and model (400)", async () => {
    await refused({ contents: [{ role: "system", parts: [{ text: "Be brief." }] }, HI] }, /^Please use a valid role: user, model\.$/);
    await refused({ contents: [HI, { role: "assistant", parts: [{ text: "Hello" }] }, HI] }, /^Please use a valid role: user, model\.$/);
  });

  it("refuses empty contents and empty parts (400)", async () => {
    await refused({ contents: [] }, /contents is not specified/);
    await refused({ contents: [{ role: "user", parts: [] }] }, /contents\.parts must not be empty/);
  });

  it("refuses a part with no data, or with two (400)", async () => {
    await refused({ contents: [{ role: "user", parts: [{ thought: true }] }] }, /required oneof field 'data' must have one initialized field/);
    await refused({ contents: [{ role: "user", parts: [{ text: "Hi", inlineData: { mimeType: "image/png", data: "AA==" } }] }] }, /oneof field 'data' is already set/);
  });

  it("refuses a function declaration without a name (400)", async () => {
    await refused({ ...VALID, tools: [{ functionDeclarations: [{ description: "no name" }] }] }, /function_declarations\[0\]\.name: Name cannot be empty/);
  });

  it("refuses function responses that do not answer every call of the turn before (400)", async () => {
    const contents = [HI, { role: "model", parts: [CALL, CALL] }, { role: "user", parts: [RESPONSE] }];
    await refused({ contents, tools: TOOLS }, /number of function response parts is equal to the number of function call parts/);
  });

  it("refuses a function call turn that does not follow a user turn (400)", async () => {
    const contents = [HI, { role: "model", parts: [{ text: "Let me check." }] }, { role: "model", parts: [CALL] }, { role: "user", parts: [RESPONSE] }];
    await refused({ contents, tools: TOOLS }, /function call turn comes immediately after a user turn/);
  });

  it("refuses a Gemini 3 function call of the current turn without its thoughtSignature (400)", async () => {
    const contents = [HI, { role: "model", parts: [CALL] }, { role: "user", parts: [RESPONSE] }];
    await refused({ contents, tools: TOOLS }, /Function call is missing a thought_signature/, "gemini-3-pro-preview");
    const signed = [HI, { role: "model", parts: [{ ...CALL, thoughtSignature: "c2ln" }] }, { role: "user", parts: [RESPONSE] }];
    expect((await send({ contents: signed, tools: TOOLS }, { model: "gemini-3-pro-preview" })).status).toBe(200);
  });

  it("refuses, for a conversation model, a thoughtSignature it did not give (400), as the real API checks them", async () => {
    const contents = (thoughtSignature: string) => [HI, { role: "model", parts: [{ ...CALL, thoughtSignature }] }, { role: "user", parts: [RESPONSE] }];
    const model = "gemini-3-conversation";
    expect((await send({ contents: contents(signatureOfTurn("gemini", 1)), tools: TOOLS }, { model })).status).toBe(200);
    expect((await send({ contents: contents("skip_thought_signature_validator"), tools: TOOLS }, { model })).status).toBe(200);
    await refused({ contents: contents(signatureOfTurn("anthropic", 1)), tools: TOOLS }, /^Corrupted thought signature\.$/, model);
  });

  it("refuses thinkingBudget and thinkingLevel together (400)", async () => {
    await refused({ ...VALID, generationConfig: { thinkingConfig: { thinkingBudget: 1024, thinkingLevel: "LOW" } } }, /only one of thinking budget and thinking level/, "gemini-3-pro-preview");
  });

  it("refuses thinkingLevel before Gemini 3 (400)", async () => {
    await refused({ ...VALID, generationConfig: { thinkingConfig: { thinkingLevel: "LOW" } } }, /Thinking level is not supported/, "gemini-2.5-flash");
  });

  it("refuses a thinking budget outside the model's range (400)", async () => {
    await refused({ ...VALID, generationConfig: { thinkingConfig: { thinkingBudget: 0 } } }, /^Budget 0 is invalid\. This model only works in thinking mode\.$/, "gemini-2.5-pro");
    await refused({ ...VALID, generationConfig: { thinkingConfig: { thinkingBudget: 32000 } } }, /^The thinking budget \(32000\) is invalid\.$/, "gemini-2.5-flash");
  });
});

describe("the fake Gemini Interactions upstream", () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeGeminiInteractionsUpstream();
  });
  afterAll(() => upstream.close());

  const KEY = { "x-goog-api-key": "gemini-secret" };
  const HI = { type: "user_input", content: [{ type: "text", text: "Hi" }] };
  const VALID = { model: "gemini-test", input: [HI], stream: true, store: false };
  const TOOLS = [{ type: "function", name: "get_weather", parameters: { type: "object" } }];
  const CALL = { type: "function_call", id: "fc_1", name: "get_weather", arguments: { city: "Paris" } };
  const RESULT = { type: "function_result", call_id: "fc_1", name: "get_weather", result: "21C" };
  const send = async (body: unknown, headers: Record<string, string> = KEY) => {
    const response = await fetch(`${upstream.url}/interactions`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
    return { status: response.status, body: response.headers.get("content-type")?.startsWith("application/json") ? ((await response.json()) as Json) : {} };
  };

  function expectGoogleError(answer: { status: number; body: Json }, status: number, googleStatus: string, message: RegExp) {
    expect(answer.status).toBe(status);
    expect(answer.body.error).toMatchObject({ code: status, status: googleStatus, message: expect.stringMatching(message) });
  }
  const refused = async (body: unknown, message: RegExp) => expectGoogleError(await send(body), 400, "INVALID_ARGUMENT", message);

  it("answers valid requests: a stream, a whole interaction, a function round with every setting the adapter sends", async () => {
    expect((await send(VALID)).status).toBe(200);
    const whole = await send({ ...VALID, stream: false });
    expect(whole.body).toMatchObject({ id: expect.stringMatching(/^v1_/), status: "completed", steps: [{ type: "model_output" }], usage: { total_input_tokens: 10 } });
    const round = {
      ...VALID,
      model: "gemini-3-flash-preview",
      system_instruction: "Be brief.",
      tools: TOOLS,
      input: [HI, { type: "thought", signature: "c2ln", summary: [{ type: "text", text: "Check." }] }, CALL, RESULT],
      generation_config: { temperature: 0.5, top_p: 0.9, max_output_tokens: 50, seed: 1, stop_sequences: ["END"], thinking_level: "low", thinking_summaries: "auto", tool_choice: { allowed_tools: { mode: "any", tools: ["get_weather"] } } },
      response_format: [{ type: "text", mime_type: "application/json", schema: { type: "object" } }, { type: "image", aspect_ratio: "1:1", delivery: "inline" }],
      safety_settings: [{ type: "harassment", threshold: "block_none" }],
      service_tier: "flex",
      environment: "env_1",
    };
    expect((await send(round)).status).toBe(200);
  });

  it("refuses a request without a key (403)", async () => {
    expectGoogleError(await send(VALID, {}), 403, "PERMISSION_DENIED", /Method doesn't allow unregistered callers/);
  });

  it("refuses a body not declared application/json (400), and another path or method (404)", async () => {
    expectGoogleError(await send(VALID, { ...KEY, "content-type": "text/plain" }), 400, "INVALID_ARGUMENT", /^Invalid JSON payload received: the Content-Type is "text\/plain"/);
    expect((await fetch(`${upstream.url}/interactions`, { headers: KEY })).status).toBe(404);
    expect((await fetch(`${upstream.url}/models/gemini-test:generateContent`, { method: "POST", headers: KEY, body: "{}" })).status).toBe(404);
  });

  it("refuses an unknown field, naming where it is (400)", async () => {
    await refused({ ...VALID, contents: [] }, /^Invalid JSON payload received\. Unknown name "contents": Cannot find field\.$/);
    await refused({ ...VALID, generation_config: { top_k: 40 } }, /Unknown name "top_k" at 'generation_config'/);
    await refused({ ...VALID, tools: [{ ...TOOLS[0], strict: true }] }, /Unknown name "strict" at 'tools\[0\]'/);
    await refused({ ...VALID, safety_settings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "block_none" }] }, /Unknown name "category" at 'safety_settings\[0\]'/);
    await refused({ ...VALID, input: [{ ...HI, role: "user" }] }, /Unknown name "role" at 'input\[0\]'/);
    await refused({ ...VALID, input: [{ type: "user_input", content: [{ type: "text", text: "Hi", cache_control: {} }] }] }, /Unknown name "cache_control" at 'input\[0\]\.content\[0\]'/);
  });

  it("refuses a value the API does not have (400)", async () => {
    await refused({ ...VALID, input: [{ type: "turn", content: [] }] }, /^Invalid value at 'input\[0\]\.type'/);
    await refused({ ...VALID, generation_config: { thinking_level: "LOW" } }, /^Invalid value at 'generation_config\.thinking_level'/);
    await refused({ ...VALID, generation_config: { thinking_summaries: "all" } }, /^Invalid value at 'generation_config\.thinking_summaries'/);
    await refused({ ...VALID, generation_config: { tool_choice: "required" } }, /^Invalid value at 'generation_config\.tool_choice'/);
  });

  it("refuses a request without model or input (400)", async () => {
    await refused({ input: [HI] }, /model is required/);
    await refused({ ...VALID, input: [] }, /input is required/);
  });

  it("refuses a function result without its call (400)", async () => {
    await refused({ ...VALID, tools: TOOLS, input: [HI, RESULT] }, /No function call found for the function result with call_id "fc_1"/);
  });

  it("refuses a Gemini 3 function call of the current turn without a signed thought before it (400), and takes Google's stand-in", async () => {
    const model = "gemini-3-flash-preview";
    await refused({ ...VALID, model, tools: TOOLS, input: [HI, CALL, RESULT] }, /Function call is missing a thought_signature/);
    const standIn = { type: "thought", signature: "skip_thought_signature_validator" };
    expect((await send({ ...VALID, model, tools: TOOLS, input: [HI, standIn, CALL, RESULT] })).status).toBe(200);
    // An earlier turn's calls are not checked.
    expect((await send({ ...VALID, model, tools: TOOLS, input: [HI, CALL, RESULT, HI] })).status).toBe(200);
  });

  it("refuses, for a conversation model, a thought signature it did not give (400), as the real API checks them", async () => {
    const model = "gemini-3-conversation";
    const input = (signature: string) => [HI, { type: "thought", signature }, CALL, RESULT];
    expect((await send({ ...VALID, model, tools: TOOLS, input: input(signatureOfTurn("gemini-interactions", 1)) })).status).toBe(200);
    await refused({ ...VALID, model, tools: TOOLS, input: input(signatureOfTurn("gemini", 1)) }, /^Corrupted thought signature\.$/);
  });
});
