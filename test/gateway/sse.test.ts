// The SSE writer under backpressure: every write of a large frame waits for
// `drain`, and waiting must not pile up listeners on the response.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { createSseWriter } from "../../gateway/sse.ts";

describe("SSE writer", () => {
  const servers: http.Server[] = [];
  afterAll(async () => {
    for (const server of servers) await new Promise((resolve) => server.close(resolve));
  });

  it("waits for drain on every large frame without accumulating listeners", async () => {
    const frames = 100;
    const observed = { maxClose: 0, maxDrain: 0, drains: 0 };
    const server = http.createServer(async (_req, res) => {
      // Counts the waits that happened (this listener is the one expected drain listener).
      res.on("drain", () => observed.drains++);
      const sse = createSseWriter(res);
      sse.commit();
      const payload = "x".repeat(64 * 1024);
      for (let i = 0; i < frames; i++) {
        await sse.send([{ data: payload }]);
        observed.maxClose = Math.max(observed.maxClose, res.listenerCount("close"));
        observed.maxDrain = Math.max(observed.maxDrain, res.listenerCount("drain"));
      }
      sse.end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const body = await (await fetch(`http://127.0.0.1:${port}/`)).text();
    expect(body.split("\n\n").filter(Boolean)).toHaveLength(frames);
    expect(observed.drains).toBeGreaterThan(10);
    expect(observed.maxDrain).toBe(1);
    // Node's own listeners plus our one shared promise, however many waits there were.
    expect(observed.maxClose).toBeLessThanOrEqual(3);
  });

  it("commits the head with the first events in one write, and gives drain's promise when they fill the socket", async () => {
    const payload = "y".repeat(4 * 1024 * 1024);
    let committed: Promise<void> | undefined;
    const server = http.createServer(async (_req, res) => {
      const sse = createSseWriter(res);
      committed = sse.commit({ "x-test": "1" }, [{ data: "first" }, { event: "big", data: payload }]);
      await committed;
      sse.end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/`);
    expect(response.headers.get("x-test")).toBe("1");
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const body = await response.text();
    expect(committed).toBeInstanceOf(Promise);
    expect(body).toBe(`data: first\n\nevent: big\ndata: ${payload}\n\n`);
  });
});
