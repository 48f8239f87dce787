// Through the HTTP gateway (in-process and split): caller text that ends up in
// a response header (a dropped tool's name, an unknown key's name in a
// warning) is percent-encoded and the header bounded, so the answer is the
// usual 200, charged what its usage record says; before, Node refused the head
// (500) while the hold stayed taken, or a stream was charged for that 500.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createApp } from "../../../gateway/app.ts";
import { createInProcessCoreClient } from "../../../gateway/core-client.ts";
import { bearerKey } from "../../../gateway/credentials.ts";
import { specErrorBody } from "../../../gateway/errors/spec-error-body.ts";
import { decodeChatRequest } from "../../../gateway/formats/chat-completions/decode-request.ts";
import { takeBody, type GatewayFormat } from "../../../gateway/formats/format.ts";
import { MAX_HEADER_TEXT } from "../../../gateway/headers.ts";
import { listenGateway } from "../../../gateway/http-server.ts";
import { foldAnswer, startCall } from "../../../gateway/start-call.ts";
import { femtosOf, nanosRoundedUp } from "../../support/exact-money.ts";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../support/harness.ts";

describe.each([{ split: false }, { split: true }])("caller text in response headers (split: $split)", ({ split }) => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await startGateway(testConfig("http://127.0.0.1:9/v1"), { split });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function balance(): Promise<bigint> {
    await gateway.core.accounts.idle();
    return gateway.core.accounts.stores.credits.balance("org_test");
  }

  async function post(path: string, body: object) {
    const response = await fetch(`${gateway.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, id: response.headers.get("x-request-id") ?? "", text: await response.text() };
  }

  /** The answer is a 200 whose usage record is ok, and the balance moved by exactly its cost: the hold was settled. */
  async function expectChargedAsServed(send: () => ReturnType<typeof post>) {
    const before = await balance();
    const answer = await send();
    expect(answer.status, answer.text).toBe(200);
    const record = await gateway.core.accounts.usage.get("org_test", answer.id);
    expect(record).toMatchObject({ outcome: "ok" });
    expect(await balance()).toBe(before - nanosRoundedUp(femtosOf(record!.cost)));
    return answer;
  }

  const tools = (...names: string[]) => names.map((name) => ({ type: "custom", name }));

  it.each([false, true])("a dropped tool named outside Latin-1 or with a control character (stream: %s)", async (stream) => {
    const answer = await expectChargedAsServed(() =>
      post("/api/v1/responses", { model: "simulator/echo", input: "hi", stream, tools: tools("\u0100", "a\r\nb\u0000", "😀%") }),
    );
    const warnings = answer.headers.get("x-router-warnings")!;
    expect(warnings).toMatch(/^[\x20-\x7e]+$/);
    const decoded = decodeURIComponent(warnings);
    expect(decoded).toContain("tools[0] (custom \u0100) was left out");
    expect(decoded).toContain("tools[1] (custom a\r\nb\u0000) was left out");
    expect(decoded).toContain("tools[2] (custom 😀%) was left out");
  });

  it("a lone surrogate in a tool's name reaches the header as U+FFFD", async () => {
    const answer = await expectChargedAsServed(() => post("/api/v1/responses", { model: "simulator/echo", input: "hi", tools: tools("x\ud800") }));
    expect(decodeURIComponent(answer.headers.get("x-router-warnings")!)).toContain("(custom x\ufffd)");
  });

  it("512 dropped tools: the header stays under its cap and counts the rest", async () => {
    const names = Array.from({ length: 512 }, (_, i) => `tool_${i}_${"\u0100".repeat(20)}`);
    const answer = await expectChargedAsServed(() => post("/api/v1/responses", { model: "simulator/echo", input: "hi", tools: tools(...names) }));
    const warnings = answer.headers.get("x-router-warnings")!;
    expect(warnings.length).toBeLessThanOrEqual(MAX_HEADER_TEXT);
    const shown = decodeURIComponent(warnings).split("; ");
    const [, more] = /^\.\.\. (\d+) more$/.exec(shown.at(-1)!)!;
    expect(shown.length - 1 + Number(more)).toBe(512);
  });

  it("one dropped tool with a 10,000-character name: cut between characters, still decodable", async () => {
    const answer = await expectChargedAsServed(() => post("/api/v1/responses", { model: "simulator/echo", input: "hi", tools: tools("😀".repeat(10_000)) }));
    const warnings = answer.headers.get("x-router-warnings")!;
    expect(warnings.length).toBeLessThanOrEqual(MAX_HEADER_TEXT);
    expect(decodeURIComponent(warnings)).toMatch(/^tools\[0\] \(custom (😀)+\.\.\.$/u);
  });

  it.each([false, true])("Messages: unknown keys inside thinking, output_config, tool_choice and at the top level (stream: %s)", async (stream) => {
    const answer = await expectChargedAsServed(() =>
      post("/v1/messages", {
        model: "simulator/echo",
        max_tokens: 64,
        stream,
        messages: [{ role: "user", content: "hi" }],
        thinking: { type: "disabled", "th\u0100": 1 },
        output_config: { "o\u0007": 1 },
        "top\u2028level\u0100": true,
      }),
    );
    const decoded = decodeURIComponent(answer.headers.get("x-router-warnings")!);
    expect(decoded).toContain("thinking.th\u0100 was not sent");
    expect(decoded).toContain("output_config.o\u0007 was not sent");
    expect(decoded).toContain("top\u2028level\u0100");
  });
});

/**
 * A chat route whose answer head is refused when its routing headers are set,
 * as Node refused a header value before they were made safe: any such failure
 * must end the call, so its hold is released at once, not by the sweep hours later.
 */
const refusedHead: GatewayFormat = {
  encodeError: specErrorBody,
  register(routes, { core }) {
    routes.post("/refused-head", async (ctx) => {
      const { request } = decodeChatRequest(takeBody(ctx), { apiKey: bearerKey(ctx.req.headers), requestId: ctx.state.requestId });
      const call = await startCall(ctx, core, request);
      const set = ctx.set.bind(ctx) as (...args: unknown[]) => void;
      ctx.set = ((...args: unknown[]) => {
        if (typeof args[0] === "object" && args[0] !== null && "x-router-trace" in args[0]) throw new TypeError("Invalid character in header content");
        set(...args);
      }) as typeof ctx.set;
      ctx.body = await foldAnswer(ctx, call);
    });
  },
};

// In-process: the call is still waiting for the gateway to read it. (Split, the core may have sent the whole
// answer and settled it before the gateway's abort arrives: then it is charged, its hold still never left taken.)
describe("a head refused after the call started", () => {
  let gateway: Gateway;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    gateway = await startGateway(testConfig("http://127.0.0.1:9/v1"));
    server = listenGateway(createApp({ core: createInProcessCoreClient(gateway.core), formats: [refusedHead] }), 0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await gateway?.close();
  });

  it("answers 500 and releases the hold: the balance is as before, the record costs 0", async () => {
    await gateway.core.accounts.idle();
    const before = await gateway.core.accounts.stores.credits.balance("org_test");
    const response = await fetch(`${url}/refused-head`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "simulator/echo", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(500);
    const id = response.headers.get("x-request-id")!;
    const record = await vi.waitFor(async () => {
      const written = await gateway.core.accounts.usage.get("org_test", id);
      expect(written).toBeDefined();
      return written!;
    });
    expect(record.cost).toBe("0");
    await gateway.core.accounts.idle();
    expect(await gateway.core.accounts.stores.credits.balance("org_test")).toBe(before);
  });
});
