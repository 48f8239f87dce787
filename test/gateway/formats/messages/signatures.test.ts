// Reasoning signatures in the Messages format: Anthropic's go out and come back
// byte for byte; another protocol's carry that protocol as a prefix, which the
// decoder reads back into ReasoningPart.signed_by so that the core never sends
// a provider a signature it would refuse.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import type { TrackedBlock } from "../../../../gateway/block-tracker.ts";
import { decodeMessagesRequest } from "../../../../gateway/formats/messages/decode-request.ts";
import { contentBlockOf } from "../../../../gateway/formats/messages/encode-response.ts";
import { BlockStartSchema, BlockType } from "../../../../gen/router/v1/inference_pb.js";

const reasoning = (fields: Partial<TrackedBlock>): TrackedBlock => ({
  start: create(BlockStartSchema, { index: 0, type: BlockType.REASONING }),
  type: BlockType.REASONING,
  ordinal: 0,
  text: "Thinking.",
  signature: "",
  redactedData: "",
  data: [],
  annotations: [],
  stopped: true,
  ...fields,
});

const decodeAssistant = (block: object) =>
  decodeMessagesRequest(
    { model: "p/m", max_tokens: 10, messages: [{ role: "user", content: "Hi" }, { role: "assistant", content: [block] }, { role: "user", content: "Go on" }] },
    { apiKey: "k", requestId: "r", betas: [] },
  ).request.messages[1].content[0].part.value;

describe("Messages reasoning signatures", () => {
  it("hands out Anthropic's signature and sealed data as they are, and another protocol's with its name first", () => {
    expect(contentBlockOf(reasoning({ signature: "EqQBCkYIAxgC" }), { protocol: "anthropic", nativeFormat: true })).toMatchObject({ type: "thinking", signature: "EqQBCkYIAxgC" });
    expect(contentBlockOf(reasoning({ signature: "Z2VtaW5p" }), { protocol: "gemini", nativeFormat: false })).toMatchObject({ type: "thinking", signature: "gemini:Z2VtaW5p" });
    expect(contentBlockOf(reasoning({ redactedData: "SEALED" }), { protocol: "anthropic", nativeFormat: true })).toEqual({ type: "redacted_thinking", data: "SEALED" });
    // No signature: nothing to mark.
    expect(contentBlockOf(reasoning({}), { protocol: "gemini", nativeFormat: false })).toMatchObject({ type: "thinking", signature: "" });
  });

  it("reads the prefix back as the signer, and an unprefixed signature as unknown origin", () => {
    expect(decodeAssistant({ type: "thinking", thinking: "T", signature: "gemini:Z2VtaW5p" })).toMatchObject({ signature: "Z2VtaW5p", signedBy: "gemini" });
    expect(decodeAssistant({ type: "thinking", thinking: "T", signature: "EqQBCkYIAxgC+/=" })).toMatchObject({ signature: "EqQBCkYIAxgC+/=", signedBy: "" });
    expect(decodeAssistant({ type: "redacted_thinking", data: "SEALED" })).toMatchObject({ redactedData: "SEALED", signedBy: "" });
  });
});
