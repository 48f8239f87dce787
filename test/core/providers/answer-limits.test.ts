// A fetch answer read whole has a ceiling: refused by its Content-Length before
// any byte is read, or as it arrives when it has none, and read whole up to it.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readResponseBytes, streamResponseBytes } from "../../../core/providers/answer-limits.ts";
import { mediaJson } from "../../../core/providers/media-http.ts";
import { UpstreamError } from "../../../core/providers/types.ts";

const LIMIT = 256 * 1024;
let server: http.Server;
let base = "";
/** Bytes written per path, and the paths whose response closed (the reader went away). */
const written = new Map<string, number>();
const closed = new Set<string>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = req.url!;
    written.set(path, 0);
    res.on("close", () => closed.add(path));
    const write = (bytes: number, done: () => void) => {
      written.set(path, written.get(path)! + bytes);
      res.write(Buffer.alloc(bytes, 0x61), () => done());
    };
    if (path === "/declared-over") {
      res.writeHead(200, { "content-length": String(LIMIT + 1) });
      write(LIMIT + 1, () => res.end());
    } else if (path === "/bom") {
      res.writeHead(200, { "content-type": "application/json" }).end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"ok":true}')]));
    } else if (path === "/refused-endless") {
      // A 400 whose page never ends: its beginning is quoted, its status kept.
      res.writeHead(400);
      const more = () => (res.destroyed ? undefined : write(16 * 1024, () => setImmediate(more)));
      more();
    } else if (path === "/at-limit") {
      res.writeHead(200, { "content-length": String(LIMIT) });
      write(LIMIT, () => res.end());
    } else {
      // Chunked, without end.
      res.writeHead(200);
      const more = () => (res.destroyed ? undefined : write(16 * 1024, () => setImmediate(more)));
      more();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

describe("readResponseBytes", () => {
  it("reads an answer of exactly the limit whole", async () => {
    const bytes = await readResponseBytes(await fetch(`${base}/at-limit`), LIMIT);
    expect(bytes.length).toBe(LIMIT);
  });

  it("refuses an answer whose Content-Length is past the limit", async () => {
    const error = await refusal(readResponseBytes(await fetch(`${base}/declared-over`), LIMIT));
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).reason).toBe("answer_too_large");
    expect((error as UpstreamError).retryable).toBe(true);
  });

  it("refuses an answer without a length once it passes the limit, and stops reading it", async () => {
    const error = await refusal(readResponseBytes(await fetch(`${base}/endless`), LIMIT));
    expect((error as UpstreamError).reason).toBe("answer_too_large");
    expect((error as UpstreamError).message).toBe("upstream answer larger than 0.25 MiB");
    // The connection is let go rather than drained: the endless answer stops being written.
    await vi.waitFor(() => expect(closed.has("/endless")).toBe(true));
    expect(written.get("/endless")).toBeLessThan(64 * LIMIT);
  });
});

describe("streamResponseBytes (a result file, streamed to the asset store)", () => {
  it("gives an answer of exactly the limit as it comes, in several chunks", async () => {
    const chunks = [];
    for await (const chunk of await streamResponseBytes(await fetch(`${base}/at-limit`), LIMIT)) chunks.push(chunk);
    expect(chunks.reduce((sum, chunk) => sum + chunk.length, 0)).toBe(LIMIT);
  });

  it("refuses by Content-Length before any chunk is given", async () => {
    const error = await refusal(streamResponseBytes(await fetch(`${base}/declared-over`), LIMIT));
    expect((error as UpstreamError).reason).toBe("answer_too_large");
  });

  it("refuses an answer without a length at the chunk that passes the limit, after giving those before, and stops reading it", async () => {
    let given = 0;
    const error = await refusal(
      (async () => {
        for await (const chunk of await streamResponseBytes(await fetch(`${base}/endless-stream`), LIMIT)) given += chunk.length;
      })(),
    );
    expect((error as UpstreamError).reason).toBe("answer_too_large");
    expect(given).toBeGreaterThan(0);
    expect(given).toBeLessThanOrEqual(LIMIT);
    await vi.waitFor(() => expect(closed.has("/endless-stream")).toBe(true));
  });
});

describe("mediaJson", () => {
  const request = { method: "GET" as const, headers: {}, signal: new AbortController().signal, timeoutMs: 5_000 };

  it("reads JSON that starts with a byte-order mark, as fetch's text() did", async () => {
    expect(await mediaJson(`${base}/bom`, request, () => "")).toEqual({ ok: true });
  });

  it("keeps a refusal's status whatever the size of its page, quoting only its beginning", async () => {
    const error = await refusal(mediaJson(`${base}/refused-endless`, request, (_status, text) => `page of ${text.length} characters`));
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).status).toBe(400);
    expect((error as UpstreamError).message).toContain("page of 65536 characters");
    await vi.waitFor(() => expect(closed.has("/refused-endless")).toBe(true));
  });
});
