// A body refused before it was read to its end (a gzip bomb past the limit, a
// corrupt gzip body followed by more bytes, an unsupported coding, a declared
// length past the limit) leaves bytes unread on the connection: the refusal
// drains what has arrived, or says `Connection: close` when more is still
// coming, so a keep-alive client's next request is answered (on a fresh
// connection after a close). Before, that request sat behind the unread bytes,
// unanswered, for about a minute. A body that never ends is not drained: the
// gateway closes the connection once the refusal is sent.
import { once } from "node:events";
import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import { Client } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../support/harness.ts";

let gateway: Gateway;
beforeAll(async () => {
  gateway = await startGateway(testConfig("http://127.0.0.1:9/v1"));
});
afterAll(async () => {
  await gateway?.close();
});

/**
 * 256 MB of JSON in about 256 KB: gzip members one after another (a gunzip reads them as one
 * stream), too many to have all arrived when the limit is reached.
 */
function gzipBomb(): Buffer {
  const megabyte = gzipSync(" ".repeat(1024 * 1024));
  return Buffer.concat([gzipSync('{"model":"simulator/echo","messages":[],"pad":"'), ...Array<Buffer>(256).fill(megabyte)]);
}

const valid = JSON.stringify({ model: "simulator/echo", messages: [{ role: "user", content: "hi" }] });

describe.each([
  {
    refusal: "413 for a gzip bomb",
    status: 413,
    body: gzipBomb(),
    headers: { "content-encoding": "gzip" },
  },
  { refusal: "400 for a corrupt gzip body followed by more bytes", status: 400, body: Buffer.concat([Buffer.from("not gzip"), Buffer.alloc(512 * 1024, 97)]), headers: { "content-encoding": "gzip" } },
  { refusal: "415 for an unsupported coding", status: 415, body: Buffer.alloc(512 * 1024, 97), headers: { "content-encoding": "zstd" } },
])("after a $refusal on a keep-alive connection", ({ status, body, headers }) => {
  it("the next request is answered", async () => {
    // One connection at a time, as a keep-alive agent reuses it; an answer that never comes fails in 5 s, not at the test's timeout.
    const client = new Client(gateway.url, { pipelining: 1, headersTimeout: 5_000 });
    try {
      const refused = await client.request({
        path: "/api/v1/chat/completions",
        method: "POST",
        headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", ...headers },
        body,
      });
      expect(refused.statusCode).toBe(status);
      await refused.body.text();
      const next = await client.request({
        path: "/api/v1/chat/completions",
        method: "POST",
        headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
        body: valid,
      });
      expect(next.statusCode).toBe(200);
      expect(JSON.parse(await next.body.text()).choices[0].message.content).toBe("You said: hi");
    } finally {
      await client.close();
    }
  });
});

describe.each([
  { coding: "zstd", status: 415 },
  { coding: "gzip", status: 400 },
])("a body that never ends, refused ($status for $coding)", ({ coding, status }) => {
  it("is not drained: the refusal says Connection: close and the gateway closes the connection", async () => {
    const socket = connect(Number(new URL(gateway.url).port), "127.0.0.1");
    await once(socket, "connect");
    let answer = "";
    socket.setEncoding("latin1").on("data", (text: string) => (answer += text));
    // Not once(): a write racing the close fails (EPIPE), and the close is what is awaited.
    socket.on("error", () => {});
    const closed = new Promise((resolve) => socket.once("close", resolve));
    socket.write(
      `POST /api/v1/chat/completions HTTP/1.1\r\nhost: gateway\r\nauthorization: Bearer ${TEST_KEY}\r\ncontent-encoding: ${coding}\r\ntransfer-encoding: chunked\r\n\r\n`,
    );
    // 16 KB chunks, each as soon as the last was written, for as long as the connection takes them.
    const chunk = `4000\r\n${"a".repeat(0x4000)}\r\n`;
    const sendMore = (error?: Error | null) => {
      if (!error && socket.writable) socket.write(chunk, sendMore);
    };
    sendMore();
    await closed;
    expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
  });
});

it("a JSON syntax error read to its end keeps the connection", async () => {
  const client = new Client(gateway.url, { pipelining: 1 });
  try {
    const refused = await client.request({ path: "/api/v1/chat/completions", method: "POST", headers: { authorization: `Bearer ${TEST_KEY}` }, body: "{nope" });
    expect(refused.statusCode).toBe(400);
    expect(refused.headers.connection).toBe("keep-alive");
    await refused.body.text();
  } finally {
    await client.close();
  }
});
