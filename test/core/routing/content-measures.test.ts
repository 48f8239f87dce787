// The hold and the prompt estimate measure a text document, a tool call's
// arguments and an image in a tool result the same whether they travel in the
// form a Messages request now gives them (FilePart.text, ToolCallPart.input,
// ImagePart.data) or in the form they had before (a base64 data URI, JSON
// text, a data URI): the form content travels in changes no amount held or
// estimated.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { estimatePromptTokens } from "../../../core/routing/capabilities.ts";
import { promptBytesOf } from "../../../core/routing/hold.ts";
import { decodeMessagesRequest } from "../../../gateway/formats/messages/decode-request.ts";
import { ContentPartSchema, GenerateRequestSchema, Role, type ContentPart, type GenerateRequest } from "../../../gen/router/v1/inference_pb.js";
import { formerForm, textDataUri } from "../../support/former-content-forms.ts";

/** Texts whose UTF-8 lengths fall on each side of base64's 3-byte groups, with multibyte, escaped and ill-formed characters. */
const TEXTS = [
  "",
  "a",
  "ab",
  "abc",
  "é",
  "日本語",
  "🙂 emoji",
  "naïve café ☕ 𝄞",
  'quotes " and \\ backslashes\nand new lines\t and \u0001 controls',
  "lone \ud800 surrogate",
  "\u2028\u2029 separators",
  "A plain text document. ".repeat(2000),
];

/** Tool inputs as clients write them: JSON.stringify of the parsed object may differ from this text (1.0, -0, big numbers), and the old form measured the former. */
const INPUTS = [
  "{}",
  '{"q":"x"}',
  '{"nested":{"list":[1,2,3],"deep":{"a":"b","empty":{},"none":[]}},"flag":true,"nothing":null}',
  '{"n": 1.0, "exp": 1e21, "small": 1e-7, "neg": -0, "big": 123456789012345678901234567890, "sum": 0.30000000000000004}',
  '{"b":1,"2":2,"a":3,"10":4}',
  '{"text":"é 日本 🙂 \\" \\\\ \\n \\u0001 \\u2028","ключ":"значение"}',
  `{"long":"${"x".repeat(50_000)}"}`,
];

const part = (init: Parameters<typeof create<typeof ContentPartSchema>>[1]) => create(ContentPartSchema, init);

/** A text document in both forms: the text (well-formed, as read-body.ts makes every body), and the base64 data URI the Messages decoder made of it before. */
function documentForms(text: string, filename: string): [ContentPart, ContentPart] {
  const described = { filename, title: "T", context: "C", citations: true };
  return [
    part({ part: { case: "file", value: { ...described, mimeType: "text/plain", text: text.toWellFormed() } } }),
    part({ part: { case: "file", value: { ...described, mimeType: "text/plain", fileData: textDataUri(text) } } }),
  ];
}

/** A tool call in both forms: the parsed object, and the JSON text the Messages decoder made of it before. */
function toolCallForms(inputText: string, id: string): [ContentPart, ContentPart] {
  const input = JSON.parse(inputText) as JsonObject;
  return [
    part({ part: { case: "toolCall", value: { id, name: "lookup", input } } }),
    part({ part: { case: "toolCall", value: { id, name: "lookup", arguments: JSON.stringify(input) } } }),
  ];
}

const inResult = (inner: ContentPart) => part({ part: { case: "toolResult", value: { toolCallId: "t", content: [inner, part({ part: { case: "text", value: { text: "done" } } })] } } });

const requestOf = (content: ContentPart[], padding = "") =>
  create(GenerateRequestSchema, { messages: [{ role: Role.USER, content: [...content, part({ part: { case: "text", value: { text: padding } } })] }] });

/** The measure as hold.ts wrote it before content travelled as data: every part but text, images and reasoning by its serialized size. */
function formerPromptBytes(request: GenerateRequest): number {
  let bytes = Buffer.byteLength(JSON.stringify(request.tools.map((tool) => [tool.name, tool.description, tool.parameters])));
  for (const message of request.messages) {
    bytes += 8;
    for (const { part } of message.content) {
      if (part.case === "text") bytes += Buffer.byteLength(part.value.text);
      else bytes += Math.ceil(Buffer.byteLength(JSON.stringify(part.value ?? "")) / (part.case === "file" ? 4 : 1));
    }
  }
  return bytes;
}

/**
 * Both measures of both forms, at 4 consecutive offsets (filename or padding
 * of 0 to 3 characters): measures rounded up by 4 agree at all 4 only when
 * their exact sizes do.
 */
function expectSameMeasures(forms: (offset: string) => [ContentPart, ContentPart], padded: boolean) {
  for (const offset of ["", "a", "ab", "abc"]) {
    const [asData, asBefore] = forms(padded ? "" : offset);
    const padding = padded ? offset : "";
    const now = requestOf([asData], padding);
    const before = requestOf([asBefore], padding);
    expect(promptBytesOf(now)).toBe(formerPromptBytes(before));
    expect(promptBytesOf(now)).toBe(promptBytesOf(before));
    expect(estimatePromptTokens(now)).toBe(estimatePromptTokens(before));
  }
}

describe("a text document given as text", () => {
  it.each(TEXTS.map((text) => [text.slice(0, 24), text]))("is measured as its data URI was: %j", (_, text) => {
    expectSameMeasures((filename) => documentForms(text, filename), false);
  });

  it.each(TEXTS.map((text) => [text.slice(0, 24), text]))("is measured as its data URI was inside a tool result: %j", (_, text) => {
    expectSameMeasures((filename) => documentForms(text, filename).map(inResult) as [ContentPart, ContentPart], false);
  });
});

/** An image in both forms: as data and type (or a URL), and as the data URI (or URL) it was before ImagePart had data. */
function imageForms(image: { data: string; mimeType: string } | { url: string }, detail: string): [ContentPart, ContentPart] {
  const now = part({ part: { case: "image", value: { ...image, detail } } });
  return [now, formerForm(now)];
}

const IMAGES = [
  { data: "", mimeType: "" },
  { data: "QUJD", mimeType: "image/png" },
  { data: Buffer.alloc(3001, 7).toString("base64"), mimeType: "image/jpeg" },
  { url: "https://example.com/cat.png" },
  { url: "data:image/gif;base64,R0lGOD" },
];

describe("an image in a tool result given as data", () => {
  it.each(IMAGES.map((image) => [JSON.stringify(image).slice(0, 40), image]))("is measured as its data URI was: %s", (_, image) => {
    expectSameMeasures((detail) => imageForms(image, detail).map(inResult) as [ContentPart, ContentPart], false);
  });
});

describe("a tool call's arguments given as an object", () => {
  it.each(INPUTS.map((input) => [input.slice(0, 40), input]))("are measured as their JSON text was: %s", (_, input) => {
    expectSameMeasures(() => toolCallForms(input, "toolu_1"), true);
  });
});

describe("a Messages request decoded with documents and tool calls as data", () => {
  const input = JSON.parse(INPUTS[3]) as JsonObject;
  const body = {
    model: "m",
    max_tokens: 100,
    messages: [
      {
        role: "user",
        content: [
          { type: "document", source: { type: "text", media_type: "text/plain", data: "naïve 🙂" }, title: "Notes" },
          { type: "document", source: { type: "content", content: [{ type: "text", text: "one" }, { type: "text", text: "twö" }] } },
        ],
      },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "lookup", input }] },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: [
              { type: "document", source: { type: "text", media_type: "text/plain", data: "inner" } },
              { type: "image", source: { type: "base64", media_type: "image/png", data: "QUJD" } },
              { type: "image", source: { type: "url", url: "https://example.com/cat.png" } },
            ],
          },
        ],
      },
    ],
  };
  const decoded = decodeMessagesRequest(body, { apiKey: "k", requestId: "r", betas: [] }).request;

  it("carries no data URI and no JSON text", () => {
    const [document, content] = decoded.messages[0].content;
    expect(document.part).toEqual({ case: "file", value: expect.objectContaining({ fileData: "", mimeType: "text/plain", text: "naïve 🙂" }) });
    expect(content.part).toEqual({ case: "file", value: expect.objectContaining({ fileData: "", text: "one\ntwö" }) });
    expect(decoded.messages[1].content[0].part).toEqual({ case: "toolCall", value: expect.objectContaining({ arguments: "", input }) });
  });

  it("holds and estimates what the same request with data URIs and JSON text did", () => {
    const before = create(GenerateRequestSchema, {
      ...decoded,
      messages: decoded.messages.map((message) => ({ ...message, content: message.content.map(formerForm) })),
    });
    expect(JSON.stringify(before)).not.toContain('"text":"one');
    expect(promptBytesOf(decoded)).toBe(formerPromptBytes(before));
    expect(estimatePromptTokens(decoded)).toBe(estimatePromptTokens(before));
  });
});
