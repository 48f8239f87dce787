// The upstream connection pool: unbounded by default (streams are long-lived, so
// a bounded pool makes streams beyond the limit wait for others to end), and
// bounded per provider by the configuration's `max_connections`. Proven by
// counting the sockets a local upstream sees.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../../core/config/load.ts";
import { providerSchema } from "../../../core/config/schema.ts";
import { createHttpClient, type HttpClient } from "../../../core/providers/http-client.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../support/harness.ts";

/** An upstream that holds each request open until `shouldRelease` says so, counting sockets. */
interface HoldingUpstream {
  url: string;
  /** Sockets ever opened, and the most open at one time. */
  connections: number;
  maxOpenSockets: number;
  held: http.ServerResponse[];
  releaseAll(): void;
  close(): Promise<void>;
}

const COMPLETION = JSON.stringify({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1700000000,
  model: "held",
  choices: [{ index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

async function startHoldingUpstream(shouldRelease: (held: number) => boolean): Promise<HoldingUpstream> {
  let open = 0;
  const upstream: HoldingUpstream = {
    url: "",
    connections: 0,
    maxOpenSockets: 0,
    held: [],
    releaseAll() {
      for (const res of upstream.held.splice(0)) res.writeHead(200, { "content-type": "application/json" }).end(COMPLETION);
    },
    async close() {
      upstream.releaseAll();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      upstream.held.push(res);
      if (shouldRelease(upstream.held.length)) upstream.releaseAll();
    });
  });
  server.on("connection", (socket) => {
    upstream.connections += 1;
    open += 1;
    upstream.maxOpenSockets = Math.max(upstream.maxOpenSockets, open);
    socket.on("close", () => (open -= 1));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  upstream.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return upstream;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function post(client: HttpClient, upstream: HoldingUpstream, provider?: string) {
  return client
    .stream(new URL(`${upstream.url}/chat/completions`), {}, "{}", { signal: new AbortController().signal, headersTimeoutMs: 30_000, bodyTimeoutMs: 30_000, provider })
    .then((response) => response.body.text());
}

describe("HttpClient", () => {
  it("opens as many connections as there are concurrent requests by default (200, beyond the old limit of 128)", { timeout: 20_000 }, async () => {
    const upstream = await startHoldingUpstream(() => false);
    const client = createHttpClient();
    cleanups.push(() => client.close(), () => upstream.close());
    const answers = Array.from({ length: 200 }, () => post(client, upstream, "any"));
    // Every request must be at the upstream at once; a bounded pool leaves the rest queued behind held ones.
    await vi.waitFor(() => expect(upstream.held).toHaveLength(200), { timeout: 10_000, interval: 20 });
    upstream.releaseAll();
    await Promise.all(answers);
    expect(upstream.connections).toBe(200);
  });

  it("keeps at most max_connections sockets open to a provider; its other calls wait their turn", async () => {
    // Answer in pairs: with a limit of 2 each pair arrives on the same two sockets.
    const upstream = await startHoldingUpstream((held) => held === 2);
    const client = createHttpClient({ maxConnections: { limited: 2 } });
    cleanups.push(() => client.close(), () => upstream.close());
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(client, upstream, "limited")));
    expect(answers).toHaveLength(6);
    expect(upstream.connections).toBe(2);
    expect(upstream.maxOpenSockets).toBe(2);
  });

  it("limits each provider on its own, even when two providers share an origin", { timeout: 20_000 }, async () => {
    const upstream = await startHoldingUpstream(() => false);
    const client = createHttpClient({ maxConnections: { one: 1, other: 1 } });
    cleanups.push(() => client.close(), () => upstream.close());
    const answers = [post(client, upstream, "one"), post(client, upstream, "one"), post(client, upstream, "other")];
    // One from each provider gets through; the second of "one" waits for the first.
    await vi.waitFor(() => expect(upstream.held).toHaveLength(2), { timeout: 10_000, interval: 20 });
    expect(upstream.connections).toBe(2);
    upstream.releaseAll();
    await vi.waitFor(() => expect(upstream.held).toHaveLength(1), { timeout: 10_000, interval: 20 });
    upstream.releaseAll();
    await Promise.all(answers);
    expect(upstream.connections).toBe(2);
  });
});

describe("max_connections in the configuration", () => {
  const provider = { id: "p", label: "P", protocol: "openai-compatible", base_url: "http://127.0.0.1:1/v1" };

  it("is a positive integer, absent by default", () => {
    expect(providerSchema.parse(provider).max_connections).toBeUndefined();
    expect(providerSchema.parse({ ...provider, max_connections: 4 }).max_connections).toBe(4);
    for (const bad of [0, -1, 1.5, "8"]) expect(providerSchema.safeParse({ ...provider, max_connections: bad }).success).toBe(false);
  });

  it("bounds the gateway's connections to that provider", async () => {
    const upstream = await startHoldingUpstream((held) => held === 2);
    const config = parseConfig(
      JSON.stringify({
        providers: [{ ...provider, base_url: upstream.url, max_connections: 2 }],
        models: [
          {
            id: "p/held", name: "held", created: 1700000000, creator: "p", context_length: 1000, max_completion_tokens: 100,
            input_modalities: ["text"], output_modalities: ["text"], supported_parameters: ["max_tokens"],
            providers: [{ provider: "p", provider_model_id: "held", pricing: { prompt: "0", completion: "0" } }],
          },
        ],
        organizations: [{ id: "org", name: "Org", credits: "10", keys: [{ id: "key", env: "TEST_API_KEY" }] }],
      }),
    );
    const gateway: Gateway = await startGateway(config);
    cleanups.push(() => gateway.close(), () => upstream.close());
    const statuses = await Promise.all(
      Array.from({ length: 6 }, () =>
        fetch(`${gateway.apiUrl}/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "p/held", messages: [{ role: "user", content: "Hi" }] }),
        }).then(async (response) => (await response.text(), response.status)),
      ),
    );
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    expect(upstream.connections).toBe(2);
    expect(upstream.maxOpenSockets).toBe(2);
  });
});
