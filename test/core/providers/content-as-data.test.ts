// Content passed on as data: a Messages base64 image reaches the core as its
// base64 and media type (ImagePart.data, mime_type), not as a data URI, and
// each protocol takes it in its own form: Anthropic and Gemini as the same
// base64, OpenAI-compatible as a data URI made of it.
import { create, type JsonValue } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { modelProviderSchema, providerSchema } from "../../../core/config/schema.ts";
import { convertRequest as toAnthropic } from "../../../core/providers/anthropic/convert-request.ts";
import { convertRequest as toGemini } from "../../../core/providers/gemini/convert-request.ts";
import { convertRequest as toOpenAi } from "../../../core/providers/openai-compatible/convert-request.ts";
import type { UpstreamCall } from "../../../core/providers/types.ts";
import { decodeMessagesRequest } from "../../../gateway/formats/messages/decode-request.ts";
import { ContentPartSchema, GenerateRequestSchema, type GenerateRequest } from "../../../gen/router/v1/inference_pb.js";

const PNG = Buffer.from("not really a png").toString("base64");

const decoded = decodeMessagesRequest(
  {
    model: "m",
    max_tokens: 100,
    messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }, { type: "text", text: "What is it?" }] }],
  },
  { apiKey: "k", requestId: "req_1", betas: [] },
).request;

function call(protocol: string, request: GenerateRequest): UpstreamCall {
  return {
    request,
    provider: providerSchema.parse({ id: "p", label: "P", protocol, base_url: "https://upstream.example/v1" }),
    route: modelProviderSchema.parse({ provider: "p", provider_model_id: "m", pricing: { prompt: "0", completion: "0" } }),
    apiKey: "key",
    stream: false,
    maxCompletionTokens: 1000,
    signal: new AbortController().signal,
  };
}

/** The value at a path of a JSON body. */
const at = (body: JsonValue, ...path: (string | number)[]): JsonValue => path.reduce<JsonValue>((value, key) => (value as Record<string | number, JsonValue>)[key], body);

describe("an image given as data", () => {
  it("is decoded from a Messages base64 source as data and media type, with no data URI", () => {
    const [image] = decoded.messages[0].content;
    expect(image.part).toEqual({ case: "image", value: expect.objectContaining({ url: "", data: PNG, mimeType: "image/png" }) });
  });

  it("reaches Anthropic and Gemini as the same base64, and OpenAI-compatible as a data URI", () => {
    expect(at(toAnthropic(call("anthropic", decoded)).body, "messages", 0, "content", 0)).toEqual({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: PNG },
    });
    expect(at(toGemini(call("gemini", decoded)).body, "contents", 0, "parts", 0)).toEqual({ inlineData: { mimeType: "image/png", data: PNG } });
    expect(at(toOpenAi(call("openai-compatible", decoded)).body, "messages", 0, "content", 0)).toEqual({
      type: "image_url",
      image_url: { url: `data:image/png;base64,${PNG}` },
    });
  });

  it("is the same on every protocol as the data URI a chat request sends", () => {
    const asUri = create(GenerateRequestSchema, {
      ...decoded,
      messages: [{ ...decoded.messages[0], content: [create(ContentPartSchema, { part: { case: "image", value: { url: `data:image/png;base64,${PNG}` } } }), decoded.messages[0].content[1]] }],
    });
    for (const [protocol, convert] of [
      ["anthropic", toAnthropic],
      ["gemini", toGemini],
      ["openai-compatible", toOpenAi],
    ] as const) {
      expect(convert(call(protocol, decoded)).body).toEqual(convert(call(protocol, asUri)).body);
    }
  });
});
