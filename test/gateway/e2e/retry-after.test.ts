// An upstream's Retry-After reaches the caller: when every attempt failed, the
// gateway's 429 upstream_rate_limited (or 502 upstream_error) carries the
// longest wait the providers asked for, in-process and split, JSON and stream.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../../core/config/load.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../support/harness.ts";
import { startRecordingServer, type FakeUpstream } from "../../support/recording-server.ts";

/**
 * The upstream answers by model id: "rate-limited-<n>" is 429 with
 * `Retry-After: <n>`, "unavailable-<n>" is 503 with `Retry-After: <n>`, and
 * "rate-limited" is 429 saying nothing about when to come back. Gemini's model
 * (in the path) is refused as Gemini does: a RetryInfo of 9s in the body (and
 * for "gemini-with-header", `Retry-After: 3` as well).
 */
function startUpstream(): Promise<FakeUpstream> {
  return startRecordingServer("/v1", (request, res) => {
    if (request.path.includes("/models/")) {
      const header = request.path.includes("with-header") ? { "retry-after": "3" } : {};
      res.writeHead(429, { "content-type": "application/json", ...header });
      const details = [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "9s" }];
      res.end(JSON.stringify({ error: { code: 429, message: "quota", status: "RESOURCE_EXHAUSTED", details } }));
      return;
    }
    const [, kind, seconds] = /^(rate-limited|unavailable)(?:-(\d+))?$/.exec(String(request.body.model)) ?? [];
    const status = kind === "unavailable" ? 503 : 429;
    res.writeHead(status, { "content-type": "application/json", ...(seconds ? { "retry-after": seconds } : {}) });
    res.end(JSON.stringify({ error: { message: `${kind} upstream`, type: "requests", code: null } }));
  });
}

function configFor(upstreamUrl: string) {
  const route = (provider: string, providerModelId: string) => ({ provider, provider_model_id: providerModelId, pricing: { prompt: "0.000001", completion: "0.000002" } });
  const model = (id: string, routes: ReturnType<typeof route>[]) => ({
    id, name: id, created: 1, creator: "t", context_length: 8192, max_completion_tokens: 100,
    input_modalities: ["text"], output_modalities: ["text"], supported_parameters: ["max_tokens"], providers: routes,
  });
  return parseConfig(
    JSON.stringify({
      providers: [
        { id: "first", label: "First", protocol: "openai-compatible", base_url: upstreamUrl, api_key_env: "CHEAP_KEY" },
        { id: "second", label: "Second", protocol: "openai-compatible", base_url: upstreamUrl, api_key_env: "DEAR_KEY" },
        { id: "google", label: "Google", protocol: "gemini", base_url: upstreamUrl, api_key_env: "CHEAP_KEY" },
      ],
      models: [
        model("t/limited", [route("first", "rate-limited-7")]),
        model("t/limited-longer-last", [route("first", "rate-limited-7"), route("second", "rate-limited-30")]),
        model("t/limited-longer-first", [route("first", "rate-limited-30"), route("second", "rate-limited-7")]),
        model("t/unavailable", [route("first", "unavailable-12"), route("second", "rate-limited")]),
        model("t/limited-silently", [route("first", "rate-limited")]),
        model("t/gemini-limited", [route("google", "gemini-model")]),
        model("t/gemini-limited-with-header", [route("google", "gemini-with-header")]),
      ],
      organizations: [{ id: "org_test", name: "Test", credits: "10", keys: [{ id: "key_test", env: "TEST_API_KEY" }] }],
    }),
  );
}

describe.each([{ split: false }, { split: true }])("Retry-After from upstream (split: $split)", ({ split }) => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  beforeAll(async () => {
    upstream = await startUpstream();
    gateway = await startGateway(configFor(upstream.url), { split });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  async function chat(model: string, stream = false) {
    const response = await fetch(`${gateway.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "Hi" }] }),
    });
    return {
      status: response.status,
      retryAfter: response.headers.get("retry-after"),
      trace: response.headers.get("x-router-trace"),
      body: (await response.json()) as { error: Record<string, unknown> },
    };
  }

  it.each([false, true])("a 429 with Retry-After: 7 is our 429 upstream_rate_limited with Retry-After: 7 (stream: %s)", async (stream) => {
    const answer = await chat("t/limited", stream);
    expect(answer.status).toBe(429);
    expect(answer.body.error).toMatchObject({ code: "upstream_rate_limited", type: "rate_limit_error", status: 429 });
    expect(answer.retryAfter).toBe("7");
  });

  it.each(["t/limited-longer-last", "t/limited-longer-first"])("passes on the longest wait of the attempts, whichever came first (%s)", async (model) => {
    const answer = await chat(model);
    expect(answer.status).toBe(429);
    expect(answer.retryAfter).toBe("30");
    expect(answer.trace).toBe(`${model}@first;error;http_429, ${model}@second;error;http_429`);
  });

  it("a 503 with Retry-After among the failures: 502 upstream_error with that Retry-After", async () => {
    const answer = await chat("t/unavailable");
    expect(answer.status).toBe(502);
    expect(answer.body.error).toMatchObject({ code: "upstream_error", type: "api_error" });
    expect(answer.retryAfter).toBe("12");
  });

  it("Gemini's RetryInfo in the body becomes Retry-After too", async () => {
    const answer = await chat("t/gemini-limited");
    expect(answer.status).toBe(429);
    expect(answer.retryAfter).toBe("9");
    // A Retry-After header, when there is one, is what counts.
    expect((await chat("t/gemini-limited-with-header")).retryAfter).toBe("3");
  });

  it("no Retry-After when no provider asked for a wait", async () => {
    const answer = await chat("t/limited-silently");
    expect(answer.status).toBe(429);
    expect(answer.retryAfter).toBeNull();
  });
});
