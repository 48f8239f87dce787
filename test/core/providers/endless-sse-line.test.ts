// An upstream whose event stream never ends a line: the read fails with a
// retryable invalid_answer (so routing may fall back) once the line passes the
// reader's bound, and the upstream's connection is closed, instead of the line
// growing in the gateway's memory for as long as the upstream sends.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { modelProviderSchema, providerSchema } from "../../../core/config/schema.ts";
import { createHttpClient, type HttpClient } from "../../../core/providers/http-client.ts";
import { createOpenAiCompatibleAdapter } from "../../../core/providers/openai-compatible/adapter.ts";
import { MAX_EVENT_CHARACTERS } from "../../../core/providers/read-sse.ts";
import { UpstreamError, type UpstreamCall } from "../../../core/providers/types.ts";
import { GenerateRequestSchema, Role } from "../../../gen/router/v1/inference_pb.js";

const PIECE = "x".repeat(1024 * 1024);
/** The server gives up by itself past this, so a reader without a bound fails the test rather than running on. */
const MOST_SENT = 4 * MAX_EVENT_CHARACTERS;

const sent = { bytes: 0, closed: false };
let server: Server;
let http: HttpClient;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.on("close", () => (sent.closed = true));
    const write = () => {
      while (!sent.closed && sent.bytes < MOST_SENT) {
        sent.bytes += PIECE.length;
        if (!res.write(PIECE)) return void res.once("drain", write);
      }
      res.end();
    };
    res.write("data: ");
    write();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  http = createHttpClient();
});
afterAll(async () => {
  await http.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it("fails the answer with a retryable invalid_answer and closes the upstream's connection", async () => {
  const call: UpstreamCall = {
    request: create(GenerateRequestSchema, { messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Hi" } } }] }] }),
    provider: providerSchema.parse({ id: "endless", label: "Endless", protocol: "openai-compatible", base_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, timeout_ms: 5000 }),
    route: modelProviderSchema.parse({ provider: "endless", provider_model_id: "endless", pricing: { prompt: "0", completion: "0" } }),
    apiKey: "key",
    stream: true,
    maxCompletionTokens: 16,
    signal: new AbortController().signal,
  };
  let error: unknown;
  try {
    for await (const _ of createOpenAiCompatibleAdapter(http).stream(call));
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(UpstreamError);
  expect(error).toMatchObject({ retryable: true, reason: "invalid_answer" });
  await vi.waitFor(() => expect(sent.closed).toBe(true));
  expect(sent.bytes).toBeLessThan(MOST_SENT);
});
