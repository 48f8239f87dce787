// An OpenAI-compatible upstream whose latency and speed are injected: before it
// answers a model it moves the test's clock on by that model's `latencyMs`
// (before the first byte of a stream) or `durationMs` (before a whole JSON
// answer), and reports `completionTokens` (and `cachedTokens`, the prompt
// tokens it says it served from its cache). The core measures with the same
// clock, so the measured figures are exact and no test waits on the wall clock.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Timing {
  latencyMs: number;
  durationMs: number;
  completionTokens: number;
}

export interface TimedUpstream {
  url: string;
  /** By upstream model id (a route's provider_model_id); the tests change it between requests. */
  timings: Map<string, Timing>;
  /** By upstream model id: the cached prompt tokens its usage reports (prompt_tokens_details.cached_tokens); none when absent. */
  cachedTokens: Map<string, number>;
  close(): Promise<void>;
}

export interface TestClock {
  now: () => Date;
  advance(ms: number): void;
}

export function testClock(start = Date.UTC(2026, 0, 1)): TestClock {
  let time = start;
  return { now: () => new Date(time), advance: (ms) => void (time += ms) };
}

export async function startTimedUpstream(clock: TestClock): Promise<TimedUpstream> {
  const timings = new Map<string, Timing>();
  const cachedTokens = new Map<string, number>();
  const server = http.createServer(async (request, response) => {
    let text = "";
    for await (const chunk of request) text += chunk;
    const body = JSON.parse(text) as { model: string; stream?: boolean };
    const timing = timings.get(body.model) ?? { latencyMs: 0, durationMs: 0, completionTokens: 1 };
    const cached = cachedTokens.get(body.model);
    const usage = {
      prompt_tokens: 5,
      completion_tokens: timing.completionTokens,
      total_tokens: 5 + timing.completionTokens,
      ...(cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: cached } }),
    };
    const base = { id: "chatcmpl-timed", created: 1, model: body.model };
    if (!body.stream) {
      clock.advance(timing.durationMs);
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ ...base, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "Hi" }, finish_reason: "stop" }], usage }));
      return;
    }
    clock.advance(timing.latencyMs);
    response.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (fields: object) => `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", ...fields })}\n\n`;
    response.end(
      chunk({ choices: [{ index: 0, delta: { role: "assistant", content: "Hi" }, finish_reason: null }] }) +
        chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) +
        chunk({ choices: [], usage }) +
        "data: [DONE]\n\n",
    );
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    timings,
    cachedTokens,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
