// provider.only / provider.order naming providers, through the HTTP gateway:
// a provider that does not exist is the caller's 400; one that exists but cannot
// serve the model leaves routing to answer (503 when nothing is left).
import { beforeEach, describe, expect, it } from "vitest";
import { TEST_KEY, useGatewayWithUpstream } from "../../support/harness.ts";

const stack = useGatewayWithUpstream();

beforeEach(() => {
  stack.upstream.requests.length = 0;
});

async function post(body: Record<string, unknown>) {
  const response = await fetch(`${stack.gateway.apiUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ messages: [{ role: "user", content: "Hi" }], ...body }),
  });
  const error = response.ok ? undefined : ((await response.json()) as { error: { message: string; type: string; param: string | null; code: string } }).error;
  return { status: response.status, error };
}

describe("a provider that does not exist in the configuration", () => {
  it.each([
    ["only", { only: ["nope"] }],
    ["order", { order: ["nope"] }],
    ["order, beside real ones", { order: ["dear", "nope", "cheap"] }],
  ])("provider.%s: 400 invalid_parameter naming it, nothing sent upstream", async (_, provider) => {
    const field = "only" in provider ? "only" : "order";
    for (const stream of [false, true]) {
      const { status, error } = await post({ model: "test/ok", provider, stream });
      expect(status).toBe(400);
      expect(error).toMatchObject({ type: "invalid_request_error", code: "invalid_parameter", param: `provider.${field}` });
      expect(error!.message).toContain(`"nope"`);
    }
    expect(stack.upstream.requests).toHaveLength(0);
  });

  it("several unknown providers are all named", async () => {
    const { status, error } = await post({ model: "test/ok", provider: { only: ["cheap", "nope", "gone"] } });
    expect(status).toBe(400);
    expect(error!.message).toContain(`"nope", "gone"`);
    expect(error!.message).not.toContain("cheap");
  });

  it("is refused for every kind of model reference (fallback list, :free, router/free)", async () => {
    for (const body of [{ model: "test/ok", models: ["simulator/echo"] }, { model: "test/free:free" }, { model: "router/free" }]) {
      const { status, error } = await post({ ...body, provider: { only: ["nope"] } });
      expect(status).toBe(400);
      expect(error!.param).toBe("provider.only");
    }
  });
});

describe("a provider that exists but cannot serve the model", () => {
  it("only: a provider that does not serve the model is 503 no_provider_available naming who does", async () => {
    const { status, error } = await post({ model: "test/ok", provider: { only: ["local"] } });
    expect(status).toBe(503);
    expect(error).toMatchObject({ code: "no_provider_available" });
    expect(error!.message).toContain("test/ok is not served by local (served by cheap, dear)");
    expect(stack.upstream.requests).toHaveLength(0);
  });

  it("only: a provider without its API key is 503 naming the variable to set", async () => {
    const { status, error } = await post({ model: "test/unkeyed", provider: { only: ["nokey"] } });
    expect(status).toBe(503);
    expect(error).toMatchObject({ code: "no_provider_available" });
    expect(error!.message).toContain("NOKEY_KEY");
  });

  it("only: another model of `models` that the provider serves is still tried", async () => {
    const response = await fetch(`${stack.gateway.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "test/local", models: ["test/ok"], provider: { only: ["cheap"] }, messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-router-provider")).toBe("cheap");
  });

  it("order with allow_fallbacks: false: a provider that does not serve the model is 503 naming who does", async () => {
    const { status, error } = await post({ model: "test/ok", provider: { order: ["local"], allow_fallbacks: false } });
    expect(status).toBe(503);
    expect(error).toMatchObject({ code: "no_provider_available" });
    expect(error!.message).toContain("test/ok is not served by local (served by cheap, dear)");
    expect(stack.upstream.requests).toHaveLength(0);
  });

  it("order with allow_fallbacks: false: a provider without its API key is 503 naming the variable to set", async () => {
    const { status, error } = await post({ model: "test/unkeyed", provider: { order: ["nokey"], allow_fallbacks: false } });
    expect(status).toBe(503);
    expect(error).toMatchObject({ code: "no_provider_available" });
    expect(error!.message).toContain("NOKEY_KEY");
  });

  it("order: a named provider that does not serve the model is passed over, the others serve", async () => {
    const response = await fetch(`${stack.gateway.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "test/ok", provider: { order: ["local", "dear"] }, messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-router-provider")).toBe("dear");
  });
});
