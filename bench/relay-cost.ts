// The CPU a streamed answer costs the core and the chat encoder, without the
// HTTP server in front (`npx node bench/relay-cost.ts [--root DIR]`): a
// diagnostic for the streams suite, not part of `npm run bench`.
//
// One process holds a minimal upstream (its own node:http server, prebuilt
// SSE chunks: the role and first token, then --tokens tokens each in a chunk
// of its own, then finish, usage and [DONE]) and the core of the checkout
// --root (createCore, the in-process client, the chat format's decoder and
// stream encoder, frames built as gateway/sse.ts builds them, no socket).
// --streams streams run at once, --rounds times; the report is the process's
// CPU per stream (upstream included, which is the same for every tree: compare
// trees, not absolute numbers) and per relayed event. A/B: run it for two
// checkouts one after the other, several times, in both orders.
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { setImmediate as tick } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { BENCH_UPSTREAM_ENV, oneUpstreamConfig } from "./gateway-child.ts";

const { values: flags } = parseArgs({
  options: {
    root: { type: "string", default: path.dirname(path.dirname(new URL(import.meta.url).pathname)) },
    streams: { type: "string", default: "200" },
    tokens: { type: "string", default: "24" },
    rounds: { type: "string", default: "8" },
  },
});
const root = path.resolve(flags.root);
const streams = Number(flags.streams);
const tokens = Number(flags.tokens);
const rounds = Number(flags.rounds);
const load = (file: string) => import(pathToFileURL(path.join(root, file)).href);

const { parseConfig } = await load("core/config/load.ts");
const { createCore } = await load("core/create-core.ts");
const { createInProcessCoreClient } = await load("gateway/core-client.ts");
const { decodeChatRequest } = await load("gateway/formats/chat-completions/decode-request.ts");
const { createChunkEncoder } = await load("gateway/formats/chat-completions/encode-stream.ts");

const event = (delta: object, finish: string | null) =>
  Buffer.from(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1700000000, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
const OPENING = Buffer.concat([event({ role: "assistant", content: "" }, null), event({ content: "Hello" }, null)]);
const TOKEN = event({ content: " token" }, null);
const CLOSING = Buffer.concat([
  event({}, "stop"),
  Buffer.from(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1700000000, model: "m", choices: [], usage: { prompt_tokens: 9, completion_tokens: tokens, total_tokens: 9 + tokens } })}\n\n`),
  Buffer.from("data: [DONE]\n\n"),
]);

// Each chunk in a tick of its own, so that it reaches the core as a body chunk of its own.
const upstream = http.createServer((req, res) => {
  req.resume();
  req.on("end", async () => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(OPENING);
    for (let i = 0; i < tokens; i++) {
      await tick();
      res.write(TOKEN);
    }
    await tick();
    res.end(CLOSING);
  });
});
upstream.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
const upstreamOrigin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

const KEY = "sk-rtr-bench-0123456789abcdef";
const MODEL_ID = "bench/stream";
const config = parseConfig(JSON.stringify(oneUpstreamConfig(upstreamOrigin, MODEL_ID, "Bench stream")));
const core = await createCore({ config, env: { ...BENCH_UPSTREAM_ENV, ROUTER_DEV_KEY: KEY } });
const client = createInProcessCoreClient(core);
const body = { model: MODEL_ID, messages: [{ role: "user", content: "hi" }], max_tokens: 64, stream: true };

let sink = 0;
async function oneStream(n: number): Promise<number> {
  const { request } = decodeChatRequest(body, { apiKey: KEY, requestId: `rtr_bench_${n}` });
  const controller = new AbortController();
  const events = client.inference.generate(request, { signal: controller.signal })[Symbol.asyncIterator]();
  const first = await events.next();
  const encoder = createChunkEncoder(first.value.event.value);
  let count = 0;
  for (let step = first; !step.done; step = await events.next()) {
    count++;
    let frame = "";
    for (const { data, event: name } of encoder.encode(step.value)) frame += (name ? `event: ${name}\n` : "") + `data: ${data}\n\n`;
    sink += frame.length;
  }
  return count;
}

const perStream: number[] = [];
let relayed = 0;
for (let round = 0; round <= rounds; round++) {
  const before = process.cpuUsage();
  const counts = await Promise.all(Array.from({ length: streams }, (_, i) => oneStream(round * streams + i)));
  const used = process.cpuUsage(before);
  // Round 0 warms the JIT and the connection pool.
  if (round > 0) {
    perStream.push((used.user + used.system) / streams);
    relayed = counts[0];
  }
}
perStream.sort((a, b) => a - b);
const median = perStream[Math.floor(perStream.length / 2)];
process.stdout.write(
  `${root}: ${streams} streams x ${rounds} rounds, ${relayed} events per stream: CPU per stream median ${median.toFixed(0)} us ` +
    `(min ${perStream[0].toFixed(0)}, max ${perStream.at(-1)!.toFixed(0)}), ${(median / relayed).toFixed(1)} us per event (sink ${sink})\n`,
);
await core.close();
upstream.close();
process.exit(0);
