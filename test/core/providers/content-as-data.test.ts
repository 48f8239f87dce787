// Content passed on as data: a Messages base64 image reaches the core as its
// base64 and media type (ImagePart.data, mime_type), not as a data URI, and
// each protocol takes it in its own form: Anthropic and Gemini as the same
// base64, OpenAI-compatible as a data URI made of it. A text document travels
// as its text (FilePart.text) and a tool_use input as its object
// (ToolCallPart.input), sent on as the same bytes as before.
import { create, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { modelProviderSchema, providerSchema } from "../../../core/config/schema.ts";
import { estimateInputTokens } from "../../../core/count-tokens/estimate.ts";
import { convertRequest as toAnthropic } from "../../../core/providers/anthropic/convert-request.ts";
import { convertRequest as toGemini } from "../../../core/providers/gemini/convert-request.ts";
import { convertRequest as toOpenAi } from "../../../core/providers/openai-compatible/convert-request.ts";
import type { UpstreamCall } from "../../../core/providers/types.ts";
import { decodeMessagesRequest } from "../../../gateway/formats/messages/decode-request.ts";
import { ContentPartSchema, GenerateRequestSchema, type GenerateRequest } from "../../../gen/router/v1/inference_pb.js";
import { formerForm, textDataUri } from "../../support/former-content-forms.ts";

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

describe("text documents and tool_use input given as data", () => {
  const input = JSON.parse('{"q": "é 🙂", "n": 1.0, "neg": -0, "big": 12345678901234567890, "nested": {"list": [1, 2, 3], "deep": {}}}') as JsonObject;
  const documentText = "naïve 🙂 text";
  const request = decodeMessagesRequest(
    {
      model: "m",
      max_tokens: 100,
      messages: [
        {
          role: "user",
          content: [
            { type: "document", source: { type: "text", media_type: "text/plain", data: documentText }, title: "Notes", citations: { enabled: true } },
            { type: "document", source: { type: "content", content: [{ type: "text", text: "one" }, { type: "text", text: "twö" }] } },
            { type: "document", source: { type: "text", media_type: "text/plain", data: "" } },
            { type: "text", text: "Read them" },
          ],
        },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "lookup", input }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: "inner" } }] }] },
      ],
    },
    { apiKey: "k", requestId: "req_2", betas: [] },
  ).request;
  const former = create(GenerateRequestSchema, { ...request, messages: request.messages.map((message) => ({ ...message, content: message.content.map(formerForm) })) });

  it("are decoded as text and an object, with no data URI and no JSON text", () => {
    const [document] = request.messages[0].content;
    expect(document.part).toEqual({ case: "file", value: expect.objectContaining({ fileData: "", mimeType: "text/plain", text: documentText }) });
    expect(request.messages[1].content[0].part).toEqual({ case: "toolCall", value: expect.objectContaining({ arguments: "", input }) });
    expect(JSON.stringify(request)).not.toContain("data:text/plain");
  });

  it("reach Anthropic as the text and the object the request gave", () => {
    const body = toAnthropic(call("anthropic", request)).body;
    expect(at(body, "messages", 0, "content", 0)).toEqual({
      type: "document",
      source: { type: "text", media_type: "text/plain", data: documentText },
      title: "Notes",
      citations: { enabled: true },
    });
    const { part } = request.messages[1].content[0];
    // The decoded object itself: not stringified and parsed again.
    expect(at(body, "messages", 1, "content", 0, "input")).toBe(part.case === "toolCall" && part.value.input);
  });

  it("reach OpenAI-compatible as the same data URI and JSON text as before", () => {
    const body = toOpenAi(call("openai-compatible", request)).body;
    expect(at(body, "messages", 0, "content", 0)).toEqual({ type: "file", file: { file_data: textDataUri(documentText) } });
    expect(at(body, "messages", 1, "tool_calls", 0, "function", "arguments")).toBe(JSON.stringify(input));
  });

  it("make the same bytes on every protocol, and the same token estimate, as the data URI and JSON text they travelled as before", async () => {
    for (const [protocol, convert] of [
      ["anthropic", toAnthropic],
      ["gemini", toGemini],
      ["openai-compatible", toOpenAi],
    ] as const) {
      expect(JSON.stringify(convert(call(protocol, request)).body)).toBe(JSON.stringify(convert(call(protocol, former)).body));
    }
    const route = { media: { image: 85, audio: 100, file: 1000 } };
    expect(await estimateInputTokens(request, route)).toBe(await estimateInputTokens(former, route));
  });
});
