// An OpenAI-compatible upstream whose answers end when the test says: each
// streamed request gets its first words at once, then waits until the test
// calls finish() (the rest, FAKE_USAGE, [DONE]), cut() (the connection
// destroyed) or garble() (a chunk that is not JSON, then the end); a
// non-streamed one gets its whole answer (or the cut, or the garble) then.
// A test can so change the world (stop Redis, delete the response) while an
// answer is in progress, with no clock. Like the other fakes it first refuses
// what the real API refuses (openai-request-rules.ts).
import type { ServerResponse } from "node:http";
import { authRefusal, bodyRefusal, requestValidator } from "./openai-request-rules.ts";
import { FAKE_USAGE } from "./fake-openai-upstream.ts";
import { startRecordingServer, type FakeUpstream } from "./recording-server.ts";

export const GATED_FIRST_WORDS = "Hello ";
export const GATED_LAST_WORDS = "from the gate";

export interface GatedAnswer {
  finish(): void;
  cut(): void;
  garble(): void;
}

export interface GatedUpstream extends FakeUpstream {
  /** The next request's answer, once its first words were sent (requests already waiting first). */
  nextAnswer(): Promise<GatedAnswer>;
}

export async function startGatedUpstream(): Promise<GatedUpstream> {
  // Compiled now rather than on the first request.
  requestValidator();
  const answers: GatedAnswer[] = [];
  const waiters: ((answer: GatedAnswer) => void)[] = [];
  const upstream = await startRecordingServer("/v1", ({ path, headers, body }, res, onAbort) => {
    const refusal = path !== "/v1/chat/completions" ? { status: 404, body: { error: { message: `unknown path ${path}` } } } : (authRefusal(headers) ?? bodyRefusal(body));
    if (refusal) {
      res.writeHead(refusal.status, { "content-type": "application/json" });
      res.end(JSON.stringify(refusal.body));
      return;
    }
    res.once("close", () => {
      if (!res.writableEnded) onAbort();
    });
    const answer = body.stream === true ? streamedAnswer(res, String(body.model)) : wholeAnswer(res, String(body.model));
    const waiter = waiters.shift();
    if (waiter) waiter(answer);
    else answers.push(answer);
  });
  return {
    ...upstream,
    nextAnswer: () => {
      const waiting = answers.shift();
      return waiting ? Promise.resolve(waiting) : new Promise((resolve) => waiters.push(resolve));
    },
  };
}

function streamedAnswer(res: ServerResponse, model: string): GatedAnswer {
  const base = { id: "chatcmpl-gated", created: 1700000000, model, object: "chat.completion.chunk" };
  const send = (payload: unknown) => res.write(`data: ${JSON.stringify(payload)}\n\n`);
  res.writeHead(200, { "content-type": "text/event-stream" });
  send({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: GATED_FIRST_WORDS }, finish_reason: null }] });
  return {
    finish() {
      send({ ...base, choices: [{ index: 0, delta: { content: GATED_LAST_WORDS }, finish_reason: null }] });
      send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
      send({ ...base, choices: [], usage: FAKE_USAGE });
      res.end("data: [DONE]\n\n");
    },
    cut: () => res.socket?.destroy(),
    garble: () => res.end("data: {not json\n\n"),
  };
}

function wholeAnswer(res: ServerResponse, model: string): GatedAnswer {
  return {
    finish() {
      res.writeHead(200, { "content-type": "application/json" });
      const message = { role: "assistant", content: GATED_FIRST_WORDS + GATED_LAST_WORDS };
      res.end(JSON.stringify({ id: "chatcmpl-gated", object: "chat.completion", created: 1700000000, model, choices: [{ index: 0, message, finish_reason: "stop" }], usage: FAKE_USAGE }));
    },
    cut: () => res.socket?.destroy(),
    garble: () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{not json");
    },
  };
}
