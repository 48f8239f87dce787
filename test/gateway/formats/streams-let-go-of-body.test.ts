// A streamed answer's Koa context lives as long as the stream: every text
// format's route takes the JSON body (and its raw text) off the context once
// decoded (formats/format.ts takeBody), so a long stream does not keep the
// whole conversation it was asked with. Checked mid-stream on each route.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import type { Context } from "koa";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BlockType, GenerateResponseSchema, type GenerateResponse } from "../../../gen/router/v1/inference_pb.js";
import { createApp } from "../../../gateway/app.ts";
import type { CoreClient } from "../../../gateway/core-client.ts";

const event = (value: GenerateResponse["event"]) => create(GenerateResponseSchema, { event: value });

let release = Promise.withResolvers<void>();

/** A core whose answer says "hi", then goes quiet until the test releases it. */
const quietCore = {
  inference: {
    async *generate() {
      yield event({ case: "start", value: { id: "gen_1", provider: "toy-provider", created: 1n } as never });
      yield event({ case: "blockStart", value: { index: 0, type: BlockType.TEXT } as never });
      yield event({ case: "blockDelta", value: { index: 0, text: "hi" } as never });
      await release.promise;
      yield event({ case: "blockStop", value: { index: 0 } as never });
    },
  },
} as unknown as CoreClient;

const LONG_TEXT = "a conversation worth keeping ".repeat(1000);

const ROUTES: [string, unknown][] = [
  ["/api/v1/chat/completions", { model: "toy/model", stream: true, messages: [{ role: "user", content: LONG_TEXT }] }],
  ["/v1/messages", { model: "toy/model", stream: true, max_tokens: 10, messages: [{ role: "user", content: LONG_TEXT }] }],
  ["/api/v1/messages", { model: "toy/model", stream: true, max_tokens: 10, messages: [{ role: "user", content: LONG_TEXT }] }],
  ["/api/v1/responses", { model: "toy/model", stream: true, input: LONG_TEXT }],
];

describe("a streamed answer lets go of the request body", () => {
  let server: http.Server;
  let base: string;
  let seen: Context | undefined;
  beforeAll(async () => {
    const app = createApp({ core: quietCore });
    // First in the chain: the context the route was given, as it stands while the stream runs.
    app.middleware.unshift((ctx, next) => {
      seen = ctx;
      return next();
    });
    server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it.each(ROUTES)("on %s", async (path, body) => {
    release = Promise.withResolvers<void>();
    seen = undefined;
    const response = await fetch(base + path, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer sk-test" }, body: JSON.stringify(body) });
    expect(response.status).toBe(200);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    // The first text has come: the route returned and the stream waits on the quiet core.
    while (!text.includes("hi")) text += (await reader.read()).value ?? "";
    await vi.waitFor(() => expect(seen?.res.headersSent).toBe(true));
    expect(seen!.request.body).toBeUndefined();
    expect(seen!.request.rawBody).toBeUndefined();
    release.resolve();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += chunk.value;
  });
});
