// The Responses encoders on scripted answers the simulator does not make: a
// refusal, cited sources, sealed reasoning, two blocks. The JSON answer and
// every stream event validate against OpenAI's schema, and the stream's
// completed response equals the JSON answer's output.
import { create } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { foldEvents } from "../../../../gateway/fold.ts";
import { encodeResponse } from "../../../../gateway/formats/responses/encode-response.ts";
import { createResponseStreamEncoder } from "../../../../gateway/formats/responses/encode-stream.ts";
import type { ResponseEcho } from "../../../../gateway/formats/responses/encode-response.ts";
import { BlockType, FinishReason, GenerateResponseSchema, ResponseStartSchema, type GenerateResponse } from "../../../../gen/router/v1/inference_pb.js";
import { compileAgainstSpec, describeErrors, specRef } from "../../../support/openai-schema.ts";

const event = (value: GenerateResponse["event"]) => create(GenerateResponseSchema, { event: value } as never);
const start = create(ResponseStartSchema, { id: "gen_1", model: "m", provider: "p", created: 1n });
const body: ResponseEcho = { model: "p/m" };

const answer = [
  event({ case: "blockStart", value: { index: 0, type: BlockType.REASONING, id: "gen_1_0" } } as never),
  event({ case: "blockDelta", value: { index: 0, redactedData: "SEALED" } } as never),
  event({ case: "blockStop", value: { index: 0 } } as never),
  event({ case: "blockStart", value: { index: 1, type: BlockType.TEXT, id: "gen_1_1" } } as never),
  event({ case: "blockDelta", value: { index: 1, text: "Paris is " } } as never),
  event({ case: "blockDelta", value: { index: 1, text: "sunny." } } as never),
  event({ case: "annotation", value: { url: "https://w.example/paris", title: "Weather", blockIndex: 1, startIndex: 0, endIndex: 5 } } as never),
  event({ case: "blockStop", value: { index: 1 } } as never),
  event({ case: "blockStart", value: { index: 2, type: BlockType.REFUSAL, id: "gen_1_2" } } as never),
  event({ case: "blockDelta", value: { index: 2, text: "No more." } } as never),
  event({ case: "blockStop", value: { index: 2 } } as never),
  event({ case: "usage", value: { inputTokens: 5, outputTokens: 6, cachedInputTokens: 1, cost: "0.001" } } as never),
  event({ case: "finish", value: { reason: FinishReason.STOP } } as never),
];

let validateResponse: ReturnType<typeof compileAgainstSpec>;
let validateEvent: ReturnType<typeof compileAgainstSpec>;

beforeAll(() => {
  validateResponse = compileAgainstSpec(specRef("Response"));
  validateEvent = compileAgainstSpec(specRef("ResponseStreamEvent"));
});

describe("Responses encoders on a scripted answer", () => {
  it("answers JSON with a sealed reasoning item, a cited message and a refusal message", async () => {
    async function* rest() {
      yield* answer;
    }
    const json = JSON.parse(JSON.stringify(encodeResponse(await foldEvents(start, rest()), body, 1700000100)));
    expect(validateResponse(json) ? [] : describeErrors(validateResponse.errors ?? [])).toEqual([]);
    expect(json.output).toEqual([
      { id: "gen_1_0", type: "reasoning", summary: [], encrypted_content: "redacted:SEALED" },
      {
        id: "gen_1_1",
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "Paris is sunny.", annotations: [{ type: "url_citation", url: "https://w.example/paris", title: "Weather", start_index: 0, end_index: 5 }], logprobs: [] }],
      },
      { id: "gen_1_2", type: "message", role: "assistant", status: "completed", content: [{ type: "refusal", refusal: "No more." }] },
    ]);
    // The scripted answer ends in a refusal: status completed, so completed_at is shown.
    expect(json.completed_at).toBe(1700000100);
    expect(json.usage).toMatchObject({ input_tokens: 5, output_tokens: 6, total_tokens: 11, input_tokens_details: { cached_tokens: 1 }, cost: 0.001, chat_id: "gen_1", provider: "p" });
  });

  it("streams valid, numbered events whose completed response has the JSON answer's output", async () => {
    const encoder = createResponseStreamEncoder(start, body);
    const frames = [event({ case: "start", value: start }), ...answer].flatMap((response) => encoder.encode(response));
    const events = frames.map(({ event: name, data }) => ({ name, data: JSON.parse(data) }));
    for (const { name, data } of events) {
      expect(name).toBe(data.type);
      expect(validateEvent(data) ? [] : describeErrors(validateEvent.errors ?? []).slice(0, 5), JSON.stringify(data)).toEqual([]);
    }
    expect(events.map(({ data }) => data.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map(({ data }) => data.type)).toContain("response.refusal.delta");
    expect(events.map(({ data }) => data.type)).not.toContain("response.reasoning_summary_part.added");
    async function* rest() {
      yield* answer;
    }
    const json = JSON.parse(JSON.stringify(encodeResponse(await foldEvents(start, rest()), body, 1700000100)));
    expect(events.at(-1)!.data.response.output).toEqual(json.output);
    expect(encoder.done()).toEqual([]);
  });

  it("tells each cited source as it arrives (output_text.annotation.added), numbered within its part", () => {
    const encoder = createResponseStreamEncoder(start, body);
    const events = [event({ case: "start", value: start }), ...answer]
      .flatMap((response) => encoder.encode(response))
      .map(({ data }) => JSON.parse(data) as Record<string, any>);
    const added = events.filter((data) => data.type === "response.output_text.annotation.added");
    expect(added).toEqual([
      expect.objectContaining({
        item_id: "gen_1_1",
        output_index: 1,
        content_index: 0,
        annotation_index: 0,
        annotation: { type: "url_citation", url: "https://w.example/paris", title: "Weather", start_index: 0, end_index: 5 },
      }),
    ]);
    // Between the text's deltas and its done events.
    const types = events.map((data) => data.type);
    expect(types.indexOf("response.output_text.annotation.added")).toBeGreaterThan(types.lastIndexOf("response.output_text.delta"));
    expect(types.indexOf("response.output_text.annotation.added")).toBeLessThan(types.indexOf("response.output_text.done"));
  });

  it("marks the item a limit cut as incomplete, in its output_item.done and in response.incomplete", () => {
    const encoder = createResponseStreamEncoder(start, body);
    const cut = [...answer.slice(0, -1), event({ case: "finish", value: { reason: FinishReason.LENGTH } } as never)];
    const events = [event({ case: "start", value: start }), ...cut]
      .flatMap((response) => encoder.encode(response))
      .map(({ data }) => JSON.parse(data) as Record<string, any>);
    for (const data of events) expect(validateEvent(data) ? [] : describeErrors(validateEvent.errors ?? []).slice(0, 5), JSON.stringify(data)).toEqual([]);
    const itemStatuses = events.filter((data) => data.type === "response.output_item.done").map((data) => data.item.status);
    expect(itemStatuses).toEqual([undefined, "completed", "incomplete"]);
    const last = events.at(-1)!;
    expect(last.type).toBe("response.incomplete");
    expect(last.response.output.map((item: { status?: string }) => item.status)).toEqual([undefined, "completed", "incomplete"]);
  });

  it("answers a web search as a web_search_call item and a made image as an image_generation_call, in JSON and stream alike", async () => {
    const media = [
      event({ case: "blockStart", value: { index: 0, type: BlockType.SERVER_TOOL_CALL, id: "srvtoolu_1", serverToolName: "web_search" } } as never),
      event({ case: "blockDelta", value: { index: 0, text: '{"query":"weather paris"}' } } as never),
      event({ case: "blockStop", value: { index: 0 } } as never),
      event({ case: "blockStart", value: { index: 1, type: BlockType.SERVER_TOOL_RESULT, id: "gen_1_1", serverToolName: "web_search", serverToolCallId: "srvtoolu_1" } } as never),
      event({ case: "blockDelta", value: { index: 1, text: "[]" } } as never),
      event({ case: "blockStop", value: { index: 1 } } as never),
      event({ case: "blockStart", value: { index: 2, type: BlockType.IMAGE, id: "gen_1_2", mimeType: "image/png" } } as never),
      event({ case: "blockDelta", value: { index: 2, data: new Uint8Array([1, 2]) } } as never),
      event({ case: "blockDelta", value: { index: 2, data: new Uint8Array([3]) } } as never),
      event({ case: "blockStop", value: { index: 2 } } as never),
      event({ case: "usage", value: { inputTokens: 5, outputTokens: 6, cost: "0.001" } } as never),
      event({ case: "finish", value: { reason: FinishReason.STOP } } as never),
    ];
    async function* rest() {
      yield* media;
    }
    const json = JSON.parse(JSON.stringify(encodeResponse(await foldEvents(start, rest()), body, 1700000100)));
    expect(validateResponse(json) ? [] : describeErrors(validateResponse.errors ?? [])).toEqual([]);
    expect(json.output).toEqual([
      { id: "srvtoolu_1", type: "web_search_call", status: "completed", action: { type: "search", query: "weather paris", queries: ["weather paris"] } },
      { id: "gen_1_2", type: "image_generation_call", status: "completed", result: Buffer.from([1, 2, 3]).toString("base64") },
    ]);
    const encoder = createResponseStreamEncoder(start, body);
    const events = [event({ case: "start", value: start }), ...media].flatMap((response) => encoder.encode(response)).map(({ data }) => JSON.parse(data) as Record<string, any>);
    for (const data of events) expect(validateEvent(data) ? [] : describeErrors(validateEvent.errors ?? []).slice(0, 5), JSON.stringify(data)).toEqual([]);
    expect(events.filter((data) => data.type === "response.output_item.added").map((data) => [data.item.type, data.item.status])).toEqual([
      ["web_search_call", "in_progress"],
      ["image_generation_call", "generating"],
    ]);
    expect(events.at(-1)!.response.output).toEqual(json.output);
  });
});
