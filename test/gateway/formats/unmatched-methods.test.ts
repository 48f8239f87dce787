// A method a path does not serve is 405 with `Allow`, in the shape of the format that owns the
// path: Anthropic's envelope on the Messages paths (issue 18, 4.13: it was the generic shape),
// the spec's on chat completions. A pattern another route also matches still reaches that route.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeUpstream, type FakeUpstream } from "../../support/fake-openai-upstream.ts";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../support/harness.ts";

describe("methods a path does not serve", () => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    gateway = await startGateway(testConfig(upstream.url));
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const send = (method: string, path: string) => fetch(gateway.url + path, { method, headers: { authorization: `Bearer ${TEST_KEY}` } });

  for (const path of ["/v1/messages", "/api/v1/messages", "/v1/messages/count_tokens", "/api/v1/messages/count_tokens"]) {
    for (const method of ["GET", "PUT", "PATCH", "DELETE"]) {
      it(`${method} ${path}: 405 in Anthropic's envelope, Allow: POST`, async () => {
        const response = await send(method, path);
        expect(response.status).toBe(405);
        expect(response.headers.get("allow")).toBe("POST");
        expect(response.headers.get("x-should-retry")).toBe("false");
        // The request id, in the body and in Anthropic's request-id header, as on the route's other errors.
        const requestId = response.headers.get("x-request-id");
        expect(requestId).toMatch(/\S/);
        expect(response.headers.get("request-id")).toBe(requestId);
        expect(await response.json()).toEqual({
          type: "error",
          error: { type: "invalid_request_error", code: "method_not_allowed", param: null, message: `${method} is not allowed on ${path}; use POST.` },
          request_id: requestId,
        });
      });
    }
  }

  it("the Anthropic SDK reads it as its own error", async () => {
    const client = new Anthropic({ apiKey: TEST_KEY, baseURL: gateway.url, maxRetries: 0 });
    const error = await client.get("/v1/messages").then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(405);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
  });

  it("GET /api/v1/chat/completions: 405 in the spec's shape", async () => {
    const response = await send("GET", "/api/v1/chat/completions");
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
    expect(await response.json()).toEqual({
      error: { type: "invalid_request_error", code: "method_not_allowed", param: null, message: "GET is not allowed on /api/v1/chat/completions; use POST." },
    });
  });

  it("a path served by GET and DELETE names both; a route whose pattern overlaps still answers its own", async () => {
    const put = await send("PUT", "/api/v1/responses/resp_nope");
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, HEAD, DELETE");
    // POST /responses/{id}/cancel is its own route.
    expect((await send("POST", "/api/v1/responses/resp_nope/cancel")).status).toBe(404);
    expect((await send("POST", "/v1/messages")).status).toBe(400);
  });

  it("a path written out owns its methods: GET /images/generations is 405 (POST only), not task \"generations\" of GET /images/{id}", async () => {
    for (const method of ["GET", "PUT"]) {
      const response = await send(method, "/api/v1/images/generations");
      expect(response.status, method).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
      expect(await response.json()).toEqual({
        error: { type: "invalid_request_error", code: "method_not_allowed", param: null, message: `${method} is not allowed on /api/v1/images/generations; use POST.` },
      });
    }
    // Any other id is still GET /images/{id}'s.
    const task = await send("GET", "/api/v1/images/img_1");
    expect([task.status, ((await task.json()) as { error: { code: string } }).error.code]).toEqual([404, "task_not_found"]);
    const other = await send("PATCH", "/api/v1/images/img_1");
    expect(other.headers.get("allow")).toBe("GET, HEAD");
  });

  it("OPTIONS is 204 with Allow, HEAD is served where GET is", async () => {
    for (const [path, allow] of [
      ["/v1/messages", "POST"],
      ["/api/v1/responses/resp_nope", "GET, HEAD, DELETE"],
      ["/v1/models", "GET, HEAD"],
    ]) {
      const options = await send("OPTIONS", path);
      expect(options.status).toBe(204);
      expect(options.headers.get("allow")).toBe(allow);
    }
    const head = await send("HEAD", "/api/v1/models");
    expect(head.status).toBe(200);
    expect((await send("HEAD", "/v1/messages")).status).toBe(405);
  });

  it("a path nothing serves stays 404 not_found", async () => {
    const response = await send("GET", "/v1/nowhere");
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });
});
