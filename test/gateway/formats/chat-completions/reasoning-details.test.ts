// Several reasoning blocks make the round trip through the chat format as
// `reasoning_details` (OpenRouter's shape): an Anthropic answer with thinking,
// redacted_thinking and a second thinking block, then a tool call, reaches the
// client one entry per block, in order, each with its signature; sent back, the
// assistant turn reaches Anthropic as the same blocks in the same order, as
// Anthropic requires for tool use with thinking. JSON answers and stream chunks
// are validated against OpenAI's schemas.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../../../core/config/load.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { expectValid } from "../../../support/openai-schema.ts";
import { startRecordingServer, type FakeUpstream } from "../../../support/recording-server.ts";

type Json = Record<string, any>;

const TOOL_USE_ID = "toolu_01Weather";
/** What the upstream answers while the last user turn holds no tool result. */
const ANTHROPIC_BLOCKS: Json[] = [
  { type: "thinking", thinking: "First, which city.", signature: "sig-first" },
  { type: "redacted_thinking", data: "opaque-sealed-reasoning" },
  { type: "thinking", thinking: "Then, the units.", signature: "sig-second" },
  { type: "tool_use", id: TOOL_USE_ID, name: "get_weather", input: { city: "Paris" } },
];
/** The same blocks as `reasoning_details` entries. */
const EXPECTED_DETAILS = [
  { type: "reasoning.text", text: "First, which city.", signature: "sig-first", index: 0 },
  { type: "reasoning.encrypted", data: "opaque-sealed-reasoning", index: 1 },
  { type: "reasoning.text", text: "Then, the units.", signature: "sig-second", index: 2 },
];

/** A Messages API upstream that thinks in three blocks before calling the tool, then answers in text. */
function startThinkingAnthropic(): Promise<FakeUpstream> {
  return startRecordingServer("/v1", ({ body }, res) => {
    const lastTurn = (body.messages as Json[]).at(-1)!;
    const answered = Array.isArray(lastTurn.content) && lastTurn.content.some((block: Json) => block.type === "tool_result");
    const blocks = answered ? [{ type: "text", text: "Sunny, 21 degrees." }] : ANTHROPIC_BLOCKS;
    const stopReason = answered ? "end_turn" : "tool_use";
    const usage = { input_tokens: 10, output_tokens: 5 };
    const message = { id: "msg_think", type: "message", role: "assistant", model: body.model, content: blocks, stop_reason: stopReason, stop_sequence: null, usage };
    if (body.stream !== true) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(message));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (type: string, data: Json) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send("message_start", { message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
    for (const [index, block] of blocks.entries()) {
      send("content_block_start", { index, content_block: startOf(block) });
      for (const delta of deltasOf(block)) send("content_block_delta", { index, delta });
      send("content_block_stop", { index });
    }
    send("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } });
    send("message_stop", {});
    res.end();
  });
}

/** A block as content_block_start shows it (redacted_thinking comes whole, as Anthropic sends it). */
function startOf(block: Json): Json {
  if (block.type === "thinking") return { type: "thinking", thinking: "", signature: "" };
  if (block.type === "tool_use") return { ...block, input: {} };
  if (block.type === "text") return { type: "text", text: "" };
  return block;
}

/** Thinking in two pieces, then its signature as its own delta, as Anthropic streams it. */
function deltasOf(block: Json): Json[] {
  switch (block.type) {
    case "thinking": {
      const half = Math.floor(block.thinking.length / 2);
      return [
        { type: "thinking_delta", thinking: block.thinking.slice(0, half) },
        { type: "thinking_delta", thinking: block.thinking.slice(half) },
        { type: "signature_delta", signature: block.signature },
      ];
    }
    case "tool_use":
      return [{ type: "input_json_delta", partial_json: JSON.stringify(block.input) }];
    case "text":
      return [{ type: "text_delta", text: block.text }];
    default:
      return [];
  }
}

function config(upstreamUrl: string) {
  return parseConfig(
    JSON.stringify({
      providers: [{ id: "anthropic", label: "Anthropic", protocol: "anthropic", base_url: upstreamUrl, api_key_env: "CHEAP_KEY" }],
      models: [
        {
          id: "think/claude",
          name: "Thinking Claude",
          created: 1700000000,
          creator: "think",
          context_length: 128000,
          max_completion_tokens: 4096,
          input_modalities: ["text"],
          output_modalities: ["text"],
          supported_parameters: ["max_tokens", "tools", "tool_choice", "reasoning"],
          providers: [{ provider: "anthropic", provider_model_id: "claude-think", pricing: { prompt: "0.000001", completion: "0.000002" } }],
        },
      ],
      organizations: [{ id: "org_test", name: "Test", credits: "1000", keys: [{ id: "key_test", env: "TEST_API_KEY" }] }],
    }),
  );
}

const weatherTool = {
  type: "function",
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};
const question = { role: "user", content: "Weather in Paris?" };
const firstTurn = { model: "think/claude", messages: [question], tools: [weatherTool], max_tokens: 4096, reasoning: { max_tokens: 2048 } };

/** The assistant turn as Anthropic must see it again: every block, each signature, in order. */
const EXPECTED_ANTHROPIC_TURN = [
  { type: "thinking", thinking: "First, which city.", signature: "sig-first" },
  { type: "redacted_thinking", data: "opaque-sealed-reasoning" },
  { type: "thinking", thinking: "Then, the units.", signature: "sig-second" },
  { type: "tool_use", id: TOOL_USE_ID, name: "get_weather", input: { city: "Paris" } },
];

describe("reasoning_details round trip (Anthropic thinking, redacted_thinking, thinking, tool use)", () => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  beforeAll(async () => {
    upstream = await startThinkingAnthropic();
    gateway = await startGateway(config(upstream.url));
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const post = (body: Json) =>
    fetch(`${gateway.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  /** Sends the second turn (the assistant message given, then the tool's result) and returns the assistant turn Anthropic received. */
  async function sendBack(assistant: Json): Promise<Json[]> {
    const before = upstream.requests.length;
    const response = await post({ ...firstTurn, messages: [question, assistant, { role: "tool", tool_call_id: TOOL_USE_ID, content: "21C, sunny" }] });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(((await response.json()) as Json).choices[0].message.content).toBe("Sunny, 21 degrees.");
    expect(upstream.requests.length - before).toBe(1);
    const sent = upstream.requests.at(-1)!.body;
    expect(sent.messages.map((m: Json) => m.role)).toEqual(["user", "assistant", "user"]);
    return sent.messages[1].content;
  }

  it("answers JSON with one reasoning_details entry per block, in order, each with its signature", async () => {
    const response = await post(firstTurn);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Json;
    expectValid("CreateChatCompletionResponse", body, "JSON answer");
    const message = body.choices[0].message;
    expect(message.reasoning_details).toEqual(EXPECTED_DETAILS);
    // The joined object stays as it was for the clients that read it.
    expect(message.reasoning).toEqual({ text: "First, which city.Then, the units.", signature: "sig-second", redacted: ["opaque-sealed-reasoning"] });
    expect(message.tool_calls).toEqual([{ id: TOOL_USE_ID, type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }]);

    // Appended unchanged, the answer reaches Anthropic block for block.
    expect(await sendBack(message)).toEqual(EXPECTED_ANTHROPIC_TURN);
    // Without reasoning_details, the joined object loses the first signature and the order (as before).
    const { reasoning_details: _, ...joinedOnly } = message;
    expect((await sendBack(joinedOnly)).map((block) => block.type)).toEqual(["thinking", "redacted_thinking", "tool_use"]);
  });

  it("streams each block's pieces as delta.reasoning_details with its index, the signature as its own delta", async () => {
    const text = await (await post({ ...firstTurn, stream: true })).text();
    const chunks = text
      .split("\n\n")
      .filter((event) => event.startsWith("data: {"))
      .map((event) => JSON.parse(event.slice(6)) as Json);
    for (const chunk of chunks) expectValid("CreateChatCompletionStreamResponse", chunk, "stream chunk");
    const deltas = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.reasoning_details ?? []);
    expect(deltas).toEqual([
      { type: "reasoning.text", text: "First, wh", index: 0 },
      { type: "reasoning.text", text: "ich city.", index: 0 },
      { type: "reasoning.text", text: "", signature: "sig-first", index: 0 },
      { type: "reasoning.encrypted", data: "opaque-sealed-reasoning", index: 1 },
      { type: "reasoning.text", text: "Then, th", index: 2 },
      { type: "reasoning.text", text: "e units.", index: 2 },
      { type: "reasoning.text", text: "", signature: "sig-second", index: 2 },
    ]);
    // Each chunk still carries the same piece in the older delta.reasoning.
    const older = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.reasoning ?? []);
    expect(older.map((r: Json) => r.signature ?? r.redacted?.[0] ?? r.text)).toEqual([
      "First, wh", "ich city.", "sig-first", "opaque-sealed-reasoning", "Then, th", "e units.", "sig-second",
    ]);

    // Put together by index, as a client does, the pieces are the JSON answer's entries.
    expect(mergeByIndex(deltas)).toEqual(EXPECTED_DETAILS);
    const toolCalls = [{ id: TOOL_USE_ID, type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }];
    expect(await sendBack({ role: "assistant", content: null, tool_calls: toolCalls, reasoning_details: mergeByIndex(deltas) })).toEqual(EXPECTED_ANTHROPIC_TURN);
    // Sent back as collected, piece by piece, they make the same blocks.
    expect(await sendBack({ role: "assistant", content: null, tool_calls: toolCalls, reasoning_details: deltas })).toEqual(EXPECTED_ANTHROPIC_TURN);
  });

  it("refuses an unknown reasoning_details type with a 400 naming the parameter", async () => {
    const assistant = { role: "assistant", content: "ok", reasoning_details: [{ type: "reasoning.unknown", index: 0 }] };
    const response = await post({ model: "think/claude", messages: [question, assistant, question] });
    expect(response.status).toBe(400);
    const error = ((await response.json()) as Json).error;
    expect(error.param).toBe("messages[1].reasoning_details[0].type");
    expect(error.message).toMatch(/must be one of reasoning\.text, reasoning\.encrypted, reasoning\.summary/);
  });
});

/** Streamed entries joined per index: texts and signatures concatenated. */
function mergeByIndex(deltas: Json[]): Json[] {
  const merged: Json[] = [];
  for (const delta of deltas) {
    const last = merged.at(-1);
    if (last && last.index === delta.index) {
      if (delta.text) last.text += delta.text;
      if (delta.signature) last.signature = (last.signature ?? "") + delta.signature;
      if (delta.data) last.data += delta.data;
    } else {
      merged.push({ ...delta });
    }
  }
  return merged;
}
