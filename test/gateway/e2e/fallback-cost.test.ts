// The cost after a fallback is the serving route's (issue 18, 5): test/fail-503's cheap route
// fails, its dear route serves, and everything that says what the answer cost (usage.cost and
// usage.provider of the answer, the usage record's provider and cost, the balance) says dear's
// prices, not those of the first route that failed. JSON and streamed, through the openai SDK.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { femtosOf, nanosRoundedUp, rawCostOf } from "../../support/exact-money.ts";
import { FAKE_USAGE } from "../../support/fake-openai-upstream.ts";
import { TEST_KEY, testConfig, useGatewayWithUpstream } from "../../support/harness.ts";

/** The exact cost of FAKE_USAGE at one route of test/fail-503, in femto-dollars. */
function costAt(provider: "cheap" | "dear"): bigint {
  const pricing = testConfig("http://unused").models.find((model) => model.id === "test/fail-503")!.providers.find((route) => route.provider === provider)!.pricing;
  const cached = FAKE_USAGE.prompt_tokens_details.cached_tokens;
  return (
    BigInt(FAKE_USAGE.prompt_tokens - cached) * femtosOf(pricing.prompt) +
    BigInt(cached) * femtosOf(pricing.input_cache_read!) +
    BigInt(FAKE_USAGE.completion_tokens) * femtosOf(pricing.completion) +
    femtosOf(pricing.request ?? "0")
  );
}

describe("the cost after a fallback", () => {
  const stack = useGatewayWithUpstream();
  const messages = [{ role: "user" as const, content: "Hi" }];

  async function balance() {
    await stack.gateway.core.accounts.idle();
    return stack.gateway.core.accounts.stores.credits.balance("org_test");
  }

  async function record(id: string) {
    const response = await fetch(`${stack.gateway.apiUrl}/generation?id=${id}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    const text = await response.text();
    return { data: (JSON.parse(text) as { data: Record<string, unknown> }).data, rawCost: /"total_cost":\s*([0-9.eE+-]+)/.exec(text)![1] };
  }

  it("differs between the two routes (else this test proves nothing)", () => {
    expect(costAt("dear")).not.toBe(costAt("cheap"));
  });

  it.each([false, true])("is dear's, the route that served (stream: %s)", async (stream) => {
    const before = await balance();
    const body = { model: "test/fail-503", messages, stream, ...(stream && { stream_options: { include_usage: true } }) };
    const response = await fetch(`${stack.gateway.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get("x-router-trace")).toBe("test/fail-503@cheap;error;http_503, test/fail-503@dear;ok");
    const id = response.headers.get("x-request-id")!;
    // The answer's own usage: its cost as written (no float on the way) and its provider.
    expect(femtosOf(rawCostOf(text))).toBe(costAt("dear"));
    expect(text).toMatch(/"provider":\s*"dear"/);
    // The usage record.
    await stack.gateway.core.accounts.idle();
    const { data, rawCost } = await record(id);
    expect(data).toMatchObject({ provider_name: "dear", model: "test/fail-503", outcome: "ok" });
    expect(femtosOf(rawCost)).toBe(costAt("dear"));
    // The balance: charged dear's cost, rounded up to the nano-dollar.
    expect(await balance()).toBe(before - nanosRoundedUp(costAt("dear")));
  });

  it("the openai SDK reads the same usage", async () => {
    const client = new OpenAI({ apiKey: TEST_KEY, baseURL: stack.gateway.apiUrl, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: "test/fail-503", messages });
    expect(completion.usage).toMatchObject({ provider: "dear" });
    expect(femtosOf((completion.usage as unknown as { cost: number }).cost)).toBe(costAt("dear"));
  });
});
