// A protocol that serves no chat (a media protocol: BFL here) has no chat
// adapter: a chat request skips its routes before dispatch, as it skips a route
// lacking any capability. The model's next route serves it, the trace shows the
// skip; with no other route the answer is a 400 naming the model, holding nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../../../core/config/load.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";

const textModel = (id: string, providers: unknown[]) => ({
  id,
  name: id,
  created: 1,
  creator: "test",
  context_length: 8192,
  max_completion_tokens: 1000,
  input_modalities: ["text"],
  output_modalities: ["text"],
  supported_parameters: ["max_tokens"],
  providers,
});
const bflRoute = { provider: "bfl", provider_model_id: "flux-pro-1.1", pricing: { prompt: "0", completion: "0", image_output: "0.04" } };
const simulatorRoute = { provider: "simulator", provider_model_id: "echo", pricing: { prompt: "0.000001", completion: "0.000001" } };

const config = parseConfig(
  JSON.stringify({
    providers: [
      { id: "simulator", label: "Simulator", protocol: "simulator" },
      // Never called: nothing listens there.
      { id: "bfl", label: "Black Forest Labs", protocol: "bfl", base_url: "http://127.0.0.1:9", api_key_env: "BFL_KEY" },
    ],
    // A model listing text output with a media provider's route (a configuration mistake routing survives).
    models: [textModel("test/mixed", [bflRoute, simulatorRoute]), textModel("test/bfl-only", [bflRoute])],
    organizations: [{ id: "org_test", name: "Test", credits: "10", keys: [{ id: "key_test", env: "TEST_API_KEY" }] }],
  }),
);

let gateway: Gateway;
beforeAll(async () => {
  gateway = await startGateway(config, { env: { BFL_KEY: "bfl-secret" } });
});
afterAll(async () => {
  await gateway?.close();
});

const chat = (model: string) =>
  fetch(`${gateway.apiUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
  });

describe("a chat request on a model with a media protocol's route", () => {
  it("skips that route for the model's next one, and the trace says why", async () => {
    const response = await chat("test/mixed");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-router-provider")).toBe("simulator");
    expect(response.headers.get("x-router-trace")).toBe("test/mixed@bfl;skipped;not_a_chat_protocol, test/mixed@simulator;ok");
  });

  it("is refused with a 400 naming the model when no route serves chat, nothing held", async () => {
    await gateway.core.accounts.idle();
    const before = await gateway.core.accounts.stores.credits.balance("org_test");
    const response = await chat("test/bfl-only");
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: Record<string, unknown> };
    expect(error).toMatchObject({ code: "capability_not_supported", param: "model", metadata: { missing: "not_a_chat_protocol" } });
    expect(error.message).toContain("test/bfl-only");
    await gateway.core.accounts.idle();
    expect(await gateway.core.accounts.stores.credits.balance("org_test")).toBe(before);
  });
});
