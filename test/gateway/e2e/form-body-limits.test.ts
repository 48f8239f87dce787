// A multipart/form-data body (read-form.ts) is read within the app's body
// limit, the same as a JSON body's (AppDeps.bodyLimit): one byte over is 413
// payload_too_large for both; a compressed form is 415
// unsupported_content_encoding. A toy format's form route echoes the fields.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../../gateway/app.ts";
import type { CoreClient } from "../../../gateway/core-client.ts";
import type { GatewayFormat } from "../../../gateway/formats/format.ts";
import { specErrorBody } from "../../../gateway/errors/spec-error-body.ts";

const LIMIT = 4096;

const echo: GatewayFormat = {
  encodeError: specErrorBody,
  register(routes) {
    routes.post(
      "/echo",
      async (ctx) => {
        const body: unknown = ctx.request.body;
        ctx.body = body instanceof FormData ? { form: Object.fromEntries(body) } : { json: body };
      },
      { form: true },
    );
  },
};

/** A form of one text field, and its encoded bytes and content type, as fetch sends it. */
async function encodedForm(text: string) {
  const form = new FormData();
  form.set("prompt", text);
  const request = new Request("http://x/", { method: "POST", body: form });
  return { contentType: request.headers.get("content-type")!, bytes: Buffer.from(await request.arrayBuffer()) };
}

/** A form whose encoding is exactly `size` bytes. */
async function formOfSize(size: number) {
  const overhead = (await encodedForm("")).bytes.length;
  return encodedForm("a".repeat(size - overhead));
}

describe("form bodies within the app's body limit", () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    // No route here reaches the core.
    server = http.createServer(createApp({ core: {} as CoreClient, bodyLimit: LIMIT, formats: [echo] }).callback());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const post = (body: Buffer | string, headers: Record<string, string>) => fetch(`${base}/echo`, { method: "POST", headers, body });
  const json = (response: Response) => response.json() as Promise<Record<string, any>>;

  it("reads a form of exactly the limit, and answers 413 payload_too_large one byte over", async () => {
    const atLimit = await formOfSize(LIMIT);
    expect(atLimit.bytes.length).toBe(LIMIT);
    const read = await post(atLimit.bytes, { "content-type": atLimit.contentType });
    expect(read.status).toBe(200);
    expect((await json(read)).form.prompt).toHaveLength(LIMIT - (await encodedForm("")).bytes.length);

    const over = await formOfSize(LIMIT + 1);
    const refused = await post(over.bytes, { "content-type": over.contentType });
    expect(refused.status).toBe(413);
    expect((await json(refused)).error).toMatchObject({ code: "payload_too_large", type: "invalid_request_error", message: "The request body is too large." });
  });

  it("holds a JSON body on the same route to the same limit", async () => {
    const text = (size: number) => JSON.stringify({ prompt: "a".repeat(size - '{"prompt":""}'.length) });
    const read = await post(text(LIMIT), { "content-type": "application/json" });
    expect(read.status).toBe(200);
    const refused = await post(text(LIMIT + 1), { "content-type": "application/json" });
    expect(refused.status).toBe(413);
    expect((await json(refused)).error).toMatchObject({ code: "payload_too_large", message: "The request body is too large." });
  });

  it.each(["gzip", "br"])("answers 415 unsupported_content_encoding for a form sent with Content-Encoding %s", async (encoding) => {
    const { bytes, contentType } = await encodedForm("hello");
    const response = await post(gzipSync(bytes), { "content-type": contentType, "content-encoding": encoding });
    expect(response.status).toBe(415);
    const { error } = await json(response);
    expect(error).toMatchObject({ code: "unsupported_content_encoding", type: "invalid_request_error" });
    expect(error.message).toContain(`"${encoding}" is not supported on a multipart/form-data body`);
  });

  it("reads a form sent with Content-Encoding identity", async () => {
    const { bytes, contentType } = await encodedForm("hello");
    const response = await post(bytes, { "content-type": contentType, "content-encoding": "identity" });
    expect(response.status).toBe(200);
    expect((await json(response)).form).toEqual({ prompt: "hello" });
  });
});
