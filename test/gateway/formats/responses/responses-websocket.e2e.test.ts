// The Responses API over WebSocket (docs/responses.md, "WebSocket mode") with
// a plain WebSocket client (`ws`), as Codex speaks it: the handshake's key,
// `response.create` frames answered with the SSE stream's events, two turns on
// one socket (the second continuing the first, unstored, by its id), a
// warm-up, bad frames, a socket closed mid-turn with the balance exact, and
// the 426 when the mode is off. In-process and split over Connect.
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../../../core/config/load.ts";
import { startFakeUpstream, type FakeUpstream } from "../../../support/fake-openai-upstream.ts";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../../support/harness.ts";
import { femtosOf, nanosRoundedUp } from "../../../support/exact-money.ts";

interface Frame {
  type: string;
  [field: string]: unknown;
}

/** A socket and the frames it received, in order. */
async function openSocket(gateway: Gateway, { key = TEST_KEY, path = "/v1/responses" } = {}) {
  const ws = new WebSocket(`${gateway.url.replace("http", "ws")}${path}`, { headers: { authorization: `Bearer ${key}`, "openai-beta": "responses_websockets=2026-02-06" } });
  const frames: Frame[] = [];
  ws.on("message", (data) => frames.push(JSON.parse(data.toString()) as Frame));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return { ws, frames };
}

/** The handshake's HTTP answer when the upgrade is refused: status and JSON body. */
function refusedHandshake(url: string, headers: Record<string, string>): Promise<{ status: number; body: { error: { code: string } } }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once("unexpected-response", (_request, response) => {
      let text = "";
      response.on("data", (chunk: Buffer) => (text += chunk.toString()));
      response.on("end", () => resolve({ status: response.statusCode!, body: JSON.parse(text) }));
    });
    ws.once("open", () => reject(new Error("the upgrade was accepted")));
    ws.once("error", () => {});
  });
}

/** Waits until the frames hold one of a turn's last events, and gives the turn's frames from `from` on. */
async function turnFrames(frames: Frame[], from: number): Promise<Frame[]> {
  await vi.waitFor(() => expect(frames.slice(from).some((frame) => ["response.completed", "response.failed", "error"].includes(frame.type))).toBe(true), { timeout: 5000 });
  return frames.slice(from);
}

describe.each([{ split: false }, { split: true }])("the Responses API over WebSocket (split: $split)", ({ split }) => {
  let upstream: FakeUpstream;
  let gateway: Gateway;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    gateway = await startGateway(testConfig(upstream.url), { split });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it("answers a response.create with the stream's events, one JSON event per text frame", async () => {
    const { ws, frames } = await openSocket(gateway);
    ws.send(JSON.stringify({ type: "response.create", model: "test/ok", input: "Hi", store: false }));
    const turn = await turnFrames(frames, 0);
    // The same events as POST's SSE stream of the same request, in the same order.
    const sse = await fetch(`${gateway.apiUrl}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "test/ok", input: "Hi", store: false, stream: true }),
    });
    const sseTypes = (await sse.text()).split("\n").filter((line) => line.startsWith("data: ")).map((line) => (JSON.parse(line.slice(6)) as Frame).type);
    expect(turn.map((frame) => frame.type)).toEqual(sseTypes);
    expect(sseTypes).toContain("response.output_text.delta");
    expect(turn.at(-1)).toMatchObject({ response: { status: "completed", output: [{ type: "message", content: [{ text: "Hello from ok" }] }] } });
    ws.close();
  });

  it("carries two turns on one socket, the second continuing the first (unstored) by its id with only its new input", async () => {
    const { ws, frames } = await openSocket(gateway);
    const before = upstream.requests.length;
    ws.send(JSON.stringify({ type: "response.create", model: "test/ok", input: "My name is Ada.", store: false }));
    const first = await turnFrames(frames, 0);
    const firstId = (first.at(-1)!.response as { id: string }).id;
    ws.send(JSON.stringify({ type: "response.create", model: "test/ok", previous_response_id: firstId, input: [{ role: "user", content: "What is my name?" }], store: false }));
    const second = await turnFrames(frames, first.length);
    expect(second.at(-1)).toMatchObject({ type: "response.completed" });
    // The provider got the whole conversation: the first turn's input and answer, then the new question.
    const sent = upstream.requests.slice(before)[1].body as { messages: { role: string; content: unknown }[] };
    expect(sent.messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
    expect(JSON.stringify(sent.messages)).toContain("My name is Ada.");
    expect(JSON.stringify(sent.messages)).toContain("Hello from ok");
    ws.close();
  });

  it("answers a warm-up (generate: false) at once with an empty response the next turn continues from", async () => {
    const { ws, frames } = await openSocket(gateway);
    const before = upstream.requests.length;
    ws.send(JSON.stringify({ type: "response.create", model: "test/ok", input: [{ role: "user", content: "Remember: the code is 42." }], store: false, generate: false }));
    const warm = await turnFrames(frames, 0);
    expect(warm.map((frame) => frame.type)).toEqual(["response.created", "response.completed"]);
    expect(upstream.requests.length).toBe(before);
    const warmId = (warm.at(-1)!.response as { id: string }).id;
    ws.send(JSON.stringify({ type: "response.create", model: "test/ok", previous_response_id: warmId, input: [], store: false }));
    await turnFrames(frames, warm.length);
    expect(JSON.stringify(upstream.requests.at(-1)!.body)).toContain("the code is 42");
    ws.close();
  });

  it("refuses a bad key in the handshake with a 401 in the spec's shape", async () => {
    const url = `${gateway.url.replace("http", "ws")}/v1/responses`;
    const refused = await refusedHandshake(url, { authorization: "Bearer sk-wrong" });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe("invalid_api_key");
    const bare = await refusedHandshake(url, {});
    expect(bare.status).toBe(401);
  });

  it("answers a malformed frame with an error event and keeps the socket open", async () => {
    const { ws, frames } = await openSocket(gateway);
    ws.send("{not json");
    const bad = await turnFrames(frames, 0);
    expect(bad).toEqual([expect.objectContaining({ type: "error", status: 400, error: expect.objectContaining({ code: "invalid_frame" }) })]);
    ws.send(JSON.stringify({ type: "response.create", model: "test/ok", input: "Hi", unknown_field: 1 }));
    const invalid = await turnFrames(frames, 1);
    expect(invalid[0]).toMatchObject({ type: "error", status: 400, error: { param: "unknown_field" } });
    ws.send(JSON.stringify({ type: "response.create", model: "test/ok", input: "Hi", store: false }));
    expect((await turnFrames(frames, 2)).at(-1)).toMatchObject({ type: "response.completed" });
    ws.close();
  });

  it("stops the turn when the socket closes mid-answer, and charges exactly what the usage log records", async () => {
    const balance = async () => {
      await gateway.core.accounts.idle();
      return gateway.core.accounts.stores.credits.balance("org_test");
    };
    const before = await balance();
    const { ws, frames } = await openSocket(gateway);
    ws.send(JSON.stringify({ type: "response.create", model: "test/hang", input: "Tell me everything.", store: false }));
    await vi.waitFor(() => expect(frames.some((frame) => frame.type === "response.output_text.delta")).toBe(true), { timeout: 5000 });
    ws.terminate();
    // The core settles the cut answer off the request's path: its record says so once it has.
    let record: { cost: string; outcome: string } | undefined;
    await vi.waitFor(async () => {
      await gateway.core.accounts.idle();
      record = (await gateway.core.accounts.usage.list("org_test", 5)).find((each) => each.model === "test/hang");
      expect(record?.outcome).toBe("client_closed");
    });
    expect(before - (await balance())).toBe(nanosRoundedUp(femtosOf(record!.cost)));
    expect(femtosOf(record!.cost)).toBeGreaterThan(0n);
  });
});

describe("the Responses WebSocket mode switched off", () => {
  let gateway: Gateway;
  beforeAll(async () => {
    const config = testConfig("http://127.0.0.1:9");
    gateway = await startGateway(parseConfig(JSON.stringify({ ...config, responses_websocket: { enabled: false } })));
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it("answers the upgrade 426, so a client falls back to HTTP at once", async () => {
    const refused = await refusedHandshake(`${gateway.url.replace("http", "ws")}/v1/responses`, { authorization: `Bearer ${TEST_KEY}` });
    expect(refused.status).toBe(426);
    expect(refused.body.error.code).toBe("websocket_disabled");
  });
});

describe("the Responses WebSocket mode's limits", () => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    const config = testConfig(upstream.url);
    gateway = await startGateway(parseConfig(JSON.stringify({ ...config, responses_websocket: { max_turns: 1, max_frame_bytes: 4096 } })));
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const closed = (ws: WebSocket) => new Promise<{ code: number; reason: string }>((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));

  it("closes the socket with 1008 and a reason at the turn past max_turns", async () => {
    const { ws, frames } = await openSocket(gateway);
    ws.send(JSON.stringify({ type: "response.create", model: "test/ok", input: "Hi", store: false }));
    await turnFrames(frames, 0);
    const closing = closed(ws);
    ws.send(JSON.stringify({ type: "response.create", model: "test/ok", input: "Again", store: false }));
    expect(await closing).toEqual({ code: 1008, reason: "turn limit reached (1): open a new socket" });
  });

  it("closes the socket with 1009 on a frame larger than max_frame_bytes", async () => {
    const { ws } = await openSocket(gateway);
    const closing = closed(ws);
    ws.send(JSON.stringify({ type: "response.create", model: "test/ok", input: "x".repeat(5000), store: false }));
    expect((await closing).code).toBe(1009);
  });
});

