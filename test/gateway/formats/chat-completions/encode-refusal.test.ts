// A refusal block (the model declined; OpenAI's `refusal`) reaches the chat
// format as OpenAI sends it: `message.refusal` with null content in the JSON
// answer, `delta.refusal` pieces in the stream. Both validate against OpenAI's
// schemas.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { foldEvents } from "../../../../gateway/fold.ts";
import { encodeChatCompletion } from "../../../../gateway/formats/chat-completions/encode-response.ts";
import { createChunkEncoder } from "../../../../gateway/formats/chat-completions/encode-stream.ts";
import {
  BlockType,
  FinishReason,
  GenerateResponseSchema,
  ResponseStartSchema,
  type GenerateResponse,
} from "../../../../gen/router/v1/inference_pb.js";
import { expectValid } from "../../../support/openai-schema.ts";

const event = (value: GenerateResponse["event"]) => create(GenerateResponseSchema, { event: value } as never);
const start = create(ResponseStartSchema, { id: "gen_1", model: "m", provider: "p", created: 1n });

const refusalAnswer = [
  event({ case: "blockStart", value: { index: 0, type: BlockType.REFUSAL } } as never),
  event({ case: "blockDelta", value: { index: 0, text: "I can't " } } as never),
  event({ case: "blockDelta", value: { index: 0, text: "help with that." } } as never),
  event({ case: "blockStop", value: { index: 0 } } as never),
  event({ case: "usage", value: { inputTokens: 5, outputTokens: 4 } } as never),
  event({ case: "finish", value: { reason: FinishReason.STOP } } as never),
];

describe("refusals in the chat format", () => {
  it("answers JSON with message.refusal and null content", async () => {
    async function* rest() {
      yield* refusalAnswer;
    }
    const json = encodeChatCompletion(await foldEvents(start, rest()));
    expect(json.choices[0].message).toMatchObject({ content: null, refusal: "I can't help with that." });
    expectValid("CreateChatCompletionResponse", JSON.parse(JSON.stringify(json)), "JSON answer");
  });

  it("streams the refusal as delta.refusal pieces", () => {
    const encoder = createChunkEncoder(start);
    const chunks = [event({ case: "start", value: start }), ...refusalAnswer]
      .flatMap((response) => encoder.encode(response))
      .map(({ data }) => JSON.parse(data));
    const pieces = chunks.flatMap((chunk) => (chunk.choices[0]?.delta.refusal ? [chunk.choices[0].delta.refusal] : []));
    expect(pieces).toEqual(["I can't ", "help with that."]);
    for (const [i, chunk] of chunks.entries()) expectValid("CreateChatCompletionStreamResponse", chunk, `chunk ${i}`);
  });

  it("keeps the text as content when the answer has text as well", async () => {
    async function* rest() {
      yield event({ case: "blockStart", value: { index: 0, type: BlockType.TEXT } } as never);
      yield event({ case: "blockDelta", value: { index: 0, text: "Partly: " } } as never);
      yield event({ case: "blockStop", value: { index: 0 } } as never);
      yield* refusalAnswer.map((response) => {
        const { event: inner } = response;
        // The refusal as the answer's second block.
        if (inner.case === "blockStart" || inner.case === "blockDelta" || inner.case === "blockStop") {
          return event({ case: inner.case, value: { ...inner.value, index: 1 } } as never);
        }
        return response;
      });
    }
    const json = encodeChatCompletion(await foldEvents(start, rest()));
    expect(json.choices[0].message).toMatchObject({ content: "Partly: ", refusal: "I can't help with that." });
  });
});
