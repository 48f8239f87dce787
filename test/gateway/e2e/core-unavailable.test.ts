// A split gateway whose core is down: callers get 503 core_unavailable in the
// spec's error shape, never the transport's message (it names the core's
// internal address); the detail goes to the log only.
import { once } from "node:events";
import http, { type Server } from "node:http";
import net, { type AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { Code, ConnectError } from "@connectrpc/connect";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../../gateway/app.ts";
import { createRemoteCoreClient } from "../../../gateway/core-client.ts";
import { toPublicError } from "../../../gateway/errors/http-status.ts";
import { listenGateway } from "../../../gateway/http-server.ts";
import { freePort } from "../../support/redis-server.ts";

const CORE_UNAVAILABLE = {
  error: {
    message: "The gateway cannot reach the core; try again shortly.",
    type: "api_error",
    param: null,
    code: "core_unavailable",
  },
};

describe("split gateway, core not listening", () => {
  let server: Server;
  let gatewayUrl: string;
  let closedPort: number;
  let logged = "";

  beforeAll(async () => {
    closedPort = await freePort();
    const sink = new Writable({ write: (chunk, _encoding, done) => ((logged += chunk.toString()), done()) });
    const app = createApp({ core: createRemoteCoreClient(`http://127.0.0.1:${closedPort}`), logger: pino({ level: "warn" }, sink) });
    server = listenGateway(app, 0, "127.0.0.1");
    await once(server, "listening");
    gatewayUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  async function expectCoreUnavailable(response: Response) {
    const text = await response.text();
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(JSON.parse(text)).toEqual(CORE_UNAVAILABLE);
    // Nothing of the transport's message: no address, port or errno.
    expect(text).not.toContain("127.0.0.1");
    expect(text).not.toContain(String(closedPort));
    expect(text).not.toMatch(/ECONNREFUSED|connect/i);
  }

  const chat = (body: object) =>
    fetch(`${gatewayUrl}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer sk-any-key", "content-type": "application/json" },
      body: JSON.stringify({ model: "simulator/echo", messages: [{ role: "user", content: "Hello" }], ...body }),
    });

  it("a chat completion gets 503 core_unavailable", async () => {
    await expectCoreUnavailable(await chat({}));
  });

  it("a streamed chat completion gets the same 503 before any event", async () => {
    await expectCoreUnavailable(await chat({ stream: true }));
  });

  it("the catalogue gets the same 503", async () => {
    await expectCoreUnavailable(await fetch(`${gatewayUrl}/api/v1/models`));
  });

  it("the transport's detail is logged", () => {
    expect(logged).toContain("ECONNREFUSED");
    expect(logged).toContain(`127.0.0.1:${closedPort}`);
  });
});

// CORE_URL pointed at something that listens but is not the core: a server
// that closes every connection (a database port), an HTTP/1 server. The
// transport fails (a cancelled stream, a protocol error): that is the core
// being unavailable, not a caller who left (499) nor a bug (500).
describe.each([
  ["a TCP server that closes every connection", () => net.createServer((socket) => socket.destroy())],
  ["an HTTP/1 server", () => http.createServer((_request, response) => response.end("not the core"))],
])("split gateway, CORE_URL at %s", (_name, createTarget) => {
  let target: net.Server;
  let server: Server;
  let gatewayUrl: string;
  let targetPort: number;
  let logged = "";

  beforeAll(async () => {
    target = createTarget();
    target.listen(0, "127.0.0.1");
    await once(target, "listening");
    targetPort = (target.address() as AddressInfo).port;
    const sink = new Writable({ write: (chunk, _encoding, done) => ((logged += chunk.toString()), done()) });
    const app = createApp({ core: createRemoteCoreClient(`http://127.0.0.1:${targetPort}`), logger: pino({ level: "warn" }, sink) });
    server = listenGateway(app, 0, "127.0.0.1");
    await once(server, "listening");
    gatewayUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    (target as Server).closeAllConnections?.();
    await new Promise((resolve) => target.close(resolve));
  });

  const chat = (body: object) =>
    fetch(`${gatewayUrl}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer sk-any-key", "content-type": "application/json" },
      body: JSON.stringify({ model: "simulator/echo", messages: [{ role: "user", content: "Hello" }], ...body }),
    });

  it.each([
    ["a chat completion", () => chat({})],
    ["a streamed chat completion", () => chat({ stream: true })],
    ["the catalogue", () => fetch(`${gatewayUrl}/api/v1/models`)],
  ])("%s gets 503 core_unavailable, logged once as a warning", async (_what, send) => {
    logged = "";
    const response = await send();
    const text = await response.text();
    expect(response.status).toBe(503);
    expect(JSON.parse(text)).toEqual(CORE_UNAVAILABLE);
    expect(text).not.toContain("127.0.0.1");
    expect(text).not.toContain(String(targetPort));
    const lines = logged.trim().split("\n").map((line) => JSON.parse(line) as { level: number; code: string; reason: string });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, code: "core_unavailable" });
    expect(lines[0].reason).toContain(`127.0.0.1:${targetPort}`);
  });
});

describe("errors the core did not make (no ErrorDetail)", () => {
  it("Unavailable is core_unavailable, whatever its message", () => {
    const mapped = toPublicError(new ConnectError("connect ECONNREFUSED 10.1.2.3:50051", Code.Unavailable));
    expect(mapped).toMatchObject({ status: 503, type: "api_error", code: "core_unavailable", retryAfterSeconds: 1 });
    expect(mapped.message).toBe("The gateway cannot reach the core; try again shortly.");
  });

  it.each([Code.InvalidArgument, Code.NotFound, Code.Internal, Code.DeadlineExceeded, Code.Unknown].map((code) => [Code[code], code] as const))(
    "%s never puts its raw message in the answer",
    (_name, code) => {
      const mapped = toPublicError(new ConnectError("secret detail at 10.1.2.3:50051", code));
      expect(mapped).toMatchObject({ status: 500, type: "api_error", code: "internal_error", message: "Internal server error." });
    },
  );

  it("Canceled (the caller left) stays a 499 without the raw message", () => {
    const mapped = toPublicError(new ConnectError("This operation was aborted at 10.1.2.3", Code.Canceled));
    expect(mapped).toMatchObject({ status: 499, code: "client_closed", message: "The caller went away." });
  });
});
