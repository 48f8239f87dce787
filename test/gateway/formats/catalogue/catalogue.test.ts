// The catalogue endpoints (spec: Model object, Provider entry, GET /api/v1/models,
// /modelProviderData, /providerModels), on the test configuration and on the
// bundled default configuration, through the in-process gateway.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfigFile } from "../../../../core/config/load.ts";
import type { RouterConfig } from "../../../../core/config/schema.ts";
import { startGateway, testConfig, type Gateway } from "../../../support/harness.ts";

/** A price: a plain non-negative decimal string, never a float rendering like "1e-7". */
const DECIMAL = /^\d+(\.\d+)?$/;
const decimal = () => expect.stringMatching(DECIMAL);
const integer = (value: unknown) => Number.isInteger(value);

// No upstream is called by the catalogue; the fake providers need a URL all the same.
const UNUSED_UPSTREAM = "http://127.0.0.1:9/v1";

type Json = Record<string, any>;

async function getJson(gateway: Gateway, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(gateway.url + path, { headers });
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  return { status: response.status, body: (await response.json()) as any };
}

const architecture = () =>
  expect.objectContaining({
    modality: expect.any(String),
    input_modalities: expect.any(Array),
    output_modalities: expect.any(Array),
    tokenizer: expect.any(String),
  });

/** Every field of the spec's Model object, with its type. */
function expectModelObject(model: Json) {
  expect(model).toMatchObject({
    id: expect.stringMatching(/^[^/]+\/.+$/),
    name: expect.any(String),
    description: expect.any(String),
    created: expect.any(Number),
    context_length: expect.any(Number),
    architecture: architecture(),
    pricing: expect.objectContaining({ prompt: decimal(), completion: decimal() }),
    top_provider: {
      context_length: expect.any(Number),
      max_completion_tokens: expect.any(Number),
      is_moderated: expect.any(Boolean),
    },
    supported_parameters: expect.any(Array),
    supported_params_details: expect.any(Object),
    is_active: expect.any(Boolean),
    creator: expect.any(String),
  });
  expect(integer(model.created) && integer(model.context_length)).toBe(true);
  expect(integer(model.top_provider.context_length) && integer(model.top_provider.max_completion_tokens)).toBe(true);
  for (const list of [model.architecture.input_modalities, model.architecture.output_modalities, model.supported_parameters]) {
    expect(list.every((item: unknown) => typeof item === "string")).toBe(true);
  }
  expect(model.architecture.input_modalities.length).toBeGreaterThan(0);
  expect(Array.isArray(model.supported_params_details)).toBe(false);
  // Every further pricing field is a decimal string too.
  for (const value of Object.values(model.pricing)) expect(value).toMatch(DECIMAL);
}

/** Every field of the spec's Provider entry, with its type. */
function expectProviderEntry(entry: Json) {
  expect(entry).toMatchObject({
    provider_id: expect.any(String),
    provider_label: expect.any(String),
    model_id: expect.stringMatching(/^[^/]+\/.+$/),
    model_name: expect.any(String),
    provider_model_id: expect.any(String),
    architecture: architecture(),
    pricing: expect.objectContaining({
      prompt: decimal(),
      completion: decimal(),
      request: decimal(),
      web_search_per_1000_requests_low: decimal(),
      web_search_per_1000_requests_medium: decimal(),
      web_search_per_1000_requests_high: decimal(),
      // A media model's is shown at its price per image or per second too.
      priceToShow: expect.objectContaining({ prompt: decimal(), completion: decimal() }),
    }),
    supported_parameters: expect.any(Array),
    supported_parameters_v2: expect.any(Object),
    is_active: expect.any(Boolean),
    extra_params: {
      supportsReasoning: expect.any(Boolean),
      supportWebSearch: expect.any(Boolean),
      max_completion_tokens: expect.any(Number),
      reasoningEffortMap: expect.any(Object),
    },
    default_extra_params_values: expect.any(Object),
  });
  expect(entry.provider_id).not.toBe("");
  expect(entry.provider_model_id).not.toBe("");
  expect(integer(entry.extra_params.max_completion_tokens)).toBe(true);
  expect(Array.isArray(entry.supported_parameters_v2)).toBe(false);
  expect(entry.supported_parameters.every((item: unknown) => typeof item === "string")).toBe(true);
  const { priceToShow, ...prices } = entry.pricing;
  for (const value of [...Object.values(prices), ...Object.values(priceToShow)]) expect(value).toMatch(DECIMAL);
  for (const [effort, value] of Object.entries(entry.extra_params.reasoningEffortMap)) {
    expect(["none", "minimal", "low", "medium", "high"]).toContain(effort);
    expect(typeof value).toBe("string");
  }
}

/** The spec's error body: `{error: {message, type, param, code}}` and no `status` outside 429. */
function expectErrorBody(body: Json, code: unknown, param: string | null) {
  expect(body).toEqual({
    error: { message: expect.any(String), type: "invalid_request_error", param, code },
  });
  expect(body.error.message).not.toBe("");
}

const setups: [string, () => RouterConfig][] = [
  ["the test configuration", () => testConfig(UNUSED_UPSTREAM)],
  ["the default configuration", () => loadConfigFile()],
];

describe.each(setups)("catalogue endpoints on %s", (_name, config) => {
  let gateway: Gateway;
  let configured: RouterConfig;

  beforeAll(async () => {
    configured = config();
    gateway = await startGateway(configured);
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it("GET /api/v1/models lists every configured model with every Model field, without a key", async () => {
    const { status, body } = await getJson(gateway, "/api/v1/models");
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual(["data"]);
    expect(body.data.map((m: Json) => m.id)).toEqual(configured.models.map((m) => m.id));
    for (const model of body.data) expectModelObject(model);
  });

  it("ignores a wrong key on the catalogue (no key is needed)", async () => {
    const { status } = await getJson(gateway, "/api/v1/models", { authorization: "Bearer sk-wrong" });
    expect(status).toBe(200);
  });

  it("GET /api/v1/providerModels is an array of provider entries, one per (model, provider)", async () => {
    const { status, body } = await getJson(gateway, "/api/v1/providerModels");
    expect(status).toBe(200);
    expect(Array.isArray(body)).toBe(true);
    expect(body).toHaveLength(configured.models.reduce((n, m) => n + m.providers.length, 0));
    for (const entry of body) expectProviderEntry(entry);
    const pairs = body.map((e: Json) => `${e.model_id} ${e.provider_id}`);
    expect(new Set(pairs).size).toBe(pairs.length);
  });

  it("GET /api/v1/modelProviderData gives the Model object plus one entry per provider", async () => {
    for (const model of configured.models.slice(0, 5)) {
      const { status, body } = await getJson(gateway, `/api/v1/modelProviderData?id=${encodeURIComponent(model.id)}`);
      expect(status).toBe(200);
      expectModelObject(body);
      expect(body.id).toBe(model.id);
      expect(body.provider_data.map((e: Json) => e.provider_id).sort()).toEqual(model.providers.map((p) => p.provider).sort());
      for (const entry of body.provider_data) {
        expectProviderEntry(entry);
        expect(entry.model_id).toBe(model.id);
        // The aggregated list covers every provider's parameters.
        for (const parameter of entry.supported_parameters) expect(body.supported_parameters).toContain(parameter);
      }
    }
  });

  it("GET /api/v1/modelProviderData without id is a 400 naming param id", async () => {
    for (const path of ["/api/v1/modelProviderData", "/api/v1/modelProviderData?id="]) {
      const { status, body } = await getJson(gateway, path);
      expect(status).toBe(400);
      expect(body).toEqual({
        error: { message: expect.any(String), type: "invalid_request_error", param: "id", code: expect.any(String) },
      });
    }
  });

  it("GET /api/v1/modelProviderData of an unknown model is a 404 model_not_found", async () => {
    const { status, body } = await getJson(gateway, "/api/v1/modelProviderData?id=nobody/nothing");
    expect(status).toBe(404);
    expectErrorBody(body, "model_not_found", "id");
    expect(body.error.message).toContain("nobody/nothing");
  });

  it("GET /api/v1/models/{id} gives the model's entry of /models, its slash plain or encoded (the openai SDK's models.retrieve)", async () => {
    const { body: list } = await getJson(gateway, "/api/v1/models");
    for (const model of configured.models.slice(0, 3)) {
      const listed = list.data.find((m: Json) => m.id === model.id);
      for (const path of [`/api/v1/models/${model.id}`, `/api/v1/models/${encodeURIComponent(model.id)}`]) {
        const { status, body } = await getJson(gateway, path);
        expect(status, path).toBe(200);
        expect(body).toEqual(listed);
      }
    }
    // The same answer object of the core, encoded for /modelProviderData after, keeps each route's shape.
    const id = configured.models[0].id;
    expect((await getJson(gateway, `/api/v1/modelProviderData?id=${encodeURIComponent(id)}`)).body.provider_data).toBeDefined();
    expect((await getJson(gateway, `/api/v1/models/${id}`)).body.provider_data).toBeUndefined();
    const missing = await getJson(gateway, "/api/v1/models/nobody/nothing");
    expect(missing.status).toBe(404);
    expectErrorBody(missing.body, "model_not_found", "id");
    const client = new OpenAI({ apiKey: "unused", baseURL: gateway.apiUrl, maxRetries: 0 });
    expect((await client.models.retrieve(id)).id).toBe(id);
  });

  it("an unknown route is a 404 in the error shape", async () => {
    for (const path of ["/api/v1/nope", "/nope", "/api/v2/models"]) {
      const { status, body } = await getJson(gateway, path);
      expect(status).toBe(404);
      expectErrorBody(body, expect.any(String), null);
    }
  });

  it("marks simulator models active: they need no key", async () => {
    const { body } = await getJson(gateway, "/api/v1/models");
    const echo = body.data.find((m: Json) => m.id === "simulator/echo");
    expect(echo).toMatchObject({ is_active: true });
  });
});

describe("the test configuration in detail", () => {
  let gateway: Gateway;

  beforeAll(async () => {
    gateway = await startGateway(testConfig(UNUSED_UPSTREAM));
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it("shows a model whose only provider lacks its key as inactive, and keyed ones as active", async () => {
    const { body } = await getJson(gateway, "/api/v1/models");
    const byId = new Map(body.data.map((m: Json) => [m.id, m]));
    expect(byId.get("test/unkeyed")).toMatchObject({ is_active: false });
    expect(byId.get("test/ok")).toMatchObject({ is_active: true });

    const { body: unkeyed } = await getJson(gateway, "/api/v1/modelProviderData?id=test/unkeyed");
    expect(unkeyed.is_active).toBe(false);
    expect(unkeyed.provider_data).toEqual([expect.objectContaining({ provider_id: "nokey", is_active: false })]);
  });

  it("lists both providers of test/ok with their own labels, ids and prices", async () => {
    const { status, body } = await getJson(gateway, "/api/v1/modelProviderData?id=test/ok");
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id: "test/ok",
      name: "test/ok",
      created: 1700000000,
      creator: "test",
      context_length: 128000,
      architecture: { modality: "text+image->text", input_modalities: ["text", "image"], output_modalities: ["text"], tokenizer: "" },
      // The model's price is its cheapest active provider's.
      pricing: { prompt: "0.000001", completion: "0.000002" },
      top_provider: { context_length: 128000, max_completion_tokens: 4096, is_moderated: false },
      is_active: true,
    });
    expect(body.provider_data).toHaveLength(2);
    const [cheap, dear] = body.provider_data;
    expect(cheap).toMatchObject({
      provider_id: "cheap",
      provider_label: "Cheap Cloud",
      model_id: "test/ok",
      model_name: "test/ok",
      provider_model_id: "ok",
      pricing: {
        prompt: "0.000001",
        completion: "0.000002",
        request: "0",
        web_search_per_1000_requests_low: "0",
        web_search_per_1000_requests_medium: "0",
        web_search_per_1000_requests_high: "0",
        priceToShow: { prompt: "0.000001", completion: "0.000002" },
      },
      is_active: true,
      extra_params: { supportsReasoning: true, supportWebSearch: false, max_completion_tokens: 4096, reasoningEffortMap: {} },
      supported_parameters_v2: {},
      default_extra_params_values: {},
    });
    expect(dear).toMatchObject({
      provider_id: "dear",
      provider_label: "Dear Cloud",
      provider_model_id: "ok-dear",
      pricing: { prompt: "0.000003", priceToShow: { prompt: "0.000003", completion: "0.000002" } },
      is_active: true,
    });
  });

  it("lists the same entries in /providerModels as in /modelProviderData", async () => {
    const { body: all } = await getJson(gateway, "/api/v1/providerModels");
    const { body: one } = await getJson(gateway, "/api/v1/modelProviderData?id=test/ok");
    expect(all.filter((e: Json) => e.model_id === "test/ok")).toEqual(one.provider_data);
  });
});

describe("the default configuration in detail", () => {
  let gateway: Gateway;

  beforeAll(async () => {
    gateway = await startGateway(loadConfigFile());
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it("has openai/gpt-4o at the pricing snapshot's prices, inactive without OPENAI_API_KEY", async () => {
    const { body } = await getJson(gateway, "/api/v1/models");
    const gpt4o = body.data.find((m: Json) => m.id === "openai/gpt-4o");
    expect(gpt4o).toMatchObject({
      id: "openai/gpt-4o",
      creator: "openai",
      pricing: { prompt: "0.0000025", completion: "0.00001" },
      is_active: false,
    });
    const { status, body: detail } = await getJson(gateway, "/api/v1/modelProviderData?id=openai/gpt-4o");
    expect(status).toBe(200);
    expect(detail.provider_data).toEqual([
      expect.objectContaining({
        provider_id: "openai",
        provider_label: "OpenAI",
        provider_model_id: "gpt-4o",
        pricing: expect.objectContaining({ prompt: "0.0000025", priceToShow: { prompt: "0.0000025", completion: "0.00001" } }),
        is_active: false,
      }),
    ]);
  });

  it("lists every simulator model as active", async () => {
    const { body } = await getJson(gateway, "/api/v1/models");
    const simulated = body.data.filter((m: Json) => m.id.startsWith("simulator/"));
    expect(simulated.length).toBeGreaterThan(0);
    for (const model of simulated) expect(model.is_active).toBe(true);
  });

  it("serves a reasoning effort map that the catalogue's providers configured", async () => {
    const config = loadConfigFile();
    const withMap = config.models.find((m) => m.providers.some((p) => p.reasoning_effort_map));
    expect(withMap).toBeDefined();
    const { body } = await getJson(gateway, `/api/v1/modelProviderData?id=${encodeURIComponent(withMap!.id)}`);
    const configured = withMap!.providers.find((p) => p.reasoning_effort_map)!;
    const entry = body.provider_data.find((e: Json) => e.provider_id === configured.provider);
    expect(entry.extra_params.reasoningEffortMap).toEqual(configured.reasoning_effort_map);
  });
});
