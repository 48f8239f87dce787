// Stored conversations shared through Redis: two gateway processes
// (gateway/main.ts with its embedded core, as an operator runs it) on one
// private redis-server, both routed to the fake Anthropic upstream. A
// conversation started on one instance is retrieved (GET, input_items) and
// continued on the other through previous_response_id, across a function-call round, with the
// thinking signature of the first turn sent back byte for byte: the turn as
// Redis holds it is the whole turn, whichever instance wrote it.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { signatureOfTurn } from "../../../support/conversation-model.ts";
import { startFakeAnthropicUpstream } from "../../../support/fake-anthropic-upstream.ts";
import type { FakeUpstream } from "../../../support/fake-openai-upstream.ts";
import { TEST_KEY } from "../../../support/harness.ts";
import { expectValid } from "../../../support/openai-schema.ts";
import { protocolConfigDocument } from "../../../support/protocol-upstreams.ts";
import { startRedisServer, type RedisServer } from "../../../support/redis-server.ts";
import { GATEWAY_ENTRY, spawnEntry, type SpawnedEntry } from "../../../support/spawn-entry.ts";

const TIMEOUT = 30_000;
/** How long vi.waitFor waits for a turn, saved off the answer's path, to be readable. */
const SAVED_WITHIN = { timeout: 10_000, interval: 25 };
const MODEL = "two/anthropic";
const UPSTREAM_MODEL = "claude-conversation";
const weatherTool: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "Current weather of a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};
const SETTINGS = { model: MODEL, tools: [weatherTool], reasoning: { effort: "high" as const }, max_output_tokens: 4096 };

describe("responses on two gateway processes sharing one Redis", { timeout: TIMEOUT }, () => {
  let redis: RedisServer;
  let upstream: FakeUpstream;
  let dir: string;
  let entries: SpawnedEntry[] = [];
  const instances: OpenAI[] = [];

  beforeAll(async () => {
    [redis, upstream] = await Promise.all([startRedisServer(), startFakeAnthropicUpstream()]);
    dir = mkdtempSync(join(tmpdir(), "router-responses-"));
    const configFile = join(dir, "router.json");
    // Only the Anthropic route is used; the other providers point at nothing that is called.
    const urls = { "openai-compatible": "http://127.0.0.1:9/v1", anthropic: upstream.url, gemini: "http://127.0.0.1:9/v1beta", "gemini-interactions": "http://127.0.0.1:9/v1beta" };
    const upstreamModels = { "openai-compatible": "gpt-unused", anthropic: UPSTREAM_MODEL, gemini: "gemini-unused", "gemini-interactions": "gemini-unused" };
    writeFileSync(configFile, JSON.stringify(protocolConfigDocument(urls, "two", upstreamModels), null, 2));
    const env = { PORT: "0", GRPC_PORT: "0", REDIS_URL: redis.url, ROUTER_CONFIG: configFile, CHEAP_KEY: "anthropic-secret", TEST_API_KEY: TEST_KEY };
    entries = [spawnEntry(GATEWAY_ENTRY, env), spawnEntry(GATEWAY_ENTRY, env)];
    for (const entry of entries) {
      const url = await entry.waitForListening(/^gateway listening$/);
      instances.push(new OpenAI({ apiKey: TEST_KEY, baseURL: `${url}/api/v1`, maxRetries: 0 }));
    }
  }, TIMEOUT);

  afterAll(async () => {
    await Promise.all(entries.map((entry) => entry.stop()));
    await Promise.all([redis?.stop(), upstream?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The stored response as `instance` retrieves it, once it is there (GET answers 404 until the save is in Redis). */
  async function retrievedOn(instance: OpenAI, id: string): Promise<OpenAI.Responses.Response> {
    const response = await vi.waitFor(() => instance.responses.retrieve(id), SAVED_WITHIN);
    expectValid("Response", response, `GET ${id}`);
    return response;
  }

  it("a conversation started on A is retrieved and continued on B, and back on A, with turn 1's thinking signature sent back each time", async () => {
    const [a, b] = instances;
    const first = await a.responses.create({ ...SETTINGS, input: "Weather in Paris?" });
    expectValid("Response", first, "turn 1 on A");
    expect(first.output.map((item) => item.type)).toEqual(["reasoning", "function_call"]);
    const call = first.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
    const retrieved = await retrievedOn(b, first.id);
    expect(retrieved).toMatchObject({ id: first.id, status: "completed", output: first.output, usage: first.usage });

    const second = await b.responses.create({
      ...SETTINGS,
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: '{"celsius":21}' }],
    });
    expectValid("Response", second, "turn 2 on B");
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output_text).toBe(`Hello from ${UPSTREAM_MODEL}`);
    const callTurn = {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Let me think.", signature: signatureOfTurn("anthropic", 1) },
        { type: "tool_use", id: call.call_id, name: "get_weather", input: { city: "Paris" } },
      ],
    };
    const resultTurn = { role: "user", content: [{ type: "tool_result", tool_use_id: call.call_id, content: '{"celsius":21}' }] };
    expect(upstream.requests.at(-1)!.body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Weather in Paris?" }] }, callTurn, resultTurn]);
    expect(await retrievedOn(a, second.id)).toMatchObject({ id: second.id, previous_response_id: first.id, output: second.output });
    const items = await a.responses.inputItems.list(second.id);
    expect(items.data).toMatchObject([{ type: "function_call_output", call_id: call.call_id, output: '{"celsius":21}' }]);

    const third = await a.responses.create({ ...SETTINGS, previous_response_id: second.id, input: "And tomorrow?" });
    expectValid("Response", third, "turn 3 on A");
    const sent = upstream.requests.at(-1)!.body.messages as unknown[];
    expect(sent.slice(1, 3)).toEqual([callTurn, resultTurn]);
    expect(sent.slice(3)).toEqual([
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Let me think.", signature: signatureOfTurn("anthropic", 3) },
          { type: "text", text: `Hello from ${UPSTREAM_MODEL}` },
        ],
      },
      { role: "user", content: [{ type: "text", text: "And tomorrow?" }] },
    ]);
  });
});
