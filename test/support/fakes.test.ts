// The fake upstreams refuse what the real APIs refuse, so a test of an adapter
// fails when the adapter sends a request the real API would turn down. Each
// refusal rule has one request here that the fake must refuse (with the real
// API's status and error shape), beside a valid request it must answer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

  it("refuses a tool call without its function (400)", async () => {
    const messages = [{ role: "user", content: "Hi" }, { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function" }] }];
    expectOpenAiError(await send({ ...VALID, messages }), 400, /Invalid request/, expect.stringMatching(/^messages\.1/));
  });
});
