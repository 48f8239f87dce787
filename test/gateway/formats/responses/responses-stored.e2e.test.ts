// End to end: the stored side of the Responses API through the official
// openai SDK (retrieve, inputItems.list, delete, background create, cancel),
// in-process and split over Connect, against the simulator and the fake
// OpenAI-compatible upstream. Each Response and item list is checked against
// OpenAI's published schema.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TurnSchema, TurnStatus } from "../../../../gen/router/v1/conversations_pb.js";
import { startFakeUpstream, type FakeUpstream } from "../../../support/fake-openai-upstream.ts";
import { compileAgainstSpec, describeErrors, specRef } from "../../../support/openai-schema.ts";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../../support/harness.ts";

let validateResponse: ReturnType<typeof compileAgainstSpec>;
let validateItemList: ReturnType<typeof compileAgainstSpec>;

function expectValid(validate: ReturnType<typeof compileAgainstSpec>, data: unknown) {
  const ok = validate(data);
  expect(ok ? [] : describeErrors(validate.errors ?? []).slice(0, 5), JSON.stringify(data)).toEqual([]);
}

const weatherTool: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "get_weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};

async function apiErrorOf(promise: Promise<unknown>): Promise<APIError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(APIError);
  return error as APIError;
}

describe.each([{ split: false }, { split: true }])("stored responses through the openai SDK (split: $split)", ({ split }) => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  let client: OpenAI;

  beforeAll(async () => {
    validateResponse = compileAgainstSpec(specRef("Response"));
    validateItemList = compileAgainstSpec(specRef("ResponseItemList"));
    upstream = await startFakeUpstream();
    gateway = await startGateway(testConfig(upstream.url), { split });
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const stored = async <T>(made: Promise<T>) => {
    const value = await made;
    await gateway.core.conversations.idle();
    return value;
  };

  it("retrieves a stored response as it was answered, with its settings echoed", async () => {
    const created = await stored(
      client.responses.create({ model: "simulator/echo", input: "Hello there", instructions: "Be brief.", metadata: { run: "stored" }, temperature: 0.5, tools: [weatherTool] }),
    );
    const retrieved = await client.responses.retrieve(created.id);
    expectValid(validateResponse, retrieved);
    expect(retrieved).toMatchObject({
      id: created.id,
      status: "completed",
      model: created.model,
      instructions: "Be brief.",
      metadata: { run: "stored" },
      temperature: 0.5,
      background: false,
      created_at: created.created_at,
    });
    expect(retrieved.output).toEqual(created.output);
    expect(retrieved.output_text).toBe(created.output_text);
    expect(retrieved.completed_at).toBeGreaterThanOrEqual(created.created_at);
    expect(retrieved.usage).toEqual(created.usage);
    expect(retrieved.tools).toEqual(created.tools);
  });

  it("retrieves a function call with the ids, call id and arguments it was answered with", async () => {
    const created = await stored(client.responses.create({ model: "simulator/tool-call", input: "Weather in Rome?", tools: [weatherTool] }));
    const retrieved = await client.responses.retrieve(created.id);
    expectValid(validateResponse, retrieved);
    expect(retrieved.output).toEqual(created.output);
  });

  it("answers 404 for an unknown id, and for a response kept with store: false", async () => {
    expect((await apiErrorOf(client.responses.retrieve("resp_nope"))).status).toBe(404);
    const unstored = await stored(client.responses.create({ model: "simulator/echo", input: "Forget me", store: false }));
    expect((await apiErrorOf(client.responses.retrieve(unstored.id))).status).toBe(404);
  });

  it("lists the input items newest first by default, pages with after and limit, and orders asc", async () => {
    const created = await stored(
      client.responses.create({
        model: "simulator/echo",
        input: [
          { role: "developer", content: "Not kept: instructions apply to their own request." },
          { role: "user", content: [{ type: "input_text", text: "First" }] },
          { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Rome"}' },
          { type: "function_call_output", call_id: "call_1", output: "Sunny" },
          { role: "user", content: "Last" },
        ],
        tools: [weatherTool],
      }),
    );
    const page = await client.responses.inputItems.list(created.id);
    expectValid(validateItemList, { object: "list", data: page.data, first_id: page.data[0].id, last_id: page.data.at(-1)!.id, has_more: false });
    const summary = page.data.map((item) => [item.type, "role" in item ? item.role : "", "call_id" in item ? item.call_id : ""]);
    expect(summary).toEqual([
      ["message", "user", ""],
      ["function_call_output", "", "call_1"],
      ["function_call", "", "call_1"],
      ["message", "user", ""],
    ]);
    const last = page.data[0] as OpenAI.Responses.ResponseInputMessageItem;
    expect(last.content).toEqual([{ type: "input_text", text: "Last" }]);

    const raw = await fetch(`${gateway.apiUrl}/responses/${created.id}/input_items?order=asc&limit=2`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    const ascending = (await raw.json()) as { data: { id: string; type: string }[]; has_more: boolean; last_id: string };
    expectValid(validateItemList, ascending);
    expect(ascending.data.map((item) => item.type)).toEqual(["message", "function_call"]);
    expect(ascending.has_more).toBe(true);
    const rest = await fetch(`${gateway.apiUrl}/responses/${created.id}/input_items?order=asc&after=${ascending.last_id}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(((await rest.json()) as { data: { type: string }[] }).data.map((item) => item.type)).toEqual(["function_call_output", "message"]);
  });

  it("sets has_more exactly at the page-size edges, in both orders and after an item", async () => {
    const created = await stored(
      client.responses.create({ model: "simulator/echo", input: ["One", "Two", "Three"].map((text) => ({ role: "user" as const, content: text })) }),
    );
    const list = async (query: string) => {
      const response = await fetch(`${gateway.apiUrl}/responses/${created.id}/input_items?${query}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
      const page = (await response.json()) as { data: { id: string; content: { text: string }[] }[]; has_more: boolean };
      return { texts: page.data.map((item) => item.content[0].text), hasMore: page.has_more, lastId: page.data.at(-1)?.id ?? "" };
    };
    // Three items: a page of exactly three has no more; of two (one less) it has.
    expect(await list("limit=3")).toMatchObject({ texts: ["Three", "Two", "One"], hasMore: false });
    expect(await list("limit=4")).toMatchObject({ texts: ["Three", "Two", "One"], hasMore: false });
    const first = await list("limit=2");
    expect(first).toMatchObject({ texts: ["Three", "Two"], hasMore: true });
    // After the first item two are left: a page of two has no more, a page of one has.
    const afterNewest = (await list("limit=1")).lastId;
    expect(await list(`limit=2&after=${afterNewest}`)).toMatchObject({ texts: ["Two", "One"], hasMore: false });
    expect(await list(`limit=1&after=${afterNewest}`)).toMatchObject({ texts: ["Two"], hasMore: true });
    expect(await list(`limit=1&after=${first.lastId}`)).toMatchObject({ texts: ["One"], hasMore: false });
    const ascending = await list("order=asc&limit=2");
    expect(ascending).toMatchObject({ texts: ["One", "Two"], hasMore: true });
    expect(await list(`order=asc&limit=1&after=${ascending.lastId}`)).toMatchObject({ texts: ["Three"], hasMore: false });
    // The last item: nothing after it.
    expect(await list(`order=asc&after=${(await list("order=asc&limit=3")).lastId}`)).toMatchObject({ texts: [], hasMore: false });
  });

  it("pages through an earlier answer sent back (one stored message, several items) with the SDK's auto-paging, in both orders", async () => {
    const created = await stored(
      client.responses.create({
        model: "simulator/echo",
        input: [
          { role: "user", content: "Weather?" },
          { type: "reasoning", summary: [{ type: "summary_text", text: "Look it up." }] } as OpenAI.Responses.ResponseReasoningItem,
          { type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{}" },
          { type: "function_call", call_id: "call_2", name: "get_weather", arguments: "{}" },
          { type: "function_call_output", call_id: "call_1", output: "Sunny" },
          { type: "function_call_output", call_id: "call_2", output: "Windy" },
        ],
        tools: [weatherTool],
      }),
    );
    const collect = async (order: "asc" | "desc") => {
      const items: { id: string; type: string }[] = [];
      for await (const item of client.responses.inputItems.list(created.id, { limit: 1, order })) items.push(item);
      return items;
    };
    const ascending = await collect("asc");
    expect(ascending.map((item) => item.type)).toEqual(["message", "reasoning", "function_call", "function_call", "function_call_output", "function_call_output"]);
    expect(new Set(ascending.map((item) => item.id)).size).toBe(6);
    const descending = await collect("desc");
    expect(descending.map((item) => item.id)).toEqual(ascending.map((item) => item.id).reverse());
  });

  it("pages input items exactly however many items a stored message holds: at most limit, has_more only when one follows", async () => {
    const created = await stored(
      client.responses.create({
        model: "simulator/echo",
        input: [
          { role: "user", content: "Weather?" },
          // One stored message (an earlier answer sent back), three items.
          { type: "reasoning", summary: [{ type: "summary_text", text: "Look it up." }] } as OpenAI.Responses.ResponseReasoningItem,
          { type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{}" },
          { type: "function_call", call_id: "call_2", name: "get_weather", arguments: "{}" },
          // One stored message, two items.
          { type: "function_call_output", call_id: "call_1", output: "Sunny" },
          { type: "function_call_output", call_id: "call_2", output: "Windy" },
          { role: "user", content: "Thanks" },
        ],
        tools: [weatherTool],
      }),
    );
    const page = async (query: string) => {
      const response = await fetch(`${gateway.apiUrl}/responses/${created.id}/input_items?${query}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect(response.status, query).toBe(200);
      const body = (await response.json()) as { data: { id: string }[]; first_id: string; last_id: string; has_more: boolean };
      expectValid(validateItemList, body);
      return body;
    };
    for (const order of ["asc", "desc"]) {
      const all = (await page(`order=${order}&limit=100`)).data.map((item) => item.id);
      expect(all).toHaveLength(7);
      for (let limit = 1; limit <= all.length + 1; limit++) {
        const seen: string[] = [];
        for (let after = ""; ; ) {
          const query = `order=${order}&limit=${limit}${after && `&after=${after}`}`;
          const body = await page(query);
          const expected = all.slice(seen.length, seen.length + limit);
          expect(body.data.map((item) => item.id), query).toEqual(expected);
          expect(body, query).toMatchObject({ first_id: expected[0], last_id: expected.at(-1), has_more: seen.length + expected.length < all.length });
          seen.push(...expected);
          if (!body.has_more) break;
          after = body.last_id;
        }
        expect(seen).toEqual(all);
      }
    }
    // An item id inside a stored message that has no such item.
    const unknown = await fetch(`${gateway.apiUrl}/responses/${created.id}/input_items?after=${created.id}_in1_9`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { param: string } }).error.param).toBe("after");
  });

  it("refuses a bad limit or order on input_items with a 400 naming the parameter", async () => {
    const created = await stored(client.responses.create({ model: "simulator/echo", input: "Hi" }));
    for (const [query, param] of [["limit=0", "limit"], ["limit=101", "limit"], ["limit=ten", "limit"], ["order=up", "order"]]) {
      const response = await fetch(`${gateway.apiUrl}/responses/${created.id}/input_items?${query}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { error: { param: string } }).error.param).toBe(param);
    }
  });

  it("deletes a stored response: retrieve is then 404 and continuing from it a 400", async () => {
    const created = await stored(client.responses.create({ model: "simulator/echo", input: "Delete me" }));
    const raw = await fetch(`${gateway.apiUrl}/responses/${created.id}`, { method: "DELETE", headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(raw.status).toBe(200);
    expect(await raw.json()).toEqual({ id: created.id, object: "response", deleted: true });
    expect((await apiErrorOf(client.responses.retrieve(created.id))).status).toBe(404);
    expect((await apiErrorOf(client.responses.delete(created.id))).status).toBe(404);
    const continued = await apiErrorOf(client.responses.create({ model: "simulator/echo", input: "Again", previous_response_id: created.id }));
    expect([continued.status, continued.param]).toEqual([400, "previous_response_id"]);
  });

  it("runs background: true in the core: queued at once, then completed when retrieved, with the same answer a foreground call gets", async () => {
    const queued = await client.responses.create({ model: "simulator/echo", input: "In the background", background: true, metadata: { job: "1" } });
    expectValid(validateResponse, queued);
    expect(queued).toMatchObject({ status: "queued", background: true, output: [], metadata: { job: "1" } });
    await vi.waitFor(async () => expect((await client.responses.retrieve(queued.id)).status).toBe("completed"));
    await gateway.core.background.idle();
    const done = await client.responses.retrieve(queued.id);
    expectValid(validateResponse, done);
    expect(done).toMatchObject({ id: queued.id, background: true, metadata: { job: "1" }, output_text: "You said: In the background" });
    expect(done.usage!.output_tokens).toBeGreaterThan(0);
    // It is a stored turn like any other: continued from.
    const next = await client.responses.create({ model: "simulator/echo", input: "And then?", previous_response_id: queued.id });
    expect(next.usage!.input_tokens).toBeGreaterThan(done.usage!.input_tokens);
  });

  it("cancels a background response in progress: the upstream call stops and it stays cancelled", async () => {
    const before = upstream.requests.length;
    const queued = await client.responses.create({ model: "test/hang", input: "Take your time", background: true });
    await vi.waitFor(async () => expect((await client.responses.retrieve(queued.id)).status).toBe("in_progress"));
    expect(upstream.requests.length).toBe(before + 1);
    const cancelled = await client.responses.cancel(queued.id);
    expectValid(validateResponse, cancelled);
    expect(cancelled).toMatchObject({ id: queued.id, status: "cancelled", background: true });
    await gateway.core.background.idle();
    expect((await client.responses.retrieve(queued.id)).status).toBe("cancelled");
    // Cancelling again answers it again.
    expect((await client.responses.cancel(queued.id)).status).toBe("cancelled");
    // The hold was settled: the generation record says the caller (here: cancel) stopped it.
    const record = await fetch(`${gateway.apiUrl}/generation?id=${queued.id}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    await vi.waitFor(async () => expect(record.status).toBe(200));
    expect(((await record.json()) as { data: { outcome: string } }).data.outcome).toBe("client_closed");
  });

  it("refuses to cancel a foreground response or a finished background one (400), and an unknown id (404)", async () => {
    const foreground = await stored(client.responses.create({ model: "simulator/echo", input: "Hi" }));
    const refused = await apiErrorOf(client.responses.cancel(foreground.id));
    expect([refused.status, refused.code]).toEqual([400, "response_not_cancellable"]);
    const background = await client.responses.create({ model: "simulator/echo", input: "Hi", background: true });
    await gateway.core.background.idle();
    const finished = await apiErrorOf(client.responses.cancel(background.id));
    expect([finished.status, finished.message]).toEqual([400, expect.stringContaining("completed")]);
    expect((await apiErrorOf(client.responses.cancel("resp_nope"))).status).toBe(404);
  });

  it("tells a background refusal at once: a bad key is 401, an unknown model 404, and nothing is stored", async () => {
    const badKey = new OpenAI({ apiKey: "sk-wrong", baseURL: gateway.apiUrl, maxRetries: 0 });
    expect((await apiErrorOf(badKey.responses.create({ model: "simulator/echo", input: "Hi", background: true }))).status).toBe(401);
    expect((await apiErrorOf(client.responses.create({ model: "nobody/nothing", input: "Hi", background: true }))).status).toBe(404);
  });

  it("refuses background with stream or with store: false, naming the parameter", async () => {
    const streamed = await apiErrorOf(client.responses.create({ model: "simulator/echo", input: "Hi", background: true, stream: true }));
    expect([streamed.status, streamed.param]).toEqual([400, "stream"]);
    const unstored = await apiErrorOf(client.responses.create({ model: "simulator/echo", input: "Hi", background: true, store: false }));
    expect([unstored.status, unstored.param]).toEqual([400, "background"]);
  });

  it("reads a background response whose instance stopped renewing its lease as failed, never in progress forever", async () => {
    const id = `resp_orphan_${split}`;
    const now = Date.now();
    await gateway.core.conversations.store.save(
      create(TurnSchema, {
        id,
        organizationId: "org_test",
        background: true,
        status: TurnStatus.IN_PROGRESS,
        storedEcho: JSON.stringify({ model: "simulator/echo" }),
        createdAt: timestampFromMs(now - 60_000),
        leaseExpiresAt: timestampFromMs(now - 1),
        expiresAt: timestampFromMs(now + 60_000),
      }),
    );
    const response = await client.responses.retrieve(id);
    expectValid(validateResponse, response);
    expect(response).toMatchObject({ status: "failed", error: { code: "server_error", message: expect.stringContaining("stopped") }, model: "echo" });
    const refused = await apiErrorOf(client.responses.cancel(id));
    expect(refused.status).toBe(400);
  });
});

describe("background answers when their instance shuts down", () => {
  it("stores each running answer as failed (instance_stopped), not cancelled", async () => {
    const upstream = await startFakeUpstream();
    const gateway = await startGateway(testConfig(upstream.url));
    try {
      const client = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
      const queued = await client.responses.create({ model: "test/hang", input: "Take your time", background: true });
      await vi.waitFor(async () => expect((await client.responses.retrieve(queued.id)).status).toBe("in_progress"));
      await gateway.close();
      // The memory store outlives close(): read what the shutdown stored.
      const turn = await gateway.core.conversations.store.get("org_test", queued.id);
      expect(turn).toMatchObject({ status: TurnStatus.FAILED, error: { code: "instance_stopped" } });
    } finally {
      await upstream.close();
    }
  });
});
