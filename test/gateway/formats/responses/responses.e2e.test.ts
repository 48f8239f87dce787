// End to end: the official openai SDK's Responses client against the gateway
// on the simulator (in-process and split over Connect/HTTP2). Every response
// object and every stream event is checked against OpenAI's published schema.
import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileAgainstSpec, describeErrors, specRef } from "../../../support/openai-schema.ts";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../../support/harness.ts";

const responseSchema = () => compileAgainstSpec(specRef("Response"));
const eventSchema = () => compileAgainstSpec(specRef("ResponseStreamEvent"));
let validateResponse: ReturnType<typeof responseSchema>;
let validateEvent: ReturnType<typeof eventSchema>;

function expectValidResponse(data: unknown) {
  const ok = validateResponse(data);
  expect(ok ? [] : describeErrors(validateResponse.errors ?? []), JSON.stringify(data)).toEqual([]);
}

function expectValidEvent(data: unknown) {
  const ok = validateEvent(data);
  expect(ok ? [] : describeErrors(validateEvent.errors ?? []).slice(0, 5), JSON.stringify(data)).toEqual([]);
}

/** The router's usage fields, which the SDK's types do not know. */
type RouterUsage = OpenAI.Responses.ResponseUsage & { cost: number; chat_id: string; provider: string };

const weatherTool: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};

/** Raw SSE from the gateway: each frame's event name and parsed data. */
async function rawStream(gateway: Gateway, body: object) {
  const response = await fetch(`${gateway.apiUrl}/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  expect(response.status).toBe(200);
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((frame) => frame.trim() !== "")
    .map((frame) => {
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = JSON.parse(/^data: (.*)$/m.exec(frame)![1]) as Record<string, any>;
      return { event, data };
    });
}

describe.each([{ split: false }, { split: true }])("responses through the openai SDK (split: $split)", ({ split }) => {
  let gateway: Gateway;
  let client: OpenAI;

  beforeAll(async () => {
    validateResponse = responseSchema();
    validateEvent = eventSchema();
    gateway = await startGateway(testConfig("http://127.0.0.1:9"), { split });
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it("answers a string input with a completed response: one message item, usage with cost, chat_id and provider", async () => {
    const response = await client.responses.create({ model: "simulator/echo", input: "Hello there", instructions: "Be brief.", metadata: { run: "e2e" }, temperature: 0.5 });
    expectValidResponse(response);
    expect(response.object).toBe("response");
    expect(response.status).toBe("completed");
    expect(response.model).toBe("echo");
    expect(response.background).toBe(false);
    expect(response.error).toBeNull();
    expect(response.instructions).toBe("Be brief.");
    expect(response.metadata).toEqual({ run: "e2e" });
    expect(response.temperature).toBe(0.5);
    expect((response as unknown as { store: boolean }).store).toBe(true);
    expect(response.output).toHaveLength(1);
    const [message] = response.output;
    expect(message).toMatchObject({ type: "message", role: "assistant", status: "completed", id: `${response.id}_0` });
    expect(response.output_text).toBe("You said: Hello there");
    const usage = response.usage as RouterUsage;
    expect(usage.input_tokens).toBeGreaterThan(0);
    expect(usage.output_tokens).toBe(4);
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
    expect(usage.input_tokens_details.cached_tokens).toBe(0);
    expect(usage.output_tokens_details.reasoning_tokens).toBe(0);
    expect(usage.cost).toBeGreaterThan(0);
    expect(usage.chat_id).toBe(response.id);
    expect(usage.provider).toBe("simulator");
  });

  it("carries the routing headers as chat does", async () => {
    const { response, data } = await client.responses.create({ model: "simulator/echo", input: "Hi" }).withResponse();
    expect(data.status).toBe("completed");
    expect(response.headers.get("x-router-provider")).toBe("simulator");
    expect(response.headers.get("x-router-trace")).toContain("simulator");
  });

  it("takes an array of items with input_text parts and a developer message", async () => {
    const response = await client.responses.create({
      model: "simulator/echo",
      input: [
        { role: "developer", content: "Answer plainly." },
        { type: "message", role: "user", content: [{ type: "input_text", text: "First part" }, { type: "input_text", text: "second part" }] },
      ],
    });
    expectValidResponse(response);
    expect(response.output_text).toBe("You said: First part second part");
  });

  it("says incomplete with max_output_tokens when the limit cut the answer", async () => {
    const response = await client.responses.create({ model: "simulator/echo", input: "one two three four five six", max_output_tokens: 2 });
    expectValidResponse(response);
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(response.max_output_tokens).toBe(2);
    expect(response.output_text).toBe("You said: ");
    // The item the limit cut says so, as OpenAI marks it.
    expect(response.output.map((item) => (item as { status?: string }).status)).toEqual(["incomplete"]);
  });

  it("answers reasoning as a reasoning item with its summary and the signature as encrypted_content", async () => {
    const response = await client.responses.create({ model: "simulator/reasoning", input: "Think", reasoning: { effort: "low", summary: "auto" } });
    expectValidResponse(response);
    expect(response.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    const reasoning = response.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary).toEqual([{ type: "summary_text", text: "Considering the request: Think" }]);
    expect(reasoning.encrypted_content).toMatch(/^sig@simulator:sim_/);
    expect(response.reasoning).toEqual({ effort: "low", summary: "auto" });
    expect((response.usage as RouterUsage).output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
  });

  it("runs a function-call round trip: the call, then its output sent back with the call", async () => {
    const first = await client.responses.create({ model: "simulator/tool-call", input: "Weather in Paris?", tools: [weatherTool], tool_choice: "auto" });
    expectValidResponse(first);
    expect(first.output).toHaveLength(1);
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ type: "function_call", name: "get_weather", status: "completed" });
    expect(JSON.parse(call.arguments)).toEqual({ input: "Weather in Paris?" });
    expect(first.tools).toEqual([{ ...weatherTool }]);
    const second = await client.responses.create({
      model: "simulator/tool-call",
      tools: [weatherTool],
      input: [
        { role: "user", content: "Weather in Paris?" },
        { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: "function_call_output", call_id: call.call_id, output: "Sunny, 21 C" },
      ],
      store: false,
    });
    expectValidResponse(second);
    expect(second.output_text).toBe("The tool returned: Sunny, 21 C");
  });

  it("continues a stored conversation through previous_response_id: the history is the second turn's prompt", async () => {
    const first = await client.responses.create({ model: "simulator/echo", input: "My name is Ada" });
    await gateway.core.conversations.idle();
    const alone = await client.responses.create({ model: "simulator/echo", input: "What is my name?", store: false });
    const second = await client.responses.create({ model: "simulator/echo", input: "What is my name?", previous_response_id: first.id });
    expectValidResponse(second);
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output_text).toBe("You said: What is my name?");
    // The first turn's input and output are replayed before the new input.
    expect(second.usage!.input_tokens).toBe(alone.usage!.input_tokens + first.usage!.input_tokens + 3 + first.usage!.output_tokens);
  });

  it("continues through a function-call round with previous_response_id alone", async () => {
    const first = await client.responses.create({ model: "simulator/tool-call", input: "Weather in Rome?", tools: [weatherTool] });
    await gateway.core.conversations.idle();
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    const second = await client.responses.create({
      model: "simulator/tool-call",
      tools: [weatherTool],
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "Rainy" }],
    });
    expect(second.output_text).toBe("The tool returned: Rainy");
  });

  it("keeps nothing with store: false, so previous_response_id to it is a 400 naming previous_response_id", async () => {
    const first = await client.responses.create({ model: "simulator/echo", input: "Forget me", store: false });
    expect((first as unknown as { store: boolean }).store).toBe(false);
    await gateway.core.conversations.idle();
    const error = await client.responses.create({ model: "simulator/echo", input: "Again", previous_response_id: first.id }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(400);
    expect((error as APIError).param).toBe("previous_response_id");
    expect((error as APIError).code).toBe("previous_response_not_found");
  });

  it("streams the official event sequence, numbered, each valid against the schema, ending with response.completed", async () => {
    const frames = await rawStream(gateway, { model: "simulator/echo", input: "Stream this please" });
    for (const { event, data } of frames) {
      expect(event).toBe(data.type);
      expectValidEvent(data);
    }
    expect(frames.map(({ data }) => data.sequence_number)).toEqual(frames.map((_, i) => i));
    expect(frames.map(({ data }) => data.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      ...Array(5).fill("response.output_text.delta"),
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(frames[0].data.response).toMatchObject({ status: "in_progress", output: [] });
    expect(frames[0].data.response.usage).toBeUndefined();
    const completed = frames.at(-1)!.data.response;
    expect(completed.status).toBe("completed");
    expect(completed.output[0].content[0].text).toBe("You said: Stream this please");
    expect(completed.usage.chat_id).toBe(completed.id);
  });

  it("streams reasoning summary and function-call argument events", async () => {
    const reasoning = await rawStream(gateway, { model: "simulator/reasoning", input: "Think" });
    for (const { data } of reasoning) expectValidEvent(data);
    const types = reasoning.map(({ data }) => data.type);
    expect(types.slice(0, 4)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.reasoning_summary_part.added"]);
    expect(types).toContain("response.reasoning_summary_text.delta");
    expect(types).toContain("response.reasoning_summary_text.done");
    expect(types).toContain("response.reasoning_summary_part.done");
    const reasoningDone = reasoning.find(({ data }) => data.type === "response.output_item.done")!.data.item;
    expect(reasoningDone.encrypted_content).toMatch(/^sig@simulator:/);

    const tool = await rawStream(gateway, { model: "simulator/tool-call", input: "Weather?", tools: [weatherTool] });
    for (const { data } of tool) expectValidEvent(data);
    expect(tool.map(({ data }) => data.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
  });

  it("streams response.incomplete when the limit cut the answer", async () => {
    const frames = await rawStream(gateway, { model: "simulator/echo", input: "one two three four five", max_output_tokens: 2 });
    for (const { data } of frames) expectValidEvent(data);
    const last = frames.at(-1)!.data;
    expect(last.type).toBe("response.incomplete");
    expect(last.response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    const itemDone = frames.filter(({ data }) => data.type === "response.output_item.done");
    expect(itemDone.map(({ data }) => data.item.status)).toEqual(["incomplete"]);
    expect(last.response.output.map((item: { status: string }) => item.status)).toEqual(["incomplete"]);
  });

  it("works with client.responses.stream: events and finalResponse", async () => {
    const stream = client.responses.stream({ model: "simulator/echo", input: "Streamed through the SDK" });
    let text = "";
    stream.on("response.output_text.delta", (event) => {
      text += event.delta;
    });
    const final = await stream.finalResponse();
    expect(text).toBe("You said: Streamed through the SDK");
    expect(final.status).toBe("completed");
    expect(final.output_text).toBe(text);
    expectValidResponse(JSON.parse(JSON.stringify(final)));
  });

  it("sends an in-band error event, then response.failed, when the answer breaks off after the stream started", async () => {
    const frames = await rawStream(gateway, { model: "simulator/cut-mid-stream", input: "one two three four five six seven eight" });
    for (const { data } of frames) expectValidEvent(data);
    const types = frames.map(({ data }) => data.type);
    expect(types.slice(-2)).toEqual(["error", "response.failed"]);
    expect(frames.at(-1)!.data.response).toMatchObject({ status: "failed", error: { code: "server_error" } });
    expect(frames.map(({ data }) => data.sequence_number)).toEqual(frames.map((_, i) => i));
  });
});

describe("responses request validation", () => {
  let gateway: Gateway;
  let client: OpenAI;

  beforeAll(async () => {
    gateway = await startGateway(testConfig("http://127.0.0.1:9"));
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  const post = async (body: unknown) => {
    const response = await fetch(`${gateway.apiUrl}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as { error: { message: string; param: string | null; code: string; type: string } } };
  };

  it.each([
    [{ input: "Hi" }, "model", "model is required"],
    [{ model: "simulator/echo" }, "input", "input is required"],
    [{ model: "simulator/echo", input: 5 }, "input", "input must be a string or an array of input items"],
    [{ model: "simulator/echo", input: "Hi", background: true, store: false }, "background", "background requires store to be true (a background response is read back from the store)"],
    [{ model: "simulator/echo", input: "Hi", temperature: 3 }, "temperature", "temperature must be between 0 and 2"],
    [{ model: "simulator/echo", input: "Hi", max_output_tokens: 0 }, "max_output_tokens", "max_output_tokens must be at least 1"],
    [{ model: "simulator/echo", input: "Hi", frobnicate: 1 }, "frobnicate", "frobnicate is not a supported parameter"],
    [{ model: "simulator/echo", input: [{ role: "robot", content: "Hi" }] }, "input[0].role", "input[0].role must be one of user, assistant, system, developer"],
    [{ model: "simulator/echo", input: [{ type: "message", role: "user", content: [{ type: "input_image" }] }] }, "input[0].content[0]", "input[0].content[0] must have image_url or file_id"],
    [{ model: "simulator/echo", input: [{ type: "function_call", name: "f", arguments: "{}" }] }, "input[0].call_id", "input[0].call_id is required"],
    [{ model: "simulator/echo", input: [{ type: "teleport" }] }, "input[0].type", undefined],
    [{ model: "simulator/echo", input: "Hi", tool_choice: { type: "function", name: "nope" } }, "tool_choice", "tool_choice names the tool nope, which is not in tools"],
    [{ model: "simulator/echo", input: "Hi", text: { format: { type: "json_schema", name: "x" } } }, "text.format.schema", "text.format.schema is required"],
    [{ model: "simulator/echo", input: "Hi", previous_response_id: "resp_nope" }, "previous_response_id", undefined],
  ])("%j -> 400 naming %s", async (body, param, message) => {
    const { status, body: answer } = await post(body);
    expect(status).toBe(400);
    expect(answer.error.param).toBe(param);
    if (message) expect(answer.error.message).toBe(message);
  });

  it("passes null as absent, as OpenAI clients send unset fields", async () => {
    const { status } = await post({ model: "simulator/echo", input: "Hi", instructions: null, temperature: null, tools: null, metadata: null });
    expect(status).toBe(200);
  });

  it("accepts the router-only fields (models, provider, request_tags)", async () => {
    const response = await client.responses.create({
      model: "simulator/echo",
      input: "Hi",
      // Router fields the SDK's types do not know.
      ...({ models: ["simulator/slow"], provider: { only: ["simulator"] }, request_tags: ["responses"] } as object),
    });
    expect(response.status).toBe("completed");
  });
});
