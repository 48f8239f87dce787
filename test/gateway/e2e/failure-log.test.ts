// Failures are logged in proportion: a routine failure (no provider, upstream
// 5xx, store or core down) is one short warn line naming the request, the
// error code, the status and the providers tried; a bug (an exception that is
// not a ConnectError, or internal_error) is an error line with its stack.
import { connect, type AddressInfo } from "node:net";
import type { Server } from "node:http";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { createCore, type Core } from "../../../core/create-core.ts";
import { Code, routerError } from "../../../core/errors.ts";
import { createApp } from "../../../gateway/app.ts";
import { listenGateway } from "../../../gateway/http-server.ts";
import { createInProcessCoreClient, type CoreClient } from "../../../gateway/core-client.ts";
import { TEST_ENV, TEST_KEY, testConfig } from "../../support/harness.ts";

/** Lines written by the app's logger, as written (raw) and parsed. */
const lines: { raw: string; entry: Record<string, any> }[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    const raw = String(chunk);
    lines.push({ raw, entry: JSON.parse(raw) });
    done();
  },
});

let core: Core;
let server: Server;
let url: string;
/** When set, inference calls throw this instead of reaching the core. */
let injected: Error | undefined;

beforeAll(async () => {
  // The simulator serves; the upstream URL is never called.
  core = await createCore({ config: testConfig("http://127.0.0.1:9/v1"), env: TEST_ENV });
  const real = createInProcessCoreClient(core);
  const client: CoreClient = {
    ...real,
    inference: {
      ...real.inference,
      generate: (request, options) => {
        if (injected) throw injected;
        return real.inference.generate(request, options);
      },
    },
  };
  server = listenGateway(createApp({ core: client, logger: pino({ level: "info" }, sink) }), 0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/chat/completions`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await core.close();
});

async function chat(body: object): Promise<{ status: number; requestId: string; text: string }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, requestId: response.headers.get("x-request-id")!, text: await response.text() };
}

/** The failure line of a request (not its access-log line). */
function failureLine(requestId: string) {
  const found = lines.filter(({ entry }) => entry.requestId === requestId && entry.msg !== undefined);
  expect(found).toHaveLength(1);
  return found[0];
}

const WARN = 40;
const ERROR = 50;

it("logs a routine failure (no provider available) as one short warn line with request id, code, status and providers", async () => {
  // nokey's key variable is not set, so the one route of test/unkeyed cannot serve.
  const { status, requestId } = await chat({ model: "test/unkeyed", messages: [{ role: "user", content: "hi" }] });
  expect(status).toBe(503);
  const { raw, entry } = failureLine(requestId);
  expect(entry).toMatchObject({ level: WARN, requestId, code: "no_provider_available", status: 503 });
  expect(raw.length).toBeLessThan(500);
  expect(raw).not.toMatch(/descriptor|typeName|"stack"/);
});

it("logs a stream that fails after it started as one short warn line", async () => {
  const { status, requestId, text } = await chat({ model: "simulator/cut-mid-stream", messages: [{ role: "user", content: "hi" }], stream: true });
  expect(status).toBe(200);
  expect(text).toContain('"error"');
  await vi.waitFor(() => expect(lines.some(({ entry }) => entry.requestId === requestId && entry.msg === "stream failed after commit")).toBe(true));
  const { raw, entry } = failureLine(requestId);
  expect(entry).toMatchObject({ level: WARN, requestId, code: "upstream_error", status: 502, providers: "simulator" });
  expect(raw.length).toBeLessThan(500);
});

it("names every provider of the routing trace in the warn line", async () => {
  const attempts = [
    { model: "test/ok", provider: "cheap", outcome: "error", reason: "http_503" },
    { model: "test/ok", provider: "dear", outcome: "error", reason: "http_502" },
  ];
  const { status, requestId } = await withInjected(routerError(Code.Unavailable, "upstream_error", "Every provider failed.", { metadata: { attempts } }), () =>
    chat({ model: "test/ok", messages: [{ role: "user", content: "hi" }] }),
  );
  expect(status).toBe(502);
  const { raw, entry } = failureLine(requestId);
  expect(entry).toMatchObject({ level: WARN, requestId, code: "upstream_error", status: 502, providers: "cheap,dear", reason: "Every provider failed." });
  expect(raw.length).toBeLessThan(500);
});

it("logs a bug (an exception that is not a ConnectError) at error level with its stack", async () => {
  const { status, requestId } = await withInjected(new TypeError("cannot read properties of undefined"), () =>
    chat({ model: "simulator/echo", messages: [{ role: "user", content: "hi" }] }),
  );
  expect(status).toBe(500);
  const { entry } = failureLine(requestId);
  expect(entry).toMatchObject({ level: ERROR, requestId, code: "internal_error", status: 500 });
  expect(entry.err).toMatchObject({ type: "TypeError", message: "cannot read properties of undefined" });
  expect(entry.err.stack).toMatch(/failure-log\.test\.ts/);
});

it("logs an internal_error ConnectError at error level with its stack but without its descriptor", async () => {
  const { status, requestId } = await withInjected(routerError(Code.Internal, "internal_error", "settlement went negative"), () =>
    chat({ model: "simulator/echo", messages: [{ role: "user", content: "hi" }] }),
  );
  expect(status).toBe(500);
  const { raw, entry } = failureLine(requestId);
  expect(entry).toMatchObject({ level: ERROR, requestId, code: "internal_error", status: 500 });
  expect(entry.err.message).toMatch(/settlement went negative/);
  expect(entry.err.stack).toMatch(/failure-log\.test\.ts/);
  expect(raw).not.toMatch(/typeName|descriptor|"details"/);
});

it("records a client that leaves while sending its body as 499 client_closed, not 400 invalid_json", async () => {
  const { port, pathname } = new URL(url);
  const socket = connect(Number(port), "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  const head = [`POST ${pathname} HTTP/1.1`, "host: 127.0.0.1", `authorization: Bearer ${TEST_KEY}`, "content-type: application/json", "content-length: 1000"];
  const arrived = new Promise((resolve) => server.once("request", resolve));
  socket.write(`${head.join("\r\n")}\r\n\r\n{"model":`);
  // Leave once the gateway has the request and waits for the rest of its body.
  await arrived;
  socket.destroy();
  await vi.waitFor(() => expect(lines.some(({ entry }) => entry.path === "/api/v1/chat/completions" && entry.status === 499)).toBe(true));
  expect(lines.some(({ entry }) => entry.status === 400)).toBe(false);
});

async function withInjected<T>(error: Error, run: () => Promise<T>): Promise<T> {
  injected = error;
  try {
    return await run();
  } finally {
    injected = undefined;
  }
}
