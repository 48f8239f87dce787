// The 5-minute and 1-hour prompt-cache writes are priced apart (issue 18, 5): Anthropic reports
// its writes split by lifetime (`cache_creation.ephemeral_5m_input_tokens` and
// `ephemeral_1h_input_tokens`); the 5-minute ones cost input_cache_write, the 1-hour ones
// input_cache_write_1h (twice the prompt price on an Anthropic route that sets none). The answer's
// usage.cost, the usage record and the balance all say so, JSON and streamed.
import Anthropic from "@anthropic-ai/sdk";
import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../../core/config/load.ts";
import { femtosOf, nanosRoundedUp } from "../../support/exact-money.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../support/harness.ts";
import { startRecordingServer, type FakeUpstream } from "../../support/recording-server.ts";

type Json = Record<string, any>;

/** What the upstream reports: 10 uncached, 5 read, 30 written (10 for 5 minutes, 20 for an hour), 7 out. */
const USAGE = {
  input_tokens: 10,
  cache_read_input_tokens: 5,
  cache_creation_input_tokens: 30,
  cache_creation: { ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 20 },
  output_tokens: 7,
};

const PRICES = { prompt: "0.000003", completion: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375" };

/** femto-dollars of USAGE at a 1-hour write price. */
const costWith1hPrice = (oneHour: string) =>
  10n * femtosOf(PRICES.prompt) + 5n * femtosOf(PRICES.input_cache_read) + 10n * femtosOf(PRICES.input_cache_write) + 20n * femtosOf(oneHour) + 7n * femtosOf(PRICES.completion);

function answer({ body }: { body: Json }, res: http.ServerResponse) {
  const message = { id: "msg_1", type: "message", role: "assistant", model: body.model, stop_sequence: null };
  if (!body.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ ...message, content: [{ type: "text", text: "Cached." }], stop_reason: "end_turn", usage: USAGE }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (event: string, data: Json) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  send("message_start", { message: { ...message, content: [], stop_reason: null, usage: { ...USAGE, output_tokens: 1 } } });
  send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
  send("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Cached." } });
  send("content_block_stop", { index: 0 });
  send("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 7 } });
  send("message_stop", {});
  res.end();
}

describe("5-minute and 1-hour cache writes", () => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  let client: Anthropic;

  beforeAll(async () => {
    upstream = await startRecordingServer("/v1", answer);
    const model = (id: string, pricing: Record<string, string>) => ({
      id,
      name: id,
      created: 1700000000,
      creator: "cache",
      context_length: 200000,
      max_completion_tokens: 1000,
      input_modalities: ["text"],
      output_modalities: ["text"],
      supported_parameters: ["max_tokens"],
      providers: [{ provider: "anthropic", provider_model_id: "claude-cache", pricing }],
    });
    const config = parseConfig(
      JSON.stringify({
        providers: [{ id: "anthropic", label: "Anthropic", protocol: "anthropic", base_url: upstream.url, api_key_env: "CHEAP_KEY" }],
        models: [model("cache/priced", { ...PRICES, input_cache_write_1h: "0.000005" }), model("cache/default", PRICES)],
        organizations: [{ id: "org_test", name: "Test", credits: "100", keys: [{ id: "key_test", env: "TEST_API_KEY" }] }],
      }),
    );
    gateway = await startGateway(config);
    client = new Anthropic({ apiKey: TEST_KEY, baseURL: gateway.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const balance = async () => {
    await gateway.core.accounts.idle();
    return gateway.core.accounts.stores.credits.balance("org_test");
  };

  const cases = [
    { model: "cache/priced", oneHour: "0.000005", stream: false },
    { model: "cache/priced", oneHour: "0.000005", stream: true },
    // No input_cache_write_1h: twice the prompt price on an Anthropic route.
    { model: "cache/default", oneHour: "0.000006", stream: false },
    { model: "cache/default", oneHour: "0.000006", stream: true },
  ];

  it.each(cases)("$model (stream: $stream): each write at its own lifetime's price", async ({ model, oneHour, stream }) => {
    const expected = costWith1hPrice(oneHour);
    // Else the split would not show: every write at one price costs something else.
    expect(expected).not.toBe(costWith1hPrice(PRICES.input_cache_write));
    const before = await balance();
    const params = { model, max_tokens: 100, messages: [{ role: "user" as const, content: "Hi" }] };
    const message = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
    expect(message.usage).toMatchObject({ input_tokens: 10, cache_read_input_tokens: 5, cache_creation_input_tokens: 30, output_tokens: 7 });
    if (!stream) expect(femtosOf((message.usage as unknown as { cost: number }).cost)).toBe(expected);
    await gateway.core.accounts.idle();
    const record = await gateway.core.accounts.usage.get("org_test", message.id);
    expect(record).toMatchObject({ cacheWriteTokens: 30, cachedTokens: 5, promptTokens: 45, completionTokens: 7 });
    expect(femtosOf(record!.cost)).toBe(expected);
    expect(await balance()).toBe(before - nanosRoundedUp(expected));
  });
});
