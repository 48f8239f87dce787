// Messages with both `Authorization: Bearer` and `x-api-key` (issue 18, 5): the Bearer key is
// the caller (docs/messages.md), so its organisation pays and owns the usage record; the other
// key's organisation is not charged and cannot read the record. Over plain HTTP: the Anthropic
// SDK never sends both (given an Authorization header it drops its x-api-key), but curl users,
// proxies that add their own header, and other clients do.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../../../core/config/load.ts";
import { nanosOf } from "../../../support/exact-money.ts";
import { startGateway, type Gateway } from "../../../support/harness.ts";

const BEARER_KEY = "sk-both-bearer";
const X_API_KEY = "sk-both-x-api-key";

describe("Messages with both keys", () => {
  let gateway: Gateway;
  beforeAll(async () => {
    const config = parseConfig(
      JSON.stringify({
        providers: [{ id: "simulator", label: "Simulator", protocol: "simulator", chunk_delay_ms: 0 }],
        models: [
          {
            id: "sim/paid",
            name: "sim/paid",
            created: 1700000000,
            creator: "sim",
            context_length: 8192,
            max_completion_tokens: 1000,
            input_modalities: ["text"],
            output_modalities: ["text"],
            supported_parameters: ["max_tokens"],
            providers: [{ provider: "simulator", provider_model_id: "echo", pricing: { prompt: "0.00001", completion: "0.00001" } }],
          },
        ],
        organizations: [
          { id: "org_bearer", name: "Bearer", credits: "10", keys: [{ id: "key_bearer", env: "BEARER_KEY" }] },
          { id: "org_x", name: "X", credits: "10", keys: [{ id: "key_x", env: "X_KEY" }] },
        ],
      }),
    );
    gateway = await startGateway(config, { env: { BEARER_KEY, X_KEY: X_API_KEY } });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const balance = async (organizationId: string) => {
    await gateway.core.accounts.idle();
    return gateway.core.accounts.stores.credits.balance(organizationId);
  };
  const generation = (id: string, key: string) => fetch(`${gateway.apiUrl}/generation?id=${id}`, { headers: { authorization: `Bearer ${key}` } });

  it.each([false, true])("the Bearer key's organisation pays and owns the record (stream: %s)", async (stream) => {
    const [bearerBefore, xBefore] = [await balance("org_bearer"), await balance("org_x")];
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": X_API_KEY, authorization: `Bearer ${BEARER_KEY}` },
      body: JSON.stringify({ model: "sim/paid", max_tokens: 50, stream, messages: [{ role: "user", content: "who pays" }] }),
    });
    expect(response.status).toBe(200);
    await response.text();
    const id = response.headers.get("request-id")!;
    // The request id names the usage record.
    const record = await generation(id, BEARER_KEY);
    expect(record.status).toBe(200);
    const { data } = (await record.json()) as { data: { total_cost: number } & Record<string, unknown> };
    expect(data).toMatchObject({ api_key_id: "key_bearer", organization_id: "org_bearer" });
    const cost = nanosOf(String(data.total_cost));
    expect(cost).toBeGreaterThan(0n);
    expect(await balance("org_bearer")).toBe(bearerBefore - cost);
    expect(await balance("org_x")).toBe(xBefore);
    expect((await generation(id, X_API_KEY)).status).toBe(404);
  });
});
