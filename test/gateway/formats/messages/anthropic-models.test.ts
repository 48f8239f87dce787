// The Anthropic SDK's models.list() and models.retrieve() (issue 18, 2): GET /v1/models and
// /v1/models/{id} answer the catalogue in Anthropic's list shape, page by page with its cursors,
// without a key like every catalogue GET; /api/v1/models keeps the spec's shape.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeUpstream, type FakeUpstream } from "../../../support/fake-openai-upstream.ts";
import { startGateway, testConfig, type Gateway } from "../../../support/harness.ts";

describe("GET /v1/models through the Anthropic SDK", () => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  let client: Anthropic;
  let catalogueIds: string[];

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    const config = testConfig(upstream.url);
    gateway = await startGateway(config);
    // No key: the catalogue is public. The SDK wants one, and sends it as x-api-key; it is not read.
    client = new Anthropic({ apiKey: "sk-not-a-key", baseURL: gateway.url, maxRetries: 0 });
    catalogueIds = ((await (await fetch(`${gateway.apiUrl}/models`)).json()) as { data: { id: string }[] }).data.map((model) => model.id);
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it("lists every model of the catalogue, in its order, across pages", async () => {
    const ids: string[] = [];
    for await (const model of client.models.list({ limit: 7 })) ids.push(model.id);
    expect(catalogueIds.length).toBeGreaterThan(7);
    expect(ids).toEqual(catalogueIds);
  });

  it("answers Anthropic's page and ModelInfo shape", async () => {
    const page = await client.models.list({ limit: 2 });
    expect(page.data.map((model) => model.id)).toEqual(catalogueIds.slice(0, 2));
    expect(page.has_more).toBe(true);
    expect(page.first_id).toBe(catalogueIds[0]);
    expect(page.last_id).toBe(catalogueIds[1]);
    expect(page.data[0]).toEqual({
      type: "model",
      id: "simulator/echo",
      display_name: "simulator/echo",
      created_at: "2023-11-14T22:13:20Z",
      max_input_tokens: 128000,
      max_tokens: 4096,
      capabilities: null,
      lifecycle: "active",
      line: null,
      deprecated_at: null,
      retires_at: null,
    });
  });

  it("pages after and before an id, and says when nothing is left", async () => {
    const n = catalogueIds.length;
    const last = await client.models.list({ after_id: catalogueIds[n - 3], limit: 5 });
    expect(last.data.map((model) => model.id)).toEqual(catalogueIds.slice(n - 2));
    expect(last.has_more).toBe(false);
    const before = await client.models.list({ before_id: catalogueIds[5], limit: 3 });
    expect(before.data.map((model) => model.id)).toEqual(catalogueIds.slice(2, 5));
    expect(before.has_more).toBe(true);
    const first = await client.models.list({ before_id: catalogueIds[2], limit: 3 });
    expect(first.data.map((model) => model.id)).toEqual(catalogueIds.slice(0, 2));
    expect(first.has_more).toBe(false);
    expect((await client.models.list()).data).toHaveLength(Math.min(20, n));
  });

  it("filters by lifecycle: every catalogue model is active", async () => {
    expect((await client.models.list({ lifecycle: ["retired"] })).data).toEqual([]);
    expect((await client.models.list({ lifecycle: ["deprecated", "retired"], limit: 1000 })).has_more).toBe(false);
    const active = await client.models.list({ lifecycle: ["active", "retired"], limit: 1000 });
    expect(active.data.map((model) => model.id)).toEqual(catalogueIds);
    const wrong = await fetch(`${gateway.url}/v1/models?lifecycle[]=ancient`);
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error", param: "lifecycle" }, request_id: wrong.headers.get("request-id") });
  });

  it("retrieves one model by its id, slash and all", async () => {
    const model = await client.models.retrieve("test/thinker");
    expect(model).toMatchObject({ type: "model", id: "test/thinker", display_name: "test/thinker" });
    const plain = await fetch(`${gateway.url}/v1/models/test/thinker`);
    expect(await plain.json()).toEqual(model);
  });

  it("retrieves a model by its bare name, as POST /v1/messages resolves it, answering the catalogue id", async () => {
    expect(await client.models.retrieve("thinker")).toEqual(await client.models.retrieve("test/thinker"));
    expect(await client.models.retrieve("echo")).toMatchObject({ id: "simulator/echo" });
  });

  it.each(["test/nope", "nope"])("an unknown model (%s) is NotFoundError in Anthropic's envelope, with the request id in the body and the headers", async (id) => {
    const error = await client.models.retrieve(id).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    const { requestID, headers } = error as InstanceType<typeof Anthropic.NotFoundError>;
    expect(requestID).toMatch(/\S/);
    expect(headers.get("x-request-id")).toBe(requestID);
    expect((error as InstanceType<typeof Anthropic.NotFoundError>).error).toEqual({
      type: "error",
      error: { type: "invalid_request_error", code: "model_not_found", param: expect.any(String), message: expect.any(String) },
      request_id: requestID,
    });
  });

  it.each([
    ["limit=0", "limit"],
    ["limit=1001", "limit"],
    ["limit=ten", "limit"],
    ["after_id=test%2Fnope", "after_id"],
    ["after_id=simulator%2Fecho&before_id=test%2Fok", "before_id"],
    ["limit=2&limit=3", "limit"],
  ])("?%s: 400 naming %s, in Anthropic's envelope", async (query, param) => {
    const response = await fetch(`${gateway.url}/v1/models?${query}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error", param } });
  });

  it("leaves /api/v1/models in the spec's shape", async () => {
    const body = (await (await fetch(`${gateway.apiUrl}/models`)).json()) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["data"]);
  });
});
