// The floor of one Node hop: a bare node:http proxy, in its own process, that
// forwards each request to the upstream over a pooled keep-alive undici Pool
// and streams the answer straight back. No parsing, routing or logging: any
// gateway cost above this is the gateway's own.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Pool } from "undici";

const upstream = process.env.BENCH_UPSTREAM_URL;
if (!upstream) throw new Error("BENCH_UPSTREAM_URL is required");

// Same pool shape as the gateway's upstream client (core/providers/http-client.ts):
// no connection limit (null), since a stream holds its connection for its whole length.
const pool = new Pool(upstream, { connections: null, pipelining: 1, keepAliveTimeout: 30_000 });

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (data: Buffer) => chunks.push(data));
  req.on("end", () => {
    const headers: Record<string, string> = { "content-type": req.headers["content-type"] ?? "application/json" };
    if (req.headers.authorization) headers.authorization = req.headers.authorization;
    pool
      .stream(
        { path: req.url!, method: "POST", headers, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) },
        ({ statusCode, headers: upstreamHeaders }) => {
          const out: Record<string, string> = { "content-type": String(upstreamHeaders["content-type"] ?? "application/json") };
          if (upstreamHeaders["content-length"]) out["content-length"] = String(upstreamHeaders["content-length"]);
          res.writeHead(statusCode, out);
          return res;
        },
      )
      .catch((error: Error) => {
        if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
        res.end(String(error.message));
      });
  });
});
server.keepAliveTimeout = 65_000;
server.on("connection", (socket) => socket.setNoDelay(true));
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: "bench:ready", url: `http://127.0.0.1:${port}` });
});
