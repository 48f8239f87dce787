// One access-log line per request, carrying the request's tags (the spec's
// request_tags are "for logging, analytics, filtering").
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { pino } from "pino";
import { expect, it } from "vitest";
import { createCore } from "../../../core/create-core.ts";
import { createApp } from "../../../gateway/app.ts";
import { listenGateway } from "../../../gateway/http-server.ts";
import { createInProcessCoreClient } from "../../../gateway/core-client.ts";
import { TEST_ENV, TEST_KEY, testConfig } from "../../support/harness.ts";

it("logs each request with its status and request_tags", async () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  // The simulator serves here; the upstream URL is never called.
  const core = await createCore({ config: testConfig("http://127.0.0.1:9/v1"), env: TEST_ENV });
  const server = listenGateway(createApp({ core: createInProcessCoreClient(core), logger: pino({ level: "info" }, sink) }), 0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  const response = await fetch(`http://127.0.0.1:${port}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "simulator/echo", messages: [{ role: "user", content: "hi" }], request_tags: ["team-a", "batch"] }),
  });
  const body = (await response.json()) as { id: string };
  server.close();
  await core.close();
  expect(lines).toContainEqual(
    expect.objectContaining({ requestId: body.id, path: "/api/v1/chat/completions", status: 200, requestTags: ["team-a", "batch"] }),
  );
});
