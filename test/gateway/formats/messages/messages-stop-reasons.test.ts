// Messages' stop_reason (issue 18, 5): an answer the provider cut at its token limit is
// `max_tokens` on every protocol (OpenAI-compatible `length`, Anthropic `max_tokens`, Gemini
// `MAX_TOKENS`, the simulator's limit), JSON and streamed through the Anthropic SDK; and a stop
// reason only Anthropic has (`pause_turn`) reaches the caller as it is, not as end_turn.
import Anthropic from "@anthropic-ai/sdk";
import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../../../core/config/load.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { startRecordingServer, type FakeUpstream } from "../../../support/recording-server.ts";

type Json = Record<string, any>;
const TEXT = "Truncated ans";

function sse(res: http.ServerResponse, frames: { event?: string; data: unknown }[]) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const { event, data } of frames) res.write(`${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  res.end();
}
function json(res: http.ServerResponse, body: unknown) {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** OpenAI-compatible: `finish_reason: "length"`. */
function openAiAnswer({ body }: { body: Json }, res: http.ServerResponse) {
  const base = { id: "chatcmpl-1", created: 1, model: body.model };
  const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
  if (!body.stream) return json(res, { ...base, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: TEXT }, finish_reason: "length" }], usage });
  sse(res, [
    { data: { ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta: { role: "assistant", content: TEXT }, finish_reason: null }] } },
    { data: { ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "length" }] } },
    { data: { ...base, object: "chat.completion.chunk", choices: [], usage } },
    { data: "[DONE]" },
  ]);
}

/** Anthropic: the stop reason the model names (max_tokens, or pause_turn for the "pause" model). */
function anthropicAnswer({ body }: { body: Json }, res: http.ServerResponse) {
  const stopReason = String(body.model).includes("pause") ? "pause_turn" : "max_tokens";
  const usage = { input_tokens: 3, output_tokens: 2 };
  const message = { id: "msg_1", type: "message", role: "assistant", model: body.model, stop_sequence: null };
  if (!body.stream) return json(res, { ...message, content: [{ type: "text", text: TEXT }], stop_reason: stopReason, usage });
  sse(res, [
    { event: "message_start", data: { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 1 } } } },
    { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
    { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: TEXT } } },
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 2 } } },
    { event: "message_stop", data: { type: "message_stop" } },
  ]);
}

/** Gemini: `finishReason: "MAX_TOKENS"`. */
function geminiAnswer({ path }: { path: string }, res: http.ServerResponse) {
  const answer = {
    candidates: [{ content: { parts: [{ text: TEXT }], role: "model" }, finishReason: "MAX_TOKENS", index: 0 }],
    usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
  };
  if (path.includes("streamGenerateContent")) return sse(res, [{ data: answer }]);
  json(res, answer);
}

describe("Messages stop_reason on every protocol", () => {
  let upstreams: FakeUpstream[];
  let gateway: Gateway;
  let client: Anthropic;

  beforeAll(async () => {
    upstreams = await Promise.all([startRecordingServer("/v1", openAiAnswer), startRecordingServer("/v1", anthropicAnswer), startRecordingServer("/v1beta", geminiAnswer)]);
    const [openai, anthropic, gemini] = upstreams.map((upstream) => upstream.url);
    const model = (id: string, provider: string, providerModelId: string) => ({
      id,
      name: id,
      created: 1700000000,
      creator: "stop",
      context_length: 8192,
      max_completion_tokens: 1000,
      input_modalities: ["text"],
      output_modalities: ["text"],
      supported_parameters: ["max_tokens"],
      providers: [{ provider, provider_model_id: providerModelId, pricing: { prompt: "0.000001", completion: "0.000001" } }],
    });
    const config = parseConfig(
      JSON.stringify({
        providers: [
          { id: "openai", label: "OpenAI", protocol: "openai-compatible", base_url: openai, api_key_env: "CHEAP_KEY" },
          { id: "anthropic", label: "Anthropic", protocol: "anthropic", base_url: anthropic, api_key_env: "CHEAP_KEY" },
          { id: "gemini", label: "Gemini", protocol: "gemini", base_url: gemini, api_key_env: "CHEAP_KEY" },
          { id: "simulator", label: "Simulator", protocol: "simulator", chunk_delay_ms: 0 },
        ],
        models: [
          model("stop/openai-compatible", "openai", "truncating"),
          model("stop/anthropic", "anthropic", "truncating"),
          model("stop/gemini", "gemini", "truncating"),
          model("stop/simulator", "simulator", "echo"),
          model("stop/anthropic-pause", "anthropic", "pause"),
        ],
        organizations: [{ id: "org_test", name: "Test", credits: "100", keys: [{ id: "key_test", env: "TEST_API_KEY" }] }],
      }),
    );
    gateway = await startGateway(config);
    client = new Anthropic({ apiKey: TEST_KEY, baseURL: gateway.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await Promise.all((upstreams ?? []).map((upstream) => upstream.close()));
  });

  // The simulator stops at max_tokens words of its echo.
  const params = (model: string) => ({ model, max_tokens: 2, messages: [{ role: "user" as const, content: "one two three four five" }] });

  describe.each(["openai-compatible", "anthropic", "gemini", "simulator"])("%s", (protocol) => {
    it("JSON: a truncated answer stops with max_tokens", async () => {
      const message = await client.messages.create(params(`stop/${protocol}`));
      expect(message.stop_reason).toBe("max_tokens");
      expect(message.content[0]).toMatchObject({ type: "text" });
    });

    it("streamed: message_delta says max_tokens", async () => {
      const stream = client.messages.stream(params(`stop/${protocol}`));
      const deltas: string[] = [];
      stream.on("streamEvent", (event) => {
        if (event.type === "message_delta") deltas.push(String(event.delta.stop_reason));
      });
      const message = await stream.finalMessage();
      expect(deltas).toEqual(["max_tokens"]);
      expect(message.stop_reason).toBe("max_tokens");
    });
  });

  it("Anthropic's own pause_turn is kept, JSON and streamed", async () => {
    expect((await client.messages.create(params("stop/anthropic-pause"))).stop_reason).toBe("pause_turn");
    expect((await client.messages.stream(params("stop/anthropic-pause")).finalMessage()).stop_reason).toBe("pause_turn");
  });
});
