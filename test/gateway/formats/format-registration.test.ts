// A format plugs into the app with its routes and its error shape: a toy
// format whose errors look nothing like the spec's answers its own routes'
// errors (an unreadable body, before and inside a stream) in its shape, while
// a request no route matches and the chat routes keep the spec's body.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Code, invalidParameter, routerError } from "../../../core/errors.ts";
import { BlockType, GenerateRequestSchema, GenerateResponseSchema, type GenerateResponse } from "../../../gen/router/v1/inference_pb.js";
import { createApp } from "../../../gateway/app.ts";
import type { CoreClient } from "../../../gateway/core-client.ts";
import type { GatewayFormat } from "../../../gateway/formats/format.ts";
import { FORMATS } from "../../../gateway/formats/index.ts";
import { startCall } from "../../../gateway/start-call.ts";
import { writeEventStream, type StreamEncoder } from "../../../gateway/write-event-stream.ts";

const event = (value: GenerateResponse["event"]) => create(GenerateResponseSchema, { event: value });

/** A core whose only inference answers "hi" in one text block, then fails when the model is "fails-midway". */
const fakeCore = {
  inference: {
    async *generate(request: { model: string }) {
      try {
        yield event({ case: "start", value: { id: "gen_1", provider: "toy-provider", created: 1n } as never });
        yield event({ case: "blockStart", value: { index: 0, type: BlockType.TEXT } as never });
        yield event({ case: "blockDelta", value: { index: 0, text: "hi" } as never });
        if (request.model === "fails-midway") throw routerError(Code.Unavailable, "upstream_error", "upstream went away");
        // A model that goes quiet until the test lets it go on.
        if (request.model === "quiet") await quietUntilReleased.promise;
        yield event({ case: "blockStop", value: { index: 0 } as never });
      } finally {
        // Where the core would end the upstream request and settle the hold.
        closedCalls.push(request.model);
      }
    },
  },
} as unknown as CoreClient;

const quietUntilReleased = Promise.withResolvers<void>();
/** The models of the calls whose generator has closed, in order. */
const closedCalls: string[] = [];

/** Frames are event names only, so the test reads the sequence at a glance. */
const toyEncoder: StreamEncoder = {
  encode: ({ event }) => [{ event: event.case ?? "none", data: "{}" }],
  done: () => [{ event: "toy_end", data: "{}" }],
  error: (error) => [{ event: "toy_error", data: JSON.stringify({ kind: error.code }) }],
};

const toy: GatewayFormat = {
  encodeError: (error) => ({ type: "error", error: { type: error.type, message: error.message } }),
  register(routes, { core }) {
    routes.post("/toy", async () => {
      throw invalidParameter("model", "model is required");
    });
    routes.post("/toy/quiet", async (ctx) => {
      const call = await startCall(ctx, core, create(GenerateRequestSchema, { model: "quiet" }));
      writeEventStream(ctx, call, { ...toyEncoder, keepAlive: () => [{ event: "toy_ping", data: "{}" }] }, { keepAliveMs: 20 });
    });
    // An encoder that fails on one kind of event: the start (before anything is sent) or a later one.
    routes.post("/toy/encoder-fails", async (ctx) => {
      const { model, failOn } = ctx.request.body as { model: string; failOn: string };
      const call = await startCall(ctx, core, create(GenerateRequestSchema, { model }));
      writeEventStream(ctx, call, {
        ...toyEncoder,
        encode: (response) => {
          if (response.event.case === failOn) throw new Error(`cannot frame ${failOn}`);
          return toyEncoder.encode(response);
        },
      });
    });
    routes.post("/toy/stream", async (ctx) => {
      const { model } = ctx.request.body as { model: string };
      const call = await startCall(ctx, core, create(GenerateRequestSchema, { model }));
      writeEventStream(ctx, call, toyEncoder);
    });
  },
};

describe("format registration", () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer(createApp({ core: fakeCore, formats: [...FORMATS, toy] }).callback());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const post = (path: string, body: string) => fetch(base + path, { method: "POST", headers: { "content-type": "application/json" }, body });
  // Bodies are checked field by field, so a loose type is enough here.
  const json = (response: Response) => response.json() as Promise<Record<string, any>>;

  it("answers an error of the format's route in the format's shape", async () => {
    const response = await post("/toy", "{}");
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual({ type: "error", error: { type: "invalid_request_error", message: "model is required" } });
  });

  it("answers a request no route matches in the spec's shape", async () => {
    const missing = await post("/nowhere", "{}");
    expect(missing.status).toBe(404);
    expect((await json(missing)).error).toMatchObject({ code: "not_found", type: "invalid_request_error", param: null });
  });

  it("answers an unreadable body in the shape of the route it was sent to (the body is read after routing)", async () => {
    const unreadable = await post("/toy", "{not json");
    expect(unreadable.status).toBe(400);
    const body = await json(unreadable);
    expect(Object.keys(body)).toEqual(["type", "error"]);
    expect(body.error.message).toContain("JSON");
    const onChat = await post("/api/v1/chat/completions", "{not json");
    expect((await json(onChat)).error).toMatchObject({ code: "invalid_json", type: "invalid_request_error" });
  });

  it("keeps the spec's shape on the chat route beside it", async () => {
    // No key: the chat route's first check.
    const response = await post("/api/v1/chat/completions", "{}");
    expect(response.status).toBe(401);
    const body = await json(response);
    expect(Object.keys(body)).toEqual(["error"]);
    expect(Object.keys(body.error)).toEqual(["message", "type", "param", "code"]);
  });

  it("streams through the format's encoder and ends with its done frames", async () => {
    const response = await post("/toy/stream", JSON.stringify({ model: "ok" }));
    expect(response.status).toBe(200);
    expect(eventNames(await response.text())).toEqual(["start", "blockStart", "blockDelta", "blockStop", "toy_end"]);
  });

  it("sends the encoder's in-band error when the stream fails after commit, and no done frames", async () => {
    const response = await post("/toy/stream", JSON.stringify({ model: "fails-midway" }));
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(eventNames(text)).toEqual(["start", "blockStart", "blockDelta", "toy_error"]);
    expect(text).toContain('data: {"kind":"upstream_error"}');
  });

  it("answers an encoder's failure on the start event as the format's HTTP error, and ends the call", async () => {
    const response = await post("/toy/encoder-fails", JSON.stringify({ model: "bad-start", failOn: "start" }));
    expect(response.status).toBe(500);
    expect((await json(response)).type).toBe("error");
    await vi.waitFor(() => expect(closedCalls).toContain("bad-start"));
  });

  it("ends the call when the encoder fails after commit, whose response then ends with the in-band error", async () => {
    const response = await post("/toy/encoder-fails", JSON.stringify({ model: "bad-midway", failOn: "blockStart" }));
    expect(response.status).toBe(200);
    expect(eventNames(await response.text())).toEqual(["start", "toy_error"]);
    await vi.waitFor(() => expect(closedCalls).toContain("bad-midway"));
  });

  it("sends the encoder's keep-alive frames while the model is quiet, and none once it speaks again", async () => {
    const response = await post("/toy/quiet", "{}");
    expect(response.status).toBe(200);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    // Read until a keep-alive has come (the model is quiet), then let it go on and read to the end.
    while (!text.includes("toy_ping")) text += (await reader.read()).value ?? "";
    quietUntilReleased.resolve();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += chunk.value;
    const names = eventNames(text);
    expect(names.slice(0, 3)).toEqual(["start", "blockStart", "blockDelta"]);
    expect(names.slice(-2)).toEqual(["blockStop", "toy_end"]);
    expect(new Set(names.slice(3, -2))).toEqual(new Set(["toy_ping"]));
  });
});

function eventNames(sse: string): string[] {
  return [...sse.matchAll(/^event: (.+)$/gm)].map((match) => match[1]);
}
