// End to end: the Interactions format through the official @google/genai SDK's
// interactions calls (create, continue by previous_interaction_id, get with and
// without include_input, delete, stream) against the gateway, on the fake
// OpenAI-compatible, Anthropic, Gemini and Gemini Interactions upstreams (each
// through the hub), with a function-call round and thinking, and on the
// simulator. Errors come in the spec's body, which the SDK reads.
import { GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeUpstream } from "../../../support/fake-openai-upstream.ts";
import { expectEventIdsInStreamOrder } from "../../../support/genai-interactions-schema.ts";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../../support/harness.ts";
import { closeProtocolUpstreams, lastSent, protocolConfig, PROTOCOLS, startProtocolUpstreams, urlsOf, type Protocol } from "../../../support/protocol-upstreams.ts";

type Json = Record<string, any>;

const OTHER_KEY = "sk-other-org";

const UPSTREAM_MODEL: Record<Protocol, string> = {
  "openai-compatible": "gpt-conversation",
  anthropic: "claude-conversation",
  gemini: "gemini-3-conversation",
  "gemini-interactions": "gemini-3-conversation",
};
const weatherTool = {
  type: "function" as const,
  name: "get_weather",
  description: "Current weather of a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const SETTINGS = { tools: [weatherTool], generation_config: { thinking_level: "high" as const, max_output_tokens: 4096 } };

/** The SDK at the gateway's /v1 (its interactions path is /{api_version}/interactions). */
const sdkAt = (gateway: Gateway) => new GoogleGenAI({ apiKey: TEST_KEY, httpOptions: { baseUrl: gateway.url, apiVersion: "v1" } });

/** Streams a create through the SDK: every event, the last data frame interaction.completed. */
async function streamed(ai: GoogleGenAI, body: Json): Promise<{ events: Json[]; interaction: Json }> {
  const stream = await ai.interactions.create({ ...body, stream: true } as never);
  const events: Json[] = [];
  for await (const event of stream as unknown as AsyncIterable<Json>) events.push(event);
  const last = events.at(-1)!;
  expect(last.event_type).toBe("interaction.completed");
  expectEventIdsInStreamOrder(events);
  return { events, interaction: last.interaction };
}

describe("interactions on every provider protocol through the hub", () => {
  let upstreams: Record<Protocol, FakeUpstream>;
  let gateway: Gateway;
  let ai: GoogleGenAI;

  beforeAll(async () => {
    upstreams = await startProtocolUpstreams();
    gateway = await startGateway(protocolConfig(urlsOf(upstreams), "conv", UPSTREAM_MODEL));
    ai = sdkAt(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    if (upstreams) await closeProtocolUpstreams(upstreams);
  });

  const create = async (body: Json, mode: "create" | "stream"): Promise<Json> => {
    const interaction = mode === "create" ? ((await ai.interactions.create(body as never)) as Json) : (await streamed(ai, body)).interaction;
    await gateway.core.conversations.idle();
    return interaction;
  };

  for (const protocol of PROTOCOLS) {
    for (const mode of ["create", "stream"] as const) {
      it(`${protocol} (${mode}): a tool round continued by previous_interaction_id, then got and deleted`, async () => {
        const upstream = upstreams[protocol];
        const first = await create({ model: `conv/${protocol}`, input: "Weather in Paris?", system_instruction: "Be brief.", ...SETTINGS }, mode);
        expect(first).toMatchObject({ object: "interaction", status: "completed", model: protocol });
        expect(first.id).toMatch(/^\S+$/);
        expect(new Date(first.created).toISOString()).toBe(first.created);
        expect(first.steps.map((step: Json) => step.type)).toEqual(["thought", "function_call"]);
        // Signed thinking comes back signed (OpenAI's reasoning has no signature).
        if (protocol !== "openai-compatible") expect(first.steps[0].signature).toEqual(expect.any(String));
        const call = first.steps[1];
        expect(call).toMatchObject({ name: "get_weather", arguments: { city: "Paris" } });
        expect(first.usage).toMatchObject({ total_input_tokens: expect.any(Number), chat_id: first.id, cost: expect.any(Number) });
        expect(first.usage.total_tokens).toBe(first.usage.total_input_tokens + first.usage.total_output_tokens + first.usage.total_thought_tokens);

        const second = await create(
          { model: `conv/${protocol}`, previous_interaction_id: first.id, system_instruction: "Be brief.", ...SETTINGS, input: [{ type: "function_result", call_id: call.id, name: "get_weather", result: '{"celsius":21}' }] },
          mode,
        );
        expect(second.previous_interaction_id).toBe(first.id);
        expect(second.outputs).toEqual([{ type: "text", text: expect.any(String) }]);
        expect(second.steps.at(-1)).toEqual({ type: "model_output", content: second.outputs });
        // The upstream's model has the whole conversation (Gemini Interactions keeps it: the call's interaction and the result).
        const sent = JSON.stringify(lastSent(upstreams, protocol));
        expect(sent).toContain("Weather in Paris?");
        expect(sent).toContain("celsius");

        const got = (await ai.interactions.get(second.id)) as Json;
        expect(got).toMatchObject({ id: second.id, object: "interaction", status: "completed", previous_interaction_id: first.id, model: protocol });
        expect(got.steps).toEqual(second.steps);
        // The SDK's create adds its own bookkeeping (initial_input_tokens) to the usage it returns.
        expect(second.usage).toMatchObject(got.usage);
        const withInput = (await ai.interactions.get(second.id, { include_input: true })) as Json;
        expect(withInput.steps).toEqual([{ type: "function_result", call_id: call.id, result: '{"celsius":21}' }, ...second.steps]);
        const firstWithInput = (await ai.interactions.get(first.id, { include_input: true })) as Json;
        expect(firstWithInput.steps[0]).toEqual({ type: "user_input", content: [{ type: "text", text: "Weather in Paris?" }] });

        // Stateless: the timeline sent back whole (thought signatures included) reaches the upstream as it was signed.
        const replayed = await create(
          {
            model: `conv/${protocol}`,
            store: false,
            ...SETTINGS,
            input: [{ type: "user_input", content: [{ type: "text", text: "Weather in Paris?" }] }, ...first.steps, { type: "function_result", call_id: call.id, result: '{"celsius":21}' }],
          },
          mode,
        );
        expect(replayed.outputs).toEqual(second.outputs);
        if (protocol !== "openai-compatible") expect(JSON.stringify(upstream.requests.at(-1)!.body)).toContain(first.steps[0].signature.replace(/^[a-z-]+:/, ""));

        await ai.interactions.delete(second.id);
        const gone = await ai.interactions.get(second.id).catch((error: unknown) => error);
        expect(gone).toMatchObject({ status: 404 });
      });
    }
  }
});

describe("interactions on the simulator", () => {
  let gateway: Gateway;
  let ai: GoogleGenAI;

  beforeAll(async () => {
    const config = testConfig("http://127.0.0.1:9");
    const [test] = config.organizations;
    config.organizations.push({ ...test, id: "org_other", keys: [{ ...test.keys[0], id: "key_other", env: "OTHER_API_KEY" }] });
    gateway = await startGateway(config, { env: { OTHER_API_KEY: OTHER_KEY } });
    ai = sdkAt(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it("answers a string input with the text as outputs and the model bare, by catalogue id or bare name", async () => {
    for (const model of ["simulator/echo", "echo"]) {
      const interaction = (await ai.interactions.create({ model, input: "Hello there" } as never)) as Json;
      expect(interaction).toMatchObject({ object: "interaction", status: "completed", model: "echo" });
      expect(interaction.outputs[0].type).toBe("text");
      expect((interaction as { output_text?: string }).output_text).toBe(interaction.outputs[0].text);
    }
  });

  it("streams step events ending with the completed interaction and [DONE]", async () => {
    const { events, interaction } = await streamed(ai, { model: "simulator/echo", input: [{ type: "text", text: "Hi" }] });
    expect(events.slice(0, 2).map((event) => event.event_type)).toEqual(["interaction.created", "interaction.status_update"]);
    expect(events.some((event) => event.event_type === "step.delta" && event.delta.type === "text")).toBe(true);
    const text = events.filter((event) => event.event_type === "step.delta").map((event) => event.delta.text).join("");
    expect(interaction.outputs).toEqual([{ type: "text", text }]);
    const raw = await fetch(`${gateway.url}/api/v1/interactions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "simulator/echo", input: "Hi", stream: true }),
    });
    expect((await raw.text()).trimEnd().endsWith("data: [DONE]")).toBe(true);
  });

  it("refuses an unknown model, a field not served yet and a missing key in the spec's error body", async () => {
    const unknown = await ai.interactions.create({ model: "no-such-model", input: "Hi" } as never).catch((error: unknown) => error);
    expect(unknown).toMatchObject({ status: 400 });
    expect((unknown as Error).message).toContain("no-such-model");
    const post = (body: Json, headers: Record<string, string> = { "x-goog-api-key": TEST_KEY }) =>
      fetch(`${gateway.url}/v1/interactions`, { method: "POST", headers: { "content-type": "application/json", "api-revision": "2026-05-20", ...headers }, body: JSON.stringify(body) });
    const background = await post({ model: "simulator/echo", input: "Hi", background: true, store: false });
    expect(background.status).toBe(400);
    expect(((await background.json()) as Json).error).toMatchObject({ param: "background", type: "invalid_request_error" });
    const video = await post({ model: "simulator/echo", input: "Hi", response_format: { type: "video" } });
    expect(video.status).toBe(400);
    const keyless = await post({ model: "simulator/echo", input: "Hi" }, {});
    expect(keyless.status).toBe(401);
    expect(((await keyless.json()) as Json).error.message).toContain("x-goog-api-key");
  });

  it("answers 404 for another organisation's interaction", async () => {
    const interaction = (await ai.interactions.create({ model: "simulator/echo", input: "Hi" } as never)) as Json;
    await gateway.core.conversations.idle();
    for (const method of ["GET", "DELETE"]) {
      const other = await fetch(`${gateway.url}/v1/interactions/${interaction.id}`, { method, headers: { "x-goog-api-key": OTHER_KEY } });
      expect(other.status).toBe(404);
    }
    // Still there for its own organisation; its delete answers the spec's delete result.
    const deleted = await fetch(`${gateway.url}/api/v1/interactions/${interaction.id}`, { method: "DELETE", headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(await deleted.json()).toEqual({ id: interaction.id, object: "interaction", deleted: true });
  });
});
