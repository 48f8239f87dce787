// Routing and fallback, proven by what the fake upstream received: which
// providers were tried, in which order, and that nothing falls back once the
// first token has reached the client.
import { createParser } from "eventsource-parser";
import OpenAI, { APIError } from "openai";
import { beforeEach, describe, expect, it } from "vitest";
import type { RouterConfig } from "../../../core/config/schema.ts";
import { TEST_KEY, testConfig, useGatewayWithUpstream } from "../../support/harness.ts";

/** testConfig plus test/ok with its dear route listed first, to tell price order from config order. */
function configWithReversedRoutes(upstreamUrl: string): RouterConfig {
  const config = testConfig(upstreamUrl);
  const ok = config.models.find((m) => m.id === "test/ok")!;
  config.models.push({ ...ok, id: "test/ok-dear-listed-first", name: "test/ok-dear-listed-first", providers: [...ok.providers].reverse() });
  return config;
}

const stack = useGatewayWithUpstream(configWithReversedRoutes);

beforeEach(() => {
  stack.upstream.requests.length = 0;
});

function post(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${stack.gateway.apiUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ messages: [{ role: "user", content: "Hi" }], ...body }),
  });
}

/** The `data:` payloads of an SSE body, read to its end. */
async function sseData(response: Response): Promise<string[]> {
  const data: string[] = [];
  const parser = createParser({ onEvent: (event) => data.push(event.data) });
  parser.feed(await response.text());
  return data;
}

/** Which upstream model ids were asked for, with which provider key, in order. */
function upstreamCalls(): string[] {
  return stack.upstream.requests.map((r) => `${String(r.body.model)} ${String(r.headers.authorization)}`);
}

interface Completion {
  model: string;
  provider: string;
  choices: { message: { content: string } }[];
  usage: { provider: string };
}

describe("fallback to the next provider before the first token", () => {
  it.each([
    ["test/fail-503", "fail-503", "http_503"],
    ["test/fail-429", "fail-429", "http_429"],
    ["test/reset", "reset", "connection_reset"],
  ])("%s, JSON: served by dear, both attempts in x-router-trace", async (model, cheapModelId, reason) => {
    const response = await post({ model });
    expect(response.status).toBe(200);
    const completion = (await response.json()) as Completion;
    expect(completion.choices[0].message.content).toBe("Hello from ok-dear");
    expect(completion.provider).toBe("dear");
    expect(completion.usage.provider).toBe("dear");
    expect(response.headers.get("x-router-provider")).toBe("dear");
    expect(response.headers.get("x-router-trace")).toBe(`${model}@cheap;error;${reason}, ${model}@dear;ok`);
    expect(upstreamCalls()).toEqual([`${cheapModelId} Bearer cheap-secret`, "ok-dear Bearer dear-secret"]);
  });

  it.each([
    ["test/fail-503", "http_503"],
    ["test/fail-429", "http_429"],
    ["test/reset", "connection_reset"],
  ])("%s, streamed: the stream comes from dear, both attempts in x-router-trace", async (model, reason) => {
    const response = await post({ model, stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(response.headers.get("x-router-trace")).toBe(`${model}@cheap;error;${reason}, ${model}@dear;ok`);
    const data = await sseData(response);
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { provider: string; choices: { delta: { content?: string } }[] });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Hello from ok-dear");
    expect(new Set(chunks.map((c) => c.provider))).toEqual(new Set(["dear"]));
    expect(stack.upstream.requests.map((r) => r.body.model)).toEqual([model.slice("test/".length), "ok-dear"]);
  });
});

describe("no fallback after the first token", () => {
  it("test/cut streamed: the first content chunk, then an in-band error event, then the stream closes; dear is never called", async () => {
    const response = await post({ model: "test/cut", stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-router-provider")).toBe("cheap");
    // text() resolving is the stream closing.
    const data = await sseData(response);
    expect(data).not.toContain("[DONE]");
    const events = data.map((d) => JSON.parse(d) as { choices?: { delta: { content?: string } }[]; error?: Record<string, unknown> });
    const errorAt = events.findIndex((e) => e.error !== undefined);
    expect(errorAt).toBe(events.length - 1);
    const content = events.slice(0, errorAt).map((e) => e.choices?.[0]?.delta.content ?? "");
    expect(content.join("")).toBe("Hello");
    expect(events[errorAt]).toEqual({
      error: {
        message: expect.stringContaining("broke off before it was complete"),
        type: "api_error",
        param: null,
        code: "upstream_error",
        // The serving attempt, traced ok when it began, failed.
        metadata: { attempts: [{ model: "test/cut", provider: "cheap", outcome: "error", reason: "connection_reset" }] },
      },
    });
    expect(stack.upstream.requests.map((r) => r.body.model)).toEqual(["cut-after-first"]);
  });
});

describe("provider preferences", () => {
  it('provider.order ["dear","cheap"] serves from dear', async () => {
    const response = await post({ model: "test/ok", provider: { order: ["dear", "cheap"] } });
    expect(response.status).toBe(200);
    const completion = (await response.json()) as Completion;
    expect(completion.provider).toBe("dear");
    expect(completion.choices[0].message.content).toBe("Hello from ok-dear");
    expect(upstreamCalls()).toEqual(["ok-dear Bearer dear-secret"]);
  });

  it('provider.only ["dear"] never calls cheap, even where cheap is the cheapest', async () => {
    const response = await post({ model: "test/fail-503", provider: { only: ["dear"] } });
    expect(response.status).toBe(200);
    const completion = (await response.json()) as Completion;
    expect(completion.provider).toBe("dear");
    expect(response.headers.get("x-router-trace")).toBe("test/fail-503@dear;ok");
    expect(upstreamCalls()).toEqual(["ok-dear Bearer dear-secret"]);
  });

  it("allow_fallbacks: false with test/fail-503: 502 upstream_error listing the one attempt", async () => {
    const response = await post({ model: "test/fail-503", provider: { allow_fallbacks: false } });
    expect(response.status).toBe(502);
    const body = (await response.json()) as { error: { code: string; type: string; metadata: { attempts: unknown[] } } };
    expect(body.error.code).toBe("upstream_error");
    expect(body.error.type).toBe("api_error");
    expect(body.error).not.toHaveProperty("status");
    expect(body.error.metadata.attempts).toEqual([{ model: "test/fail-503", provider: "cheap", outcome: "error", reason: "http_503" }]);
    expect(response.headers.get("x-router-trace")).toBe("test/fail-503@cheap;error;http_503");
    expect(upstreamCalls()).toEqual(["fail-503 Bearer cheap-secret"]);
  });
});

describe("fallback across models", () => {
  it("models: [test/all-429, test/ok]: both providers of the first model fail, the next model answers", async () => {
    const response = await post({ model: "test/all-429", models: ["test/all-429", "test/ok"] });
    expect(response.status).toBe(200);
    const completion = (await response.json()) as Completion;
    expect(completion.model).toBe("ok");
    expect(completion.provider).toBe("cheap");
    expect(completion.choices[0].message.content).toBe("Hello from ok");
    expect(response.headers.get("x-router-trace")).toBe(
      "test/all-429@cheap;error;http_429, test/all-429@dear;error;http_429, test/ok@cheap;ok",
    );
    expect(stack.upstream.requests.map((r) => r.body.model)).toEqual(["fail-429", "fail-429", "ok"]);
  });
});

describe("default order", () => {
  it.each(["test/ok", "test/ok-dear-listed-first"])("%s: the cheapest provider is tried first", async (model) => {
    const response = await post({ model });
    expect(response.status).toBe(200);
    const completion = (await response.json()) as Completion;
    expect(completion.provider).toBe("cheap");
    expect(response.headers.get("x-router-trace")).toBe(`${model}@cheap;ok`);
    expect(upstreamCalls()).toEqual(["ok Bearer cheap-secret"]);
  });
});

describe("answers that are not what they claim", () => {
  it.each([
    ["test/fail-401", "http_401", false],
    ["test/html", "invalid_answer", true],
    ["test/end-early", "truncated", true],
  ])("%s falls back to the next provider (%s)", async (model, reason, stream) => {
    const response = await post({ model, stream });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-router-trace")).toBe(`${model}@cheap;error;${reason}, ${model}@dear;ok`);
    await response.text();
  });

  it("a non-streaming answer without usage is refused too, not billed as zero", async () => {
    // end-early answers JSON requests normally; html has no usage either way.
    const response = await post({ model: "test/html" });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-router-trace")).toBe("test/html@cheap;error;invalid_json, test/html@dear;ok");
  });
});

describe("more provider preferences", () => {
  it("allow_fallbacks: false with only: the cheapest named provider alone, no backup", async () => {
    const response = await post({ model: "test/fail-503", provider: { only: ["cheap", "dear"], allow_fallbacks: false } });
    expect(response.status).toBe(502);
    expect(response.headers.get("x-router-trace")).toBe("test/fail-503@cheap;error;http_503");
    expect(upstreamCalls()).toEqual(["fail-503 Bearer cheap-secret"]);
  });

  it("allow_fallbacks: false with order: the first provider of order alone, no backup", async () => {
    const response = await post({ model: "test/fail-503", provider: { order: ["cheap", "dear"], allow_fallbacks: false } });
    expect(response.status).toBe(502);
    expect(response.headers.get("x-router-trace")).toBe("test/fail-503@cheap;error;http_503");
    expect(upstreamCalls()).toEqual(["fail-503 Bearer cheap-secret"]);
  });

  it("allow_fallbacks: false with order naming the dear provider first: it alone is tried", async () => {
    const response = await post({ model: "test/ok", provider: { order: ["dear", "cheap"], allow_fallbacks: false } });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-router-trace")).toBe("test/ok@dear;ok");
  });

  it("order with fallbacks on: the named providers first, then the backup", async () => {
    const response = await post({ model: "test/fail-503", provider: { order: ["cheap"] } });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-router-trace")).toBe("test/fail-503@cheap;error;http_503, test/fail-503@dear;ok");
  });

  it("a provider that names no key variable is enabled and sent no Authorization header", async () => {
    const response = await post({ model: "test/local" });
    expect(response.status).toBe(200);
    expect(stack.upstream.requests.at(-1)!.headers.authorization).toBeUndefined();
  });
});

describe("an in-band stream error through the official SDK", () => {
  it("arrives as an APIError after the text already streamed", async () => {
    const client = new OpenAI({ apiKey: TEST_KEY, baseURL: stack.gateway.apiUrl, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: "test/cut", messages: [{ role: "user", content: "Hi" }], stream: true });
    let text = "";
    const read = async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    };
    await expect(read()).rejects.toBeInstanceOf(APIError);
    expect(text).toBe("Hello");
  });
});
