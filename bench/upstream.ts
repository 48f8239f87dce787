// The benchmark's upstream: a minimal OpenAI chat-completions server on
// node:http, run in its own process. Every POST answers the same small
// `chat.completion` JSON (pre-serialised), or, when the body asks for
// `"stream":true`, the same answer as a short SSE stream. It does as little as
// possible so that the three measured paths differ only in what sits between
// the client and here.
import http from "node:http";
import type { AddressInfo } from "node:net";

const CONTENT = ["Hello", "! How can", " I help", " you today?"];

export const COMPLETION = Buffer.from(
  JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion",
    created: 1700000000,
    model: "bench-model",
    choices: [{ index: 0, message: { role: "assistant", content: CONTENT.join("") }, logprobs: null, finish_reason: "stop" }],
    usage: { prompt_tokens: 9, completion_tokens: 9, total_tokens: 18 },
  }),
);

function chunk(delta: object, finishReason: string | null, usage?: object): string {
  const body = { id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1700000000, model: "bench-model", choices: [{ index: 0, delta, finish_reason: finishReason }], ...(usage ? { usage } : {}) };
  return `data: ${JSON.stringify(body)}\n\n`;
}

/** One event per write, as a real upstream sends them. */
export const STREAM_EVENTS: Buffer[] = [
  chunk({ role: "assistant", content: "" }, null),
  ...CONTENT.map((text) => chunk({ content: text }, null)),
  chunk({}, "stop"),
  `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1700000000, model: "bench-model", choices: [], usage: { prompt_tokens: 9, completion_tokens: 9, total_tokens: 18 } })}\n\n`,
  "data: [DONE]\n\n",
].map((text) => Buffer.from(text));

const JSON_HEADERS = { "content-type": "application/json", "content-length": String(COMPLETION.length) };
const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };
const STREAM_MARK = Buffer.from('"stream":true');

const server = http.createServer((req, res) => {
  if (req.method !== "POST") {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (data: Buffer) => chunks.push(data));
  req.on("end", () => {
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    if (body.includes(STREAM_MARK)) {
      res.writeHead(200, SSE_HEADERS);
      for (const event of STREAM_EVENTS) res.write(event);
      res.end();
    } else {
      res.writeHead(200, JSON_HEADERS);
      res.end(COMPLETION);
    }
  });
});
server.keepAliveTimeout = 65_000;
server.on("connection", (socket) => socket.setNoDelay(true));
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: "bench:ready", url: `http://127.0.0.1:${port}` });
});
