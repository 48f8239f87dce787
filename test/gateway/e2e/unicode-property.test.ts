// A property of the whole HTTP gateway, with its records in a real
// redis-server (fixed seed, bounded runs): whatever Unicode a caller puts in
// any string it gives (lone surrogates, controls, line separators, non-BMP,
// `%` and quotes) in a model name, a tool's name, a field's name, input text,
// a prompt, metadata keys and values, an id in a path, or a header it may send
// (Idempotency-Key, cache_key, anthropic-beta),
// the answer is never a 5xx, and whatever was stored is read back (the
// response, the task).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfigFile } from "../../../core/config/load.ts";
import { startGateway, type Gateway } from "../../support/harness.ts";
import { startRedisServer, type RedisServer } from "../../support/redis-server.ts";

const SEED = 20261127;
const RUNS = { numRuns: 40, seed: SEED };
const DEV_KEY = "sk-dev-unicode";

/** One UTF-16 unit or code point a hostile caller likes: surrogate halves, controls, separators, astral, escapes. */
const hostileUnit = fc.oneof(
  fc.constantFrom("\ud800", "\udbff", "\udc00", "\udfff", "\u0000", "\u0007", "\t", "\r", "\n", "\u007f", "\u0085", "\u2028", "\u2029", "\ufeff", "\ufffd", "😀", "\u0100", "%", "%25", "\\", '"', ";", ",", ":"),
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
  fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)),
);
const hostileText = fc.string({ unit: hostileUnit, minLength: 1, maxLength: 12 });
/** What a header value can carry from a client (fetch takes Latin-1 only): printable ASCII and Latin-1's upper half. */
const headerText = fc.string({ unit: fc.oneof(fc.integer({ min: 0x21, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff })).map((unit) => String.fromCharCode(unit)), minLength: 1, maxLength: 12 });

/** `text` in a URL path as raw bytes: each UTF-16 unit as UTF-8 would write it alone, so a lone surrogate arrives as %ED%A0%80. */
function pathBytes(text: string): string {
  let path = "";
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const bytes = unit < 0x80 ? [unit] : unit < 0x800 ? [0xc0 | (unit >> 6), 0x80 | (unit & 63)] : [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 63), 0x80 | (unit & 63)];
    path += bytes.map((byte) => `%${byte.toString(16).padStart(2, "0")}`).join("");
  }
  return path;
}

describe("any Unicode in any caller string, with Redis", () => {
  let redis: RedisServer;
  let gateway: Gateway;
  beforeAll(async () => {
    redis = await startRedisServer();
    gateway = await startGateway(loadConfigFile(), { env: { ROUTER_DEV_KEY: DEV_KEY, REDIS_URL: redis.url, REDIS_PREFIX: "unicode:" } });
  });
  afterAll(async () => {
    await gateway?.close();
    await redis?.stop();
  });

  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${DEV_KEY}`, "x-api-key": DEV_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json", ...headers },
      // JSON.stringify writes a lone surrogate as its \ud800 escape, as a client's encoder does.
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    expect(response.status, `${method} ${path}: ${text.slice(0, 300)}`).toBeLessThan(500);
    if (response.headers.get("content-type")?.startsWith("text/event-stream")) {
      // A stream's failure after its 200 is an in-band error event.
      expect(text, `${method} ${path}`).not.toMatch(/internal_error|api_error/);
      return { status: response.status, json: {} };
    }
    return { status: response.status, json: JSON.parse(text) as Record<string, any> };
  }

  it("Responses: stored and background answers are read back; model, tool, field and metadata names never make a 5xx", async () => {
    const answer = fc.record({
      input: hostileText,
      tool: hostileText,
      metadataKey: hostileText,
      metadataValue: hostileText,
      field: hostileText,
      model: hostileText,
      background: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(answer, async ({ input, tool, metadataKey, metadataValue, field, model, background }) => {
        const created = await call("POST", "/api/v1/responses", {
          model: "simulator/echo",
          input,
          tools: [{ type: "custom", name: tool }],
          metadata: { [metadataKey]: metadataValue },
          store: true,
          background,
        });
        expect(created.status, JSON.stringify(created.json)).toBe(200);
        const read = await call("GET", `/api/v1/responses/${created.json.id}`);
        expect(read.status).toBe(200);
        expect(read.json.metadata).toEqual({ [metadataKey.toWellFormed()]: metadataValue.toWellFormed() });
        await call("POST", "/api/v1/responses", { model, input });
        await call("POST", "/api/v1/responses", { model: "simulator/echo", input, [field]: 1 });
        await call("GET", `/api/v1/responses/${pathBytes(input)}`);
        await call("GET", `/api/v1/responses/${created.json.id}/input_items?after=${pathBytes(field)}`);
      }),
      RUNS,
    );
  });

  it("Images: the task is read back whatever its prompt, Idempotency-Key or id", async () => {
    await fc.assert(
      fc.asyncProperty(hostileText, headerText, hostileText, async (prompt, idempotencyKey, id) => {
        const created = await call("POST", "/api/v1/images/generations", { model: "simulator/image", prompt, size: "256x256" }, { "idempotency-key": idempotencyKey });
        expect(created.status, JSON.stringify(created.json)).toBe(200);
        const read = await call("GET", `/api/v1/images/${created.json.taskId}`);
        expect(read.status).toBe(200);
        await call("GET", `/api/v1/images/${pathBytes(id)}`);
        await call("POST", "/api/v1/getAsyncResponse", { taskId: id, model: prompt });
      }),
      RUNS,
    );
  });

  it("Chat and Messages: text, names and unknown keys never make a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(hostileText, hostileText, fc.boolean(), headerText, async (text, name, stream, header) => {
        await call("POST", "/api/v1/chat/completions", { model: "simulator/echo", stream, messages: [{ role: "user", content: text, name }] }, { cache_key: header });
        await call("POST", "/api/v1/chat/completions", { model: text, messages: [{ role: "user", content: "hi" }] });
        await call("POST", "/api/v1/chat/completions", {
          model: "simulator/echo",
          stream,
          messages: [{ role: "user", content: "hi" }],
          tools: [{ type: "function", function: { name, parameters: { type: "object", properties: { [text]: { type: "string" } } } } }],
        });
        await call("POST", "/v1/messages", {
          model: "simulator/echo",
          max_tokens: 32,
          stream,
          system: text,
          messages: [{ role: "user", content: text }],
          thinking: { type: "disabled", [name]: 1 },
          output_config: { [text]: 1 },
          tool_choice: { type: "auto", [name]: true },
          [`x${name}`]: text,
        }, { "anthropic-beta": header });
      }),
      RUNS,
    );
  });
});
