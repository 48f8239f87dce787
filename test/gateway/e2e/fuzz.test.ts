// Property-based fuzzing of request input (fixed seed, bounded runs): the chat
// decoder, then the whole HTTP layer. Whatever arrives (any JSON, deep
// nesting, big arrays, __proto__ keys, nulls, any content type or content
// encoding, bodies falsely marked gzip), the gateway answers, within a bound,
// never with a 5xx, and every error in the spec's shape with our own wording.
import { gzipSync, deflateSync, brotliCompressSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConnectError, errorDetailOf } from "../../../core/errors.ts";
import { decodeChatRequest } from "../../../gateway/formats/chat-completions/decode-request.ts";
import { TEST_KEY, useGatewayWithUpstream } from "../../support/harness.ts";

const SEED = 20261123;

/** Zod's own phrases ("Invalid input: expected string, received number"), which must never reach a client. */
const ZOD_WORDING = /Invalid input|expected|received/i;

// ---- arbitraries ----

const anyJson = fc.jsonValue({ maxDepth: 4 });

/** Values worth trying in any field: anything, null, the edges of numbers, deep nesting, long arrays. */
const fieldValue = fc.oneof(
  { weight: 3, arbitrary: anyJson },
  fc.constant(null),
  fc.constantFrom(9007199254740992, -9007199254740992, 2147483648, 0, -1, 1.5, 1e308),
  fc.integer({ min: 100, max: 3_000 }).map(nestedObject),
  fc.integer({ min: 0, max: 12_000 }).map((length) => Array(length).fill("x")),
);

/**
 * {a: {a: ... {}}}, `levels` deep. It describes itself in a failure report
 * (fast-check would print it recursively and overflow); the symbol key is
 * invisible to JSON and to the schema.
 */
function nestedObject(levels: number): unknown {
  let value: Record<PropertyKey, unknown> = {};
  for (let level = 1; level < levels; level++) value = { a: value };
  value[fc.toStringMethod] = () => `<an object ${levels} levels deep>`;
  return value;
}

const CHAT_FIELDS = [
  "model", "models", "request_tags", "messages", "temperature", "max_tokens", "max_completion_tokens", "top_p",
  "frequency_penalty", "presence_penalty", "top_k", "repetition_penalty", "seed", "stop", "n", "stream",
  "stream_options", "provider", "tools", "tool_choice", "parallel_tool_calls", "response_format", "reasoning",
  "cache", "cache_control", "aspectRatio", "prompt", "duration", "user", "logprobs",
];

const contentBlock = fc.oneof(
  fc.record({ type: fc.constant("text"), text: fc.oneof(fc.string(), fieldValue) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("image_url"), image_url: fc.oneof(fc.record({ url: fc.string(), detail: fieldValue }), fieldValue) }),
  fc.record({ type: fieldValue, cache_control: fieldValue }),
);

const message = fc.record(
  {
    role: fc.oneof(fc.constantFrom("system", "developer", "user", "assistant", "tool"), fieldValue),
    content: fc.oneof(fc.string(), fc.array(contentBlock, { maxLength: 3 }), fieldValue),
    name: fieldValue,
    tool_calls: fc.oneof(fc.array(fc.record({ id: fc.string(), type: fc.constant("function"), function: fc.record({ name: fc.string(), arguments: fieldValue }) }), { maxLength: 2 }), fieldValue),
    tool_call_id: fieldValue,
    reasoning_details: fieldValue,
  },
  { requiredKeys: ["role"] },
);

/** Bodies shaped like chat requests, so the fuzzing reaches deep into the schema. */
const chatLikeBody = fc
  .record({
    model: fc.oneof(fc.constantFrom("simulator/echo", "test/ok", "nothing/here", "router/free"), fieldValue),
    messages: fc.oneof({ weight: 4, arbitrary: fc.array(message, { minLength: 1, maxLength: 3 }) }, fieldValue),
    extra: fc.dictionary(fc.constantFrom(...CHAT_FIELDS), fieldValue, { maxKeys: 4 }),
  })
  .map(({ model, messages, extra }) => ({ model, messages, ...extra }));

/** A JSON text with an own `__proto__` key somewhere, as a client could send it. */
const protoKeyJson = fc.constantFrom(
  '{"__proto__":{"polluted":true},"model":"simulator/echo","messages":[{"role":"user","content":"hi"}]}',
  '{"model":"simulator/echo","messages":[{"role":"user","content":"hi","__proto__":null}]}',
  '{"model":"simulator/echo","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"__proto__":{}}}}]}',
);

/** A valid request using most of the schema; mutations of it reach every rule. */
const RICH_BODY = {
  model: "simulator/echo",
  models: ["simulator/echo"],
  request_tags: ["fuzz"],
  messages: [
    { role: "system", content: "be brief", name: "ops" },
    { role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral", ttl: "5m" } }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } }] },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }], reasoning_details: [{ type: "reasoning.text", text: "t", index: 0 }] },
    { role: "tool", tool_call_id: "c1", content: "ok" },
  ],
  tools: [{ type: "function", function: { name: "f", description: "d", parameters: { type: "object", properties: { a: { type: "string", default: null } } }, strict: true } }],
  tool_choice: { type: "function", function: { name: "f" } },
  response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" }, strict: true } },
  reasoning: { effort: "low", exclude: false },
  provider: { order: ["simulator"], allow_fallbacks: true },
  cache: { conversation_mode: "last_n_turns", last_n_turns: 2 },
  stream: true,
  stream_options: { include_usage: true },
  temperature: 1,
  max_tokens: 4000,
  stop: ["x"],
  seed: 1,
  user: "u",
};

type Path = (string | number)[];

/** Every path into a JSON value (containers and leaves), for mutations to aim at. */
function pathsOf(value: unknown, prefix: Path = []): Path[] {
  if (typeof value !== "object" || value === null) return [prefix];
  const entries = Array.isArray(value) ? value.map((item, i) => [i, item] as const) : Object.entries(value);
  return [prefix, ...entries.flatMap(([key, child]) => pathsOf(child, [...prefix, key]))];
}

const RICH_PATHS = pathsOf(RICH_BODY).filter((path) => path.length > 0);

/** RICH_BODY with one to three fields replaced by `values` (or removed: value undefined). */
const mutatedChatBody = (values: fc.Arbitrary<unknown>) =>
  fc.array(fc.record({ path: fc.constantFrom(...RICH_PATHS), value: values }), { minLength: 1, maxLength: 3 }).map(mutate);

function mutate(mutations: { path: Path; value: unknown }[]): unknown {
  const body = structuredClone(RICH_BODY);
  for (const { path, value } of mutations) {
    let parent: any = body;
    for (const key of path.slice(0, -1)) parent = typeof parent === "object" && parent !== null ? parent[key] : undefined;
    // An earlier mutation may have replaced the way there.
    if (typeof parent !== "object" || parent === null) continue;
    const key = path[path.length - 1];
    if (value === undefined) delete parent[key];
    else parent[key] = value;
  }
  return body;
}

const anyBodyValue = fc.oneof(
  anyJson,
  chatLikeBody,
  { weight: 4, arbitrary: mutatedChatBody(fc.option(fieldValue, { nil: undefined })) },
  // Nulls and removals alone: mostly still valid, so these reach the core.
  { weight: 2, arbitrary: mutatedChatBody(fc.constantFrom(null, undefined)) },
  protoKeyJson.map((text) => JSON.parse(text) as unknown),
);

// ---- the decoder ----

describe("fuzz: the chat decoder", () => {
  it("starts from a valid body", () => {
    expect(() => decodeChatRequest(RICH_BODY, { apiKey: "sk", requestId: "rtr_1" })).not.toThrow();
  });

  it("either decodes or throws invalid_parameter naming the parameter, in our words", () => {
    fc.assert(
      fc.property(anyBodyValue, (body) => {
        try {
          decodeChatRequest(body, { apiKey: "sk", requestId: "rtr_1" });
        } catch (error) {
          expect(error).toBeInstanceOf(ConnectError);
          const detail = errorDetailOf(error as ConnectError);
          expect(detail?.reason).toBe("invalid_parameter");
          const message = (error as ConnectError).rawMessage;
          expect(message).not.toMatch(ZOD_WORDING);
          if (detail?.param !== "body") expect(message.startsWith(`${detail?.param} `)).toBe(true);
        }
      }),
      { seed: SEED, numRuns: 1_000 },
    );
  });
});

// ---- the HTTP layer ----

const CONTENT_TYPES = [
  "application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded",
  "application/xml", "multipart/form-data; boundary=x", "application/octet-stream", "application/*+json",
];
const printable = fc.string({ unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789/;=+-*, ".split("")), maxLength: 24 });
const contentType = fc.option(fc.oneof(fc.constantFrom(...CONTENT_TYPES), printable), { nil: undefined });

const COMPRESS: Record<string, (bytes: Uint8Array) => Uint8Array> = { gzip: gzipSync, GZIP: gzipSync, deflate: deflateSync, br: brotliCompressSync };

type Encoding = { claimed: string | undefined; actual: string | undefined };

/** How the bytes are encoded and what the header claims: mostly the truth, sometimes a false or unknown coding. */
const encoding: fc.Arbitrary<Encoding> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(undefined, "identity", "gzip", "deflate", "br").map((coding) => ({ claimed: coding, actual: coding === "identity" ? undefined : coding })) },
  { weight: 1, arbitrary: fc.record({ claimed: fc.constantFrom("gzip", "deflate", "br", "GZIP"), actual: fc.constantFrom(undefined, "gzip", "deflate", "br") }) },
  { weight: 1, arbitrary: fc.record({ claimed: fc.oneof(fc.constantFrom("zstd", "gzip, br", "compress"), printable), actual: fc.constant(undefined) }) },
);

const bodyText = fc.oneof(
  { weight: 4, arbitrary: anyBodyValue.map((value) => JSON.stringify(value) ?? "") },
  protoKeyJson,
  fc.string(),
  fc.constantFrom("", "  ", "{", "model=simulator/echo", "<xml/>", '{"model":"simulator/echo","messages":[{"role":"user","content":"hi"}]}'),
);

describe("fuzz: HTTP", () => {
  const stack = useGatewayWithUpstream();

  it("answers every request within a bound, never 5xx, errors in the spec's shape", async () => {
    await fc.assert(
      fc.asyncProperty(bodyText, contentType, encoding, async (text, type, { claimed, actual }) => {
        const plain = new TextEncoder().encode(text);
        const bytes = actual ? COMPRESS[actual](plain) : plain;
        const headers: Record<string, string> = { authorization: `Bearer ${TEST_KEY}` };
        if (type !== undefined) headers["content-type"] = type;
        if (claimed !== undefined) headers["content-encoding"] = claimed;
        const response = await fetch(`${stack.gateway.apiUrl}/chat/completions`, {
          method: "POST",
          headers,
          body: bytes,
          // A hung request fails the property instead of the whole file.
          signal: AbortSignal.timeout(10_000),
        });
        const answer = await response.text();
        expect(response.status, answer).toBeLessThan(500);
        if (response.status >= 400) expectSpecError(answer);
      }),
      { seed: SEED, numRuns: 300 },
    );
    // And the gateway is still serving.
    const after = await fetch(`${stack.gateway.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "simulator/echo", messages: [{ role: "user", content: "hi" }] }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(after.status).toBe(200);
  });
});

function expectSpecError(answer: string): void {
  const { error } = JSON.parse(answer) as { error: Record<string, unknown> };
  expect(typeof error.message, answer).toBe("string");
  expect(typeof error.type, answer).toBe("string");
  expect(typeof error.code, answer).toBe("string");
  expect(error.param === null || typeof error.param === "string", answer).toBe(true);
  expect(error.message as string).not.toMatch(ZOD_WORDING);
}
