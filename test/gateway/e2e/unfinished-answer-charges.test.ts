// Through the HTTP gateway (in-process and split): a non-streamed request whose
// answer breaks after the provider started it gets 502 and is charged nothing;
// the same answer streamed is charged the estimate of what it relayed, and its
// usage record shows the tokens that make that cost (docs/accounts.md).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { femtosOf, nanosRoundedUp } from "../../support/exact-money.ts";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../support/harness.ts";

describe.each([{ split: false }, { split: true }])("an answer cut mid-way (split: $split)", ({ split }) => {
  let gateway: Gateway;
  beforeAll(async () => {
    // Only the simulator is used: the upstream URL is never called.
    gateway = await startGateway(testConfig("http://127.0.0.1:9/v1"), { split });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  /** simulator/cut-mid-stream breaks halfway through "You said: ...": after its first words. */
  async function chat(stream: boolean) {
    const response = await fetch(`${gateway.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "simulator/cut-mid-stream", stream, max_tokens: 100, messages: [{ role: "user", content: "one two three four five six" }] }),
    });
    return { status: response.status, id: response.headers.get("x-request-id") ?? "", headers: response.headers, text: await response.text() };
  }

  async function balance(): Promise<bigint> {
    await gateway.core.accounts.idle();
    return gateway.core.accounts.stores.credits.balance("org_test");
  }

  it("non-streamed: 502 upstream_error, nothing charged, a record with no tokens and cost 0", async () => {
    const before = await balance();
    const answer = await chat(false);
    expect(answer.status, answer.text).toBe(502);
    expect(JSON.parse(answer.text).error).toMatchObject({ code: "upstream_error", type: "api_error" });
    expect(await balance()).toBe(before);
    expect(await gateway.core.accounts.usage.get("org_test", answer.id)).toMatchObject({
      outcome: "upstream_error",
      streamed: false,
      promptTokens: 0,
      completionTokens: 0,
      cost: "0",
    });
  });

  it("non-streamed: the 502's routing trace says the serving attempt failed, and why; the message says the answer broke off", async () => {
    const answer = await chat(false);
    expect(answer.status).toBe(502);
    expect(answer.headers.get("x-router-provider")).toBe("simulator");
    expect(answer.headers.get("x-router-trace")).toBe("simulator/cut-mid-stream@simulator;error;connection_reset");
    const { error } = JSON.parse(answer.text);
    expect(error.message).toBe("The provider's answer broke off before it was complete: simulated connection cut mid-stream");
    expect(error.metadata.attempts).toEqual([{ model: "simulator/cut-mid-stream", provider: "simulator", outcome: "error", reason: "connection_reset" }]);
  });

  it("streamed: the in-band error's trace says the serving attempt failed (the headers went out when it began)", async () => {
    const answer = await chat(true);
    expect(answer.headers.get("x-router-trace")).toBe("simulator/cut-mid-stream@simulator;ok");
    const frames = answer.text.split("\n").filter((line) => line.startsWith("data: {")).map((line) => JSON.parse(line.slice(6)));
    expect(frames.at(-1).error.metadata.attempts).toEqual([{ model: "simulator/cut-mid-stream", provider: "simulator", outcome: "error", reason: "connection_reset" }]);
  });

  it("streamed: the relayed part is charged, and the record's estimated tokens make its cost", async () => {
    const before = await balance();
    const answer = await chat(true);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('"code":"upstream_error"');
    const record = await gateway.core.accounts.usage.get("org_test", answer.id);
    // The prompt's bound is 37 bytes (27, 8 for the message, 2 for no tools): 10 tokens at about 4 characters a token.
    expect(record).toMatchObject({ outcome: "upstream_error", streamed: true, promptTokens: 10 });
    expect(record!.completionTokens).toBeGreaterThan(0);
    // simulator/cut-mid-stream: prompt 0.0000001, completion 0.000002 a token.
    const cost = femtosOf(record!.cost);
    expect(cost).toBe(BigInt(record!.promptTokens) * 100_000_000n + BigInt(record!.completionTokens) * 2_000_000_000n);
    expect(await balance()).toBe(before - nanosRoundedUp(cost));
  });
});
