// The streams suite's upstream: an OpenAI chat-completions server (its own
// process) whose every answer is a long-lived SSE stream, so that a thousand
// streams are open at once. Each stream sends its first token at once ("Hello",
// which the benchmark times), then one token every BENCH_TOKEN_INTERVAL_MS until
// BENCH_STREAM_TOKENS tokens, then finish, usage and [DONE]. Each stream has its
// own timer, so tokens arrive spread out, not in bursts.
// GET /stats answers {open, peak, connections} (streams open now, most open at
// once and connections accepted since the last GET /stats) and starts counting
// anew: the benchmark reads it per phase to check the streams really were
// concurrent at the upstream.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { FIRST_TOKEN } from "./stream-load.ts";

const TOKENS = Number(process.env.BENCH_STREAM_TOKENS ?? 12);
const INTERVAL_MS = Number(process.env.BENCH_TOKEN_INTERVAL_MS ?? 250);

const event = (delta: object, finishReason: string | null) =>
  Buffer.from(`data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1700000000, model: "bench-model", choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`);

const OPENING = Buffer.concat([event({ role: "assistant", content: "" }, null), event({ content: FIRST_TOKEN }, null)]);
const TOKEN = event({ content: " token" }, null);
const CLOSING = Buffer.concat([
  event({}, "stop"),
  Buffer.from(`data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1700000000, model: "bench-model", choices: [], usage: { prompt_tokens: 9, completion_tokens: TOKENS, total_tokens: 9 + TOKENS } })}\n\n`),
  Buffer.from("data: [DONE]\n\n"),
]);
const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };

let open = 0;
let peak = 0;
let connections = 0;

function stream(res: http.ServerResponse) {
  open++;
  peak = Math.max(peak, open);
  res.writeHead(200, SSE_HEADERS);
  res.write(OPENING);
  let sent = 1;
  const timer = setInterval(() => {
    if (sent < TOKENS) {
      res.write(TOKEN);
      sent++;
      return;
    }
    clearInterval(timer);
    res.end(CLOSING);
  }, INTERVAL_MS);
  // A stream whose client went away stops at once (and is no longer open).
  res.on("close", () => {
    clearInterval(timer);
    open--;
  });
}

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/stats") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ open, peak, connections }));
    peak = open;
    connections = 0;
    return;
  }
  if (req.method !== "POST") {
    res.writeHead(404).end();
    return;
  }
  req.resume();
  req.on("end", () => stream(res));
});
server.keepAliveTimeout = 65_000;
server.on("connection", (socket) => {
  connections++;
  socket.setNoDelay(true);
});
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: "bench:ready", url: `http://127.0.0.1:${port}` });
});
