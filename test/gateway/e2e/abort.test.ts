// A client that goes away aborts the core call and the upstream request
// (ARCHITECTURE.md rule 4: AbortSignal end to end), in both deployments.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouterConfig } from "../../../core/config/schema.ts";
import { startFakeUpstream, type FakeUpstream } from "../../support/fake-openai-upstream.ts";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../support/harness.ts";

/**
 * An upstream that reads the request and never answers. The fake only hangs
 * streamed requests, and a JSON request from the client is sent upstream as
 * JSON; this one lets a non-streaming call be in flight when the client leaves.
 */
interface StallingUpstream {
  url: string;
  /** Resolves when the next request has arrived. */
  nextRequest(): Promise<void>;
  /** Resolves when a stalled request's connection closes. */
  nextAbort(): Promise<void>;
  close(): Promise<void>;
}

async function startStallingUpstream(): Promise<StallingUpstream> {
  const requestWaiters: (() => void)[] = [];
  const abortWaiters: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.once("end", () => {
      res.once("close", () => abortWaiters.shift()?.());
      requestWaiters.shift()?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    nextRequest: () => new Promise((resolve) => requestWaiters.push(resolve)),
    nextAbort: () => new Promise((resolve) => abortWaiters.push(resolve)),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function withStallingModel(config: RouterConfig, stallUrl: string): RouterConfig {
  const ok = config.models.find((m) => m.id === "test/ok")!;
  const stallRoute = { ...ok.providers[0], provider: "stall", provider_model_id: "stall" };
  config.providers.push({ ...config.providers.find((p) => p.id === "cheap")!, id: "stall", label: "Stall", base_url: stallUrl, api_key_env: "CHEAP_KEY" });
  config.models.push({ ...ok, id: "test/stall", name: "test/stall", providers: [stallRoute] });
  return config;
}

describe.each([{ split: false }, { split: true }])("client abort (split: $split)", ({ split }) => {
  let upstream: FakeUpstream;
  let stalling: StallingUpstream;
  let gateway: Gateway;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    stalling = await startStallingUpstream();
    gateway = await startGateway(withStallingModel(testConfig(upstream.url), stalling.url), { split });
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await stalling?.close();
  });

  function post(body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
    return fetch(`${gateway.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "Hi there" }], ...body }),
      signal,
    });
  }

  it("a streamed request to test/hang aborted after its first chunk closes the upstream connection", async () => {
    const upstreamClosed = upstream.nextAbort();
    const controller = new AbortController();
    const response = await post({ model: "test/hang", stream: true }, controller.signal);
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    expect(new TextDecoder().decode(first.value)).toContain("data: ");
    controller.abort();
    await upstreamClosed;
    await expect(reader.read()).rejects.toThrow();
  });

  it("a non-streaming request aborted while the upstream is working closes the upstream connection", async () => {
    const arrived = stalling.nextRequest();
    const upstreamClosed = stalling.nextAbort();
    const controller = new AbortController();
    const pending = post({ model: "test/stall" }, controller.signal);
    await arrived;
    controller.abort();
    await expect(pending).rejects.toThrow();
    await upstreamClosed;
  });

  it("a streamed simulator/slow request aborted by the client leaves the gateway serving", async () => {
    const controller = new AbortController();
    const response = await post({ model: "simulator/slow", stream: true }, controller.signal);
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    controller.abort();
    await expect(reader.read()).rejects.toThrow();

    const next = await post({ model: "simulator/echo", messages: [{ role: "user", content: "still there?" }] });
    expect(next.status).toBe(200);
    const completion = (await next.json()) as { choices: { message: { content: string } }[] };
    expect(completion.choices[0].message.content).toBe("You said: still there?");
  });
});
