// The configured embedding provider against a fake OpenAI embeddings server:
// the exact request, both answer forms, normalisation, the exact expense, and
// every failure as a plain Error (timeout, abort, HTTP error, malformed answer).
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { formatMoney } from "../../../core/billing/money.ts";
import { createOpenAiEmbedder, lastCharacters, type EmbeddingExpense } from "../../../core/cache/embedding/openai-embeddings.ts";
import { embeddingSchema, type EmbeddingConfig } from "../../../core/config/cache-schema.ts";
import { createHttpClient, type HttpClient } from "../../../core/providers/http-client.ts";
import { startRecordingServer, type FakeUpstream, type RecordedRequest } from "../../support/recording-server.ts";

/** What the fake server answers next: a status and a JSON body, or nothing ever (the connection held open). */
type Reply = { status: number; body: unknown } | "hang";

let upstream: FakeUpstream;
let http: HttpClient;
let reply: (request: RecordedRequest) => Reply;

beforeAll(async () => {
  upstream = await startRecordingServer("/v1", (request, res, onAbort) => answer(reply(request), res, onAbort));
  http = createHttpClient();
});

afterAll(async () => {
  await http.close();
  await upstream.close();
});

beforeEach(() => {
  upstream.requests.length = 0;
  reply = (request) => ({ status: 200, body: base64Answer(request.body.input.map(() => [3, 4]), 7) });
});

function answer(next: Reply, res: ServerResponse, onAbort: () => void) {
  if (next === "hang") {
    res.once("close", onAbort);
    return;
  }
  res.writeHead(next.status, { "content-type": "application/json" }).end(JSON.stringify(next.body));
}

/** OpenAI's answer to `encoding_format: "base64"`: each vector's little-endian float32 bytes. */
function base64Answer(vectors: number[][], promptTokens: number) {
  return {
    object: "list",
    data: vectors.map((vector, index) => ({ object: "embedding", index, embedding: base64Of(vector) })),
    model: "text-embedding-3-small",
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

function base64Of(vector: number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString("base64");
}

function configOf(overrides: Partial<EmbeddingConfig> = {}): EmbeddingConfig {
  return embeddingSchema.parse({ base_url: upstream.url, model: "text-embedding-3-small", similarity_threshold: 0.9, ...overrides });
}

function embedderOf(overrides: Partial<EmbeddingConfig> = {}, caller: { apiKey?: string; onExpense?: (expense: EmbeddingExpense) => void } = { apiKey: "sk-test" }) {
  return createOpenAiEmbedder({ config: configOf(overrides), http, ...caller });
}

describe("the request", () => {
  it("posts every text in one request to {base_url}/embeddings, with the key, the model, the dimensions and base64", async () => {
    await embedderOf({ dimensions: 2 }).embed(["What is the capital of France?", "Quelle est la capitale de la France ?"]);
    expect(upstream.requests).toHaveLength(1);
    const [request] = upstream.requests;
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/v1/embeddings");
    expect(request.headers.authorization).toBe("Bearer sk-test");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.body).toEqual({
      model: "text-embedding-3-small",
      input: ["What is the capital of France?", "Quelle est la capitale de la France ?"],
      dimensions: 2,
      encoding_format: "base64",
    });
  });

  it("sends no Authorization header without a key, and no dimensions when none are configured", async () => {
    await embedderOf({}, {}).embed(["hello"]);
    const [request] = upstream.requests;
    expect(request.headers.authorization).toBeUndefined();
    expect(request.body).toEqual({ model: "text-embedding-3-small", input: ["hello"], encoding_format: "base64" });
  });

  it("joins the path to a base_url with a trailing slash (Gemini's is documented with one)", async () => {
    await embedderOf({ base_url: upstream.url + "/" }).embed(["hello"]);
    expect(upstream.requests[0].path).toBe("/v1/embeddings");
  });

  it("cuts a text longer than max_input_characters to its end", async () => {
    await embedderOf({ max_input_characters: 11 }).embed(["a long system preamble, then the question: why?", "short"]);
    expect(upstream.requests[0].body.input).toEqual(["stion: why?", "short"]);
  });

  it("never sends half a surrogate pair", () => {
    expect(lastCharacters("ab😀cd", 3)).toBe("cd");
    expect(lastCharacters("ab😀cd", 4)).toBe("😀cd");
    expect(lastCharacters("abc", 3)).toBe("abc");
  });

  it("makes no request for no texts", async () => {
    await expect(embedderOf().embed([])).resolves.toEqual([]);
    expect(upstream.requests).toHaveLength(0);
  });
});

describe("the answer", () => {
  it("decodes base64 vectors and L2-normalises them", async () => {
    reply = () => ({ status: 200, body: base64Answer([[3, 4], [0, -2]], 5) });
    const vectors = await embedderOf().embed(["a", "b"]);
    expect(vectors.map((vector) => [...vector])).toEqual([[Math.fround(0.6), Math.fround(0.8)], [0, -1]]);
    expect(vectors[0]).toBeInstanceOf(Float32Array);
  });

  it("reads float vectors from a server that ignores encoding_format, placed by their index", async () => {
    reply = () => ({
      status: 200,
      body: { data: [{ index: 1, embedding: [0, 0, 5] }, { index: 0, embedding: [1, 1, 1] }], usage: { prompt_tokens: 2, total_tokens: 2 } },
    });
    const [first, second] = await embedderOf().embed(["a", "b"]);
    expect([...second]).toEqual([0, 0, 1]);
    const third = Math.fround(1 / Math.sqrt(3));
    expect([...first]).toEqual([third, third, third]);
  });

  it("reports the expense exactly from usage.prompt_tokens at the configured price", async () => {
    reply = (request) => ({ status: 200, body: base64Answer(request.body.input.map(() => [1, 0]), 7) });
    const expenses: EmbeddingExpense[] = [];
    await embedderOf({ price_per_million_tokens: "0.123456789" }, { onExpense: (expense) => expenses.push(expense) }).embed(["a", "b"]);
    expect(expenses).toHaveLength(1);
    const [expense] = expenses;
    expect({ ...expense, cost: formatMoney(expense.cost) }).toEqual({
      model: "text-embedding-3-small",
      baseUrl: upstream.url,
      inputTokens: 7,
      // 7 × 0.123456789 / 1,000,000, to the last digit.
      cost: "0.000000864197523",
    });
  });

  it("reports a free local server's tokens at zero cost, and no expense when the answer has no usage", async () => {
    const expenses: EmbeddingExpense[] = [];
    await embedderOf({}, { onExpense: (expense) => expenses.push(expense) }).embed(["a"]);
    expect(expenses.map((expense) => [expense.inputTokens, expense.cost])).toEqual([[7, 0n]]);
    reply = () => ({ status: 200, body: { data: [{ index: 0, embedding: [1, 0] }] } });
    await embedderOf({}, { onExpense: (expense) => expenses.push(expense) }).embed(["a"]);
    expect(expenses).toHaveLength(1);
  });

  it("reports the expense of an answer whose vectors are refused: the tokens were spent", async () => {
    reply = () => ({ status: 200, body: { data: [], usage: { prompt_tokens: 3, total_tokens: 3 } } });
    const expenses: EmbeddingExpense[] = [];
    await expect(embedderOf({}, { apiKey: "sk-test", onExpense: (expense) => expenses.push(expense) }).embed(["a"])).rejects.toThrow("answered 0 embeddings for 1 texts");
    expect(expenses.map((expense) => expense.inputTokens)).toEqual([3]);
  });
});

describe("the embedding space", () => {
  it("is named by model, dimensions and the server's host, and its threshold is the configured one", () => {
    const host = new URL(upstream.url).host;
    expect(embedderOf({ dimensions: 256 }).id).toBe(`openai-embeddings:text-embedding-3-small@256@${host}`);
    expect(embedderOf().id).toBe(`openai-embeddings:text-embedding-3-small@native@${host}`);
    expect(embedderOf({ base_url: "https://api.openai.com/v1" }).id).toBe("openai-embeddings:text-embedding-3-small@native@api.openai.com");
    expect(embedderOf({ similarity_threshold: 0.83 }).defaultThreshold).toBe(0.83);
  });
});

describe("failures", () => {
  it("names the status and OpenAI's error message of a 401", async () => {
    reply = () => ({
      status: 401,
      body: { error: { message: "Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.", type: "invalid_request_error", param: null, code: "invalid_api_key" } },
    });
    const failure = embedderOf().embed(["a"]);
    await expect(failure).rejects.toThrow(/^embedding server 127\.0\.0\.1:\d+ answered HTTP 401: Incorrect API key provided: sk-test\. /);
    await expect(failure).rejects.toBeInstanceOf(Error);
  });

  it.each<[string, unknown]>([
    ["TEI's string error", { error: "Input validation error: inputs must have less than 512 tokens", error_type: "Validation" }],
    ["Google's error in a list", [{ error: { code: 400, message: "Input validation error: inputs must have less than 512 tokens", status: "INVALID_ARGUMENT" } }]],
    ["an older vLLM's top-level message", { object: "error", message: "Input validation error: inputs must have less than 512 tokens", type: "BadRequestError", code: 400 }],
  ])("quotes %s", async (_, body) => {
    reply = () => ({ status: 400, body });
    await expect(embedderOf().embed(["a"])).rejects.toThrow("answered HTTP 400: Input validation error: inputs must have less than 512 tokens");
  });

  it.each<[string, (inputs: string[]) => unknown, string]>([
    ["no data", () => ({ object: "list" }), "answered an unexpected shape"],
    ["an embedding that is neither base64 nor numbers", () => ({ data: [{ index: 0, embedding: { values: [1] } }] }), "unexpected shape"],
    ["a number that is not a number", () => ({ data: [{ index: 0, embedding: [1, "2"] }] }), "unexpected shape: Invalid input at data.0.embedding"],
    ["fewer vectors than texts", () => base64Answer([[1, 0]], 1), "answered 1 embeddings for 2 texts"],
    ["one index twice", () => ({ data: [{ index: 0, embedding: [1] }, { index: 0, embedding: [1] }] }), "answered index 0 out of place"],
    ["an index past the texts", () => ({ data: [{ index: 0, embedding: [1] }, { index: 2, embedding: [1] }] }), "answered index 2 out of place"],
    ["vectors of different lengths", () => ({ data: [{ index: 0, embedding: [1, 0] }, { index: 1, embedding: [1, 0, 0] }] }), "vectors of different lengths"],
    ["a zero vector", () => base64Answer([[0, 0], [1, 0]], 1), "empty or zero"],
    ["a NaN in base64", () => base64Answer([[Number.NaN, 1], [1, 0]], 1), "not finite"],
    ["base64 that is not float32s", () => ({ data: [{ index: 0, embedding: "AAE=" }, { index: 1, embedding: base64Of([1]) }] }), "base64 embedding of 2 bytes"],
  ])("refuses an answer with %s", async (_, body, message) => {
    reply = (request) => ({ status: 200, body: body(request.body.input) });
    await expect(embedderOf().embed(["a", "b"])).rejects.toThrow(message);
  });

  it("refuses vectors of another length than the dimensions asked", async () => {
    await expect(embedderOf({ dimensions: 256 }).embed(["a"])).rejects.toThrow("answered 2 dimensions, 256 were asked");
  });

  it("refuses an answer that is not JSON", async () => {
    reply = () => ({ status: 200, body: undefined });
    await expect(embedderOf().embed(["a"])).rejects.toThrow("answered something other than JSON");
  });

  it("gives up after timeout_ms, closing the connection", async () => {
    reply = () => "hang";
    const closed = upstream.nextAbort();
    await expect(embedderOf({ timeout_ms: 50 }).embed(["a"])).rejects.toThrow(/^embedding server 127\.0\.0\.1:\d+ did not answer within 50 ms$/);
    await closed;
  });

  it("stops at the caller's abort with the caller's reason, closing the connection", async () => {
    reply = () => "hang";
    const closed = upstream.nextAbort();
    const controller = new AbortController();
    const embedding = embedderOf({ timeout_ms: 60_000 }).embed(["a"], controller.signal);
    await vi.waitFor(() => expect(upstream.requests).toHaveLength(1));
    const reason = new Error("the client went away");
    controller.abort(reason);
    await expect(embedding).rejects.toBe(reason);
    await closed;
  });

  it("sends nothing for a signal already aborted", async () => {
    const reason = new Error("already gone");
    await expect(embedderOf().embed(["a"], AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(upstream.requests).toHaveLength(0);
  });

  it("names the server it cannot reach", async () => {
    const gone = await startRecordingServer("/v1", () => undefined);
    await gone.close();
    await expect(embedderOf({ base_url: gone.url }).embed(["a"])).rejects.toThrow(/^embedding server 127\.0\.0\.1:\d+ failed: upstream connection failed/);
  });
});
