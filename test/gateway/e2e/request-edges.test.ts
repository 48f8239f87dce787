// Model suffixes, the reasoning warning, and how the gateway reads bodies
// (content types, content encodings, limits; docs/requests.md).
import { once } from "node:events";
import net from "node:net";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { TEST_KEY, useGatewayWithUpstream } from "../../support/harness.ts";

describe("request edges", () => {
  const stack = useGatewayWithUpstream();

  const chat = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${stack.gateway.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const hello = [{ role: "user", content: "hi" }];
  // Answers are checked field by field, so a loose type is enough here.
  const json = (response: Response) => response.json() as Promise<Record<string, any>>;

  it(":free on an opted-in model is served at cost 0 and the answer names the base model", async () => {
    const response = await chat({ model: "test/free:free", messages: hello });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.model).toBe("free");
    expect(body.usage.cost).toBe(0);
    expect(stack.upstream.requests.at(-1)!.body.model).toBe("ok");
  });

  it(":free on a model without free opt-in is 400 free_slug_disabled", async () => {
    const response = await chat({ model: "test/ok:free", messages: hello });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toMatchObject({ code: "free_slug_disabled", type: "invalid_request_error" });
  });

  it(":free on an unknown base model is 404 model_not_found", async () => {
    const response = await chat({ model: "test/nothing:free", messages: hello });
    expect(response.status).toBe(404);
    expect((await json(response)).error.code).toBe("model_not_found");
  });

  it.each(["router/free:free", "router/free:flex"])("%s is 400 invalid_request_error: router/free takes no suffix", async (model) => {
    const response = await chat({ model, messages: hello });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toMatchObject({ code: "invalid_request_error", type: "invalid_request_error", param: "model" });
  });

  it(":thinking asks the provider for high reasoning effort", async () => {
    const response = await chat({ model: "test/thinker:thinking", messages: hello });
    expect(response.status).toBe(200);
    expect(stack.upstream.requests.at(-1)!.body.reasoning_effort).toBe("high");
  });

  it(":thinking yields to an explicit reasoning effort", async () => {
    await chat({ model: "test/thinker:thinking", messages: hello, reasoning: { effort: "low" } });
    expect(stack.upstream.requests.at(-1)!.body.reasoning_effort).toBe("low");
  });

  it("drops reasoning for a model without reasoning support and says so in a header", async () => {
    const response = await chat({ model: "test/plain", messages: hello, reasoning: { effort: "high" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-router-warnings")).toMatch(/reasoning is not supported/);
    expect(stack.upstream.requests.at(-1)!.body).not.toHaveProperty("reasoning_effort");
  });

  it("drops top_k and repetition_penalty where the catalogue does not list them, and says so", async () => {
    const response = await chat({ model: "test/ok", messages: hello, top_k: 40, repetition_penalty: 1.1 });
    expect(response.status).toBe(200);
    const warnings = response.headers.get("x-router-warnings");
    expect(warnings).toMatch(/top_k is not supported by test\/ok on cheap/);
    expect(warnings).toMatch(/repetition_penalty is not supported/);
    expect(stack.upstream.requests.at(-1)!.body).not.toHaveProperty("top_k");
    expect(stack.upstream.requests.at(-1)!.body).not.toHaveProperty("repetition_penalty");
  });

  it("forwards top_k and repetition_penalty where the catalogue lists them", async () => {
    const response = await chat({ model: "test/extensions", messages: hello, top_k: 40, repetition_penalty: 1.1 });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-router-warnings")).toBeNull();
    expect(stack.upstream.requests.at(-1)!.body).toMatchObject({ top_k: 40, repetition_penalty: 1.1 });
  });

  it("says that cache_control breakpoints are not sent to an OpenAI-compatible provider", async () => {
    const content = [{ type: "text", text: "long context", cache_control: { type: "ephemeral" } }];
    const response = await chat({ model: "test/ok", messages: [{ role: "user", content }] });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-router-warnings")).toMatch(/cache_control breakpoints are not sent to cheap, which caches prompts automatically/);
  });

  it("answers invalid JSON with 400 invalid_json", async () => {
    const response = await chat('{"model": "test/ok", "messages": [');
    expect(response.status).toBe(400);
    expect((await json(response)).error).toMatchObject({ code: "invalid_json", param: "body" });
  });

  describe("reading the body", () => {
    const valid = JSON.stringify({ model: "test/ok", messages: hello });
    /** A raw POST: bytes as given, and only the headers given (no default content type). */
    const post = (body: Uint8Array | string, headers: Record<string, string>) =>
      fetch(`${stack.gateway.apiUrl}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_KEY}`, ...headers },
        body: typeof body === "string" ? new TextEncoder().encode(body) : body,
      });

    it.each([
      ["gzip", gzipSync],
      ["deflate", deflateSync],
      ["br", brotliCompressSync],
      ["GZIP", gzipSync],
    ])("reads a body compressed with Content-Encoding %s", async (encoding, compress) => {
      const response = await post(compress(valid), { "content-type": "application/json", "content-encoding": encoding });
      expect(response.status).toBe(200);
    });

    it.each(["gzip", "deflate", "br"])("answers 400 invalid_body_encoding, not 500, for a body falsely marked %s", async (encoding) => {
      const response = await post(valid, { "content-type": "application/json", "content-encoding": encoding });
      expect(response.status).toBe(400);
      const { error } = await json(response);
      expect(error).toMatchObject({ code: "invalid_body_encoding", type: "invalid_request_error", param: "body" });
      expect(error.message).toMatch(new RegExp(`could not be decoded as ${encoding}`));
    });

    it("applies the 32 MB limit to the decompressed body", async () => {
      const bomb = gzipSync(`{"model":"test/ok","messages":[],"pad":"${" ".repeat(33 * 1024 * 1024)}"}`);
      expect(bomb.length).toBeLessThan(100_000);
      const response = await post(bomb, { "content-type": "application/json", "content-encoding": "gzip" });
      expect(response.status).toBe(413);
      expect((await json(response)).error.code).toBe("payload_too_large");
    });

    it("answers 400 invalid_body_encoding for a gzip body cut short", async () => {
      const response = await post(gzipSync(valid).subarray(0, 20), { "content-type": "application/json", "content-encoding": "gzip" });
      expect(response.status).toBe(400);
      expect((await json(response)).error.code).toBe("invalid_body_encoding");
    });

    it.each(["zstd", "compress", "gzip, br", "%%garbage%%"])("answers 415 unsupported_content_encoding for Content-Encoding %s", async (encoding) => {
      const response = await post(valid, { "content-type": "application/json", "content-encoding": encoding });
      expect(response.status).toBe(415);
      const { error } = await json(response);
      expect(error).toMatchObject({ code: "unsupported_content_encoding", type: "invalid_request_error", param: null });
      expect(error.message).toContain(`"${encoding}" is not supported; use one of identity, gzip, deflate, br`);
    });

    // One rule for every content type: the body is read as JSON whatever it declares.
    const contentTypes = [
      "application/json",
      "application/json; charset=utf-8",
      "text/plain",
      "application/x-www-form-urlencoded",
      "application/xml",
      "multipart/form-data; boundary=x",
      "application/octet-stream",
      undefined,
    ];
    const typed = (contentType: string | undefined): Record<string, string> => (contentType ? { "content-type": contentType } : {});

    it.each(contentTypes)("serves a JSON body sent as %s", async (contentType) => {
      const response = await post(valid, typed(contentType));
      expect(response.status).toBe(200);
    });

    it.each([
      ["application/x-www-form-urlencoded", "model=test%2Fok&messages=hi"],
      ["application/xml", "<request><model>test/ok</model></request>"],
      ["multipart/form-data; boundary=x", '--x\r\nContent-Disposition: form-data; name="model"\r\n\r\ntest/ok\r\n--x--\r\n'],
      ["text/plain", "hello"],
      [undefined, "model: test/ok"],
    ])("answers a %s body that is not JSON with 400 invalid_json", async (contentType, body) => {
      const response = await post(body, typed(contentType));
      expect(response.status).toBe(400);
      expect((await json(response)).error).toMatchObject({ code: "invalid_json", param: "body", message: "The request body is not valid JSON." });
    });

    it.each(contentTypes)("calls an empty body sent as %s empty, never a missing model", async (contentType) => {
      for (const body of ["", "  \n"]) {
        const response = await post(body, typed(contentType));
        expect(response.status).toBe(400);
        expect((await json(response)).error).toMatchObject({ code: "invalid_parameter", param: "body", message: "The request body is empty: send a JSON object" });
      }
    });

    it.each(["gzip", "deflate", "br", "zstd"])("calls an empty body empty whatever its Content-Encoding (%s)", async (encoding) => {
      const response = await post("", { "content-type": "application/json", "content-encoding": encoding });
      expect(response.status).toBe(400);
      expect((await json(response)).error).toMatchObject({ code: "invalid_parameter", param: "body", message: "The request body is empty: send a JSON object" });
    });

    it("answers a request Node cannot parse as HTTP (a bad chunk size) with the spec's JSON 400, then closes", async () => {
      const { port } = new URL(stack.gateway.url);
      const socket = net.connect(Number(port), "127.0.0.1");
      let received = "";
      socket.setEncoding("utf8").on("data", (text: string) => (received += text));
      socket.write(
        "POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
          `Authorization: Bearer ${TEST_KEY}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      );
      await once(socket, "close");
      const [head, body] = received.split("\r\n\r\n");
      expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(head).toMatch(/content-type: application\/json/i);
      expect(JSON.parse(body)).toEqual({
        error: { message: "The request could not be parsed as HTTP.", type: "invalid_request_error", param: null, code: "bad_request" },
      });
    });

    it("tells JSON that is not an object so", async () => {
      const response = await post('"hello"', { "content-type": "application/json" });
      expect(response.status).toBe(400);
      expect((await json(response)).error).toMatchObject({ param: "body", message: "The request body must be a JSON object" });
    });

    it("refuses a __proto__ key with its own message, not 'not valid JSON'", async () => {
      const response = await post('{"model":"test/ok","messages":[{"role":"user","content":"hi"}],"__proto__":{"admin":true}}', { "content-type": "application/json" });
      expect(response.status).toBe(400);
      expect((await json(response)).error).toMatchObject({
        code: "invalid_parameter",
        param: "body",
        message: 'The request body contains the key "__proto__", which is not accepted.',
      });
    });

    it("answers a body nested 2,000 levels deep with 400 naming the field, not a stack overflow", async () => {
      const schema = "{\"a\":".repeat(2_000) + "{}" + "}".repeat(2_000);
      const body = `{"model":"test/ok","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":${schema}}}}`;
      const response = await post(body, { "content-type": "application/json" });
      expect(response.status).toBe(400);
      expect((await json(response)).error).toMatchObject({ code: "invalid_parameter", param: "response_format" });
    });

    it("reads null as unset and words an integer beyond int32 like any bound", async () => {
      const ok = await chat({ model: "test/ok", messages: [{ role: "user", content: "hi", name: null }], temperature: null, stop: null, stream: null, tools: null, user: null });
      expect(ok.status).toBe(200);
      const tooBig = await chat({ model: "test/ok", messages: hello, max_tokens: 9007199254740992 });
      expect(tooBig.status).toBe(400);
      expect((await json(tooBig)).error).toMatchObject({ param: "max_tokens", message: "max_tokens must be at most 2147483647" });
    });
  });

  it("accepts a body just under the 32 MB limit and refuses one over it with 413", async () => {
    // An image, so that the body's size, not the prompt's estimated tokens, is what is tested.
    const bodyWith = (data: string) => ({ model: "test/ok", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${data}` } }] }] });
    const under = 32 * 1024 * 1024 - JSON.stringify(bodyWith("")).length;
    const ok = await chat(bodyWith("A".repeat(under)));
    expect(ok.status).toBe(200);
    const tooLarge = await chat(bodyWith("A".repeat(under + 1)));
    expect(tooLarge.status).toBe(413);
    expect((await json(tooLarge)).error).toMatchObject({ code: "payload_too_large", type: "invalid_request_error" });
  });

  it("gives every answer a request id that is also the chat id", async () => {
    const response = await chat({ model: "test/ok", messages: hello });
    const body = await json(response);
    expect(response.headers.get("x-request-id")).toBe(body.id);
    expect(body.usage.chat_id).toBe(body.id);
    expect(body.id).toMatch(/^rtr_[0-9a-f]{32}$/);
  });

  describe("reasoning options against the provider's effort map (low, medium, high)", () => {
    it.each([
      [{ effort: "medium" }, 4096, "medium", null],
      [{ effort: "minimal" }, 4096, "low", /effort "minimal" is not offered/],
      [{ enabled: false }, 4096, "low", /cannot be turned off/],
      [{ max_tokens: 2048 }, 4096, "medium", /max_tokens 2048 was sent .* as effort "medium"/],
      [{ max_tokens: 1024 }, 4096, "low", /as effort "low"/],
      [{ max_tokens: 3500 }, 4096, "high", /as effort "high"/],
    ])("%j with max_tokens %i sends effort %s", async (reasoning, maxTokens, effort, warning) => {
      const response = await chat({ model: "test/thinker", messages: hello, max_tokens: maxTokens, reasoning });
      expect(response.status).toBe(200);
      expect(stack.upstream.requests.at(-1)!.body.reasoning_effort).toBe(effort);
      const warnings = response.headers.get("x-router-warnings");
      if (warning) expect(warnings).toMatch(warning);
      else expect(warnings).toBeNull();
    });

    it("exclude withholds the reasoning text but still counts its tokens", async () => {
      const shown = await json(await chat({ model: "simulator/reasoning", messages: hello, reasoning: { effort: "low" } }));
      expect(shown.choices[0].message.reasoning.text).toMatch(/Considering the request/);
      const hidden = await json(await chat({ model: "simulator/reasoning", messages: hello, reasoning: { effort: "low", exclude: true } }));
      expect(hidden.choices[0].message).not.toHaveProperty("reasoning");
      expect(hidden.choices[0].message.content).toBe(shown.choices[0].message.content);
      expect(hidden.usage.completion_tokens_details.reasoning_tokens).toBe(shown.usage.completion_tokens_details.reasoning_tokens);
      expect(hidden.usage.completion_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    });
  });

  it("serves the semantic cache with its header, and says in a header which media options the route ignored", async () => {
    const response = await chat({ model: "test/ok", messages: hello, cache: { expiration_time: 60 }, aspectRatio: "16:9" }, { cache_key: "request-edges" });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ cached: false });
    const warnings = response.headers.get("x-router-warnings");
    expect(warnings).not.toMatch(/cache/);
    expect(warnings).toMatch(/aspectRatio is not supported by test\/ok on cheap and was ignored/);
  });
});
