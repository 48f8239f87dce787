import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { InputItemSchema, OutputBlockSchema, TurnSchema, TurnStatus } from "../../../../gen/router/v1/conversations_pb.js";
import { AnnotationSchema, BlockType, MessageSchema, Role } from "../../../../gen/router/v1/inference_pb.js";
import { encodeStoredResponse, inputItemsOf } from "../../../../gateway/formats/responses/stored-response.ts";

const answer = create(MessageSchema, {
  role: Role.ASSISTANT,
  content: [
    { part: { case: "reasoning", value: { text: "Thinking", signature: "sig-1", signedBy: "anthropic" } } },
    { part: { case: "text", value: { text: "See the source" } } },
    { part: { case: "text", value: { text: "I can't help with that" } } },
    { part: { case: "toolCall", value: { id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' } } },
  ],
});

describe("a stored turn's output as the Responses API shows it", () => {
  it("each part is its item, with the stream's id and type (a refusal kept as text), its annotations, and its reasoning's signature", () => {
    const annotation = create(AnnotationSchema, { url: "https://example.com/a", title: "A", startIndex: 4, endIndex: 10, blockIndex: 1 });
    const turn = create(TurnSchema, {
      id: "resp_1",
      status: TurnStatus.COMPLETED,
      output: [answer],
      outputBlocks: [
        create(OutputBlockSchema, { id: "rs_1", type: BlockType.REASONING }),
        create(OutputBlockSchema, { id: "msg_1", type: BlockType.TEXT, annotations: [annotation] }),
        create(OutputBlockSchema, { id: "msg_2", type: BlockType.REFUSAL }),
        create(OutputBlockSchema, { id: "fc_1", type: BlockType.TOOL_CALL }),
      ],
    });
    const { output } = encodeStoredResponse(turn) as { output: Record<string, unknown>[] };
    expect(output.map((item) => [item.type, item.id])).toEqual([
      ["reasoning", "rs_1"],
      ["message", "msg_1"],
      ["message", "msg_2"],
      ["function_call", "fc_1"],
    ]);
    expect(output[0]).toMatchObject({ summary: [{ type: "summary_text", text: "Thinking" }], encrypted_content: expect.stringContaining("sig-1") });
    expect(output[1]).toMatchObject({ content: [{ type: "output_text", text: "See the source", annotations: [{ type: "url_citation", url: "https://example.com/a", title: "A" }] }] });
    expect(output[2]).toMatchObject({ content: [{ type: "refusal", refusal: "I can't help with that" }] });
    expect(output[3]).toMatchObject({ call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' });
  });

  it("an earlier answer sent back lists as its items, the first with the message's id and the next ones <id>_<k>", () => {
    const data = inputItemsOf(create(InputItemSchema, { id: "resp_2_in0", message: answer }), false);
    expect(data.map((item) => [item.type, item.id])).toEqual([
      ["reasoning", "resp_2_in0"],
      ["message", "resp_2_in0_1"],
      ["message", "resp_2_in0_2"],
      ["function_call", "resp_2_in0_3"],
    ]);
    expect(data[2]).toMatchObject({ content: [{ type: "output_text", text: "I can't help with that" }] });
  });
});
