// The chat stream writes a text delta from a prebuilt frame (only the text is
// encoded per event); it must be the very bytes JSON.stringify gives for the
// chunk object, whatever the text and the start's id, model and provider.
import { create } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createChunkEncoder } from "../../../../gateway/formats/chat-completions/encode-stream.ts";
import { BlockType, GenerateResponseSchema, ResponseStartSchema, type GenerateResponse } from "../../../../gen/router/v1/inference_pb.js";

const event = (value: GenerateResponse["event"]) => create(GenerateResponseSchema, { event: value } as never);

/** The frame of a text delta as the generic path spells it. */
const expectedFrame = (start: { id: string; model: string; provider: string; created: bigint }, text: string) =>
  JSON.stringify({
    id: start.id,
    object: "chat.completion.chunk",
    created: Number(start.created),
    model: start.model,
    provider: start.provider,
    choices: [{ index: 0, delta: { content: text }, finish_reason: null }],
  });

function textFrame(start: { id: string; model: string; provider: string; created: bigint }, text: string): string {
  const encoder = createChunkEncoder(create(ResponseStartSchema, start));
  encoder.encode(event({ case: "blockStart", value: { index: 0, type: BlockType.TEXT } } as never));
  const frames = encoder.encode(event({ case: "blockDelta", value: { index: 0, text } } as never));
  expect(frames).toHaveLength(1);
  return frames[0].data;
}

describe("chat stream text deltas", () => {
  it("are the chunk object's JSON for awkward texts", () => {
    const start = { id: "rtr_1", model: "gpt-x", provider: "openai", created: 1700000000n };
    for (const text of ['say "hi"', "line\nbreak\ttab\\", "é ü 漢字 🎉", "\u2028\u2029", "\u0000\u001f", "\ud800 lone", "</script>"]) {
      expect(textFrame(start, text)).toBe(expectedFrame(start, text));
    }
  });

  it("are the chunk object's JSON for any text, id, model and provider", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string(), fc.string(), fc.string(), fc.bigInt({ min: 0n, max: 2n ** 40n }), (text, id, model, provider, created) => {
        fc.pre(text !== "");
        const start = { id, model, provider, created };
        expect(textFrame(start, text)).toBe(expectedFrame(start, text));
      }),
      { seed: 9, numRuns: 300 },
    );
  });
});
