// Responses over WebSocket against SSE (`npm run bench -- --suite websocket`):
// the time to a turn's first event (`response.created`) and to its last
// (`response.completed`), one turn after another, over one socket and over
// POST /v1/responses with `stream: true` on a kept-alive connection. The
// gateway runs in this process (in-process core), its provider is the test
// suite's fake OpenAI upstream on loopback. The floor, measured in the same
// rounds: one JSON message echoed by a bare `ws` server, and one POST answered
// by a bare node:http server, on the same loopback.
//
// Options: --turns N (timed turns per transport and round, 300), --rounds N (5),
// --warmup N (50). Markdown to stdout and bench/results/websocket.md.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import WebSocket, { WebSocketServer } from "ws";
import { parseConfig } from "../core/config/load.ts";
import { startFakeUpstream } from "../test/support/fake-openai-upstream.ts";
import { startGateway, TEST_KEY, testConfig } from "../test/support/harness.ts";
import { int, requireNode24 } from "./options.ts";
import { environmentLine, fmt, log, targetsSection, verdict, writeReport } from "./report.ts";

requireNode24("npm run bench -- --suite websocket", "bench/responses-socket.ts");

const { values: flags } = parseArgs({ options: { turns: { type: "string" }, rounds: { type: "string" }, warmup: { type: "string" } } });
const turns = int(flags.turns, 300);
const rounds = int(flags.rounds, 5);
const warmup = int(flags.warmup, 50);

const BODY = { model: "test/ok", input: "Hi", store: false };

/** Milliseconds to the first and the last event of one turn. */
interface TurnTime {
  first: number;
  last: number;
}

const started = performance.now();
const upstream = await startFakeUpstream();
// Every turn on one socket: the turn limit is not what is measured.
const gateway = await startGateway(parseConfig(JSON.stringify({ ...testConfig(upstream.url), responses_websocket: { max_turns: 1_000_000 } })));

/** One socket; each call sends a response.create and times its events. */
async function socketTransport() {
  const ws = new WebSocket(`${gateway.url.replace("http", "ws")}/v1/responses`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  let waiting: ((type: string) => void) | undefined;
  let failed: ((error: Error) => void) | undefined;
  ws.on("message", (data) => waiting?.((JSON.parse(data.toString()) as { type: string }).type));
  ws.on("close", (code, reason) => failed?.(new Error(`the socket closed: ${code} ${reason.toString()}`)));
  const turn = () =>
    new Promise<TurnTime>((resolve, reject) => {
      const sent = performance.now();
      let first = 0;
      failed = reject;
      waiting = (type) => {
        first ||= performance.now() - sent;
        if (type === "response.completed") resolve({ first, last: performance.now() - sent });
      };
      ws.send(JSON.stringify({ type: "response.create", ...BODY }));
    });
  return { turn, close: () => ws.close() };
}

/** POST with stream: true on a kept-alive connection; its SSE frames timed as they arrive. */
function sseTransport() {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const body = JSON.stringify({ ...BODY, stream: true });
  const turn = () =>
    new Promise<TurnTime>((resolve, reject) => {
      const sent = performance.now();
      let first = 0;
      let text = "";
      const request = http.request(`${gateway.apiUrl}/responses`, { method: "POST", agent, headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" } }, (response) => {
        response.on("data", (chunk: Buffer) => {
          first ||= performance.now() - sent;
          text += chunk.toString();
        });
        response.on("end", () => (text.includes("response.completed") ? resolve({ first, last: performance.now() - sent }) : reject(new Error(text))));
      });
      request.on("error", reject);
      request.end(body);
    });
  return { turn, close: () => agent.destroy() };
}

/** The floor: a bare ws echo and a bare HTTP answer on loopback, one message at a time. */
async function floors() {
  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  wss.on("connection", (socket) => socket.on("message", (data) => socket.send(data.toString())));
  await new Promise((resolve) => wss.once("listening", resolve));
  const echo = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  await new Promise((resolve) => echo.once("open", resolve));
  let answered: (() => void) | undefined;
  echo.on("message", () => answered?.());
  const server = http.createServer((_request, response) => response.end('{"type":"response.completed"}'));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    ws: () =>
      new Promise<TurnTime>((resolve) => {
        const sent = performance.now();
        answered = () => resolve({ first: performance.now() - sent, last: performance.now() - sent });
        echo.send(JSON.stringify({ type: "response.create", ...BODY }));
      }),
    http: () =>
      new Promise<TurnTime>((resolve) => {
        const sent = performance.now();
        http.request(url, { method: "POST", agent }, (response) => response.resume().on("end", () => resolve({ first: performance.now() - sent, last: performance.now() - sent }))).end("{}");
      }),
    close: () => {
      echo.close();
      wss.close();
      agent.destroy();
      server.close();
    },
  };
}

const socket = await socketTransport();
const sse = sseTransport();
const floor = await floors();
const paths: Record<string, () => Promise<TurnTime>> = { "websocket": socket.turn, "sse": sse.turn, "floor: ws echo": floor.ws, "floor: http": floor.http };
const samples: Record<string, TurnTime[]> = Object.fromEntries(Object.keys(paths).map((name) => [name, []]));
for (const turn of Object.values(paths)) for (let i = 0; i < warmup; i++) await turn();
for (let round = 1; round <= rounds; round++) {
  // Interleaved: each round runs every path, so a slow moment of the machine falls on all of them.
  for (const [name, turn] of Object.entries(paths)) for (let i = 0; i < turns; i++) samples[name].push(await turn());
  log(`round ${round}/${rounds}: ${Object.entries(samples).map(([name, all]) => `${name} p50 first ${fmt(percentile(all.map((t) => t.first), 50), 3)} ms`).join(", ")}`);
}
socket.close();
sse.close();
floor.close();
await gateway.close();
await upstream.close();

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const row = (name: string) => {
  const all = samples[name];
  const firsts = all.map((t) => t.first);
  const lasts = all.map((t) => t.last);
  return `| ${name} | ${fmt(percentile(firsts, 50), 3)} | ${fmt(percentile(firsts, 99), 3)} | ${fmt(percentile(lasts, 50), 3)} | ${fmt(percentile(lasts, 99), 3)} | ${all.length} |`;
};
const p50 = (name: string) => percentile(samples[name].map((t) => t.first), 50);
const report = [
  "# Responses over WebSocket against SSE: time to a turn's first and last event",
  "",
  environmentLine(),
  "",
  `One turn at a time (\`${JSON.stringify(BODY)}\`, the fake upstream's one-sentence answer), ${turns} timed turns per path in each of ${rounds} interleaved rounds after ${warmup} warm-up turns. In process: the gateway with its core, the fake upstream on loopback. First event: \`response.created\` over the socket; over SSE, the first bytes of the answer (headers and \`response.created\` come in one write).`,
  "",
  "| path | first event p50 ms | first event p99 ms | last event p50 ms | last event p99 ms | turns |",
  "| --- | ---: | ---: | ---: | ---: | ---: |",
  ...Object.keys(paths).map(row),
  "",
  ...targetsSection([
    `| time to first event over the socket <= over SSE (p50) | ${fmt(p50("websocket"), 3)} ms vs ${fmt(p50("sse"), 3)} ms | ${verdict(p50("websocket") <= p50("sse"))} |`,
  ]),
].join("\n");
await writeReport("websocket.md", report + "\n", (performance.now() - started) / 1000);
