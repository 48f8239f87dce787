// The Gemini request body, field by field, and the warnings it comes with of what was left out.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { modelProviderSchema, providerSchema, type ModelProviderConfig, type ProviderConfig } from "../../../../core/config/schema.ts";
import { SIGNATURE_BYPASS } from "../../../../core/providers/gemini/convert-contents.ts";
import { convertRequest as convert } from "../../../../core/providers/gemini/convert-request.ts";
import { UpstreamError, type UpstreamCall } from "../../../../core/providers/types.ts";
import {
  ContentPartSchema,
  GenerateRequestSchema,
  ResponseFormat_Type,
  Role,
  ToolChoice_Mode,
} from "../../../../gen/router/v1/inference_pb.js";

type RequestInit = MessageInitShape<typeof GenerateRequestSchema>;

/** The body the converter builds, and the words of the warnings it returns with it. */
const convertRequest = (upstreamCall: UpstreamCall) => convert(upstreamCall).body;
const warningsOf = (upstreamCall: UpstreamCall) => convert(upstreamCall).warnings.map((w) => w.message);
type PartInit = MessageInitShape<typeof ContentPartSchema>;

// Parsed, so the schema's defaults fill whatever this test does not care about.
const provider: ProviderConfig = providerSchema.parse({
  id: "google",
  label: "Google",
  protocol: "gemini",
  base_url: "https://generativelanguage.googleapis.com/v1beta",
});

function call(request: RequestInit, route: Partial<ModelProviderConfig> = {}): UpstreamCall {
  return {
    request: create(GenerateRequestSchema, request),
    provider,
    route: modelProviderSchema.parse({
      provider: "google",
      provider_model_id: "gemini-2.5-flash",
      pricing: { prompt: "0", completion: "0" },
      ...route,
    }),
    apiKey: "key",
    stream: false,
    maxCompletionTokens: 8192,
    signal: new AbortController().signal,
  };
}

const text = (value: string): PartInit => ({ part: { case: "text", value: { text: value } } });
const user = (...content: PartInit[]) => ({ role: Role.USER, content });
const assistant = (...content: PartInit[]) => ({ role: Role.ASSISTANT, content });
const toolCall = (id: string, name: string, args: string): PartInit => ({ part: { case: "toolCall", value: { id, name, arguments: args } } });
const toolResult = (toolCallId: string, content: PartInit[], isError = false) => ({
  role: Role.TOOL,
  content: [{ part: { case: "toolResult" as const, value: { toolCallId, content, isError } } }],
});
const reasoning = (value: string, signature = ""): PartInit => ({ part: { case: "reasoning", value: { text: value, signature } } });
const hi = user(text("Hi"));

describe("convertRequest", () => {
  it.each<[string, RequestInit, Partial<ModelProviderConfig>, Record<string, unknown>]>([
    ["a plain user turn", { messages: [hi] }, {}, { contents: [{ role: "user", parts: [{ text: "Hi" }] }] }],
    [
      "system and developer messages as the systemInstruction; same-role turns merged",
      {
        messages: [
          { role: Role.SYSTEM, content: [text("Be brief.")] },
          { role: Role.DEVELOPER, content: [text("Use French.")] },
          user(text("Hi")),
          user(text("there")),
          assistant(text("Bonjour")),
        ],
      },
      {},
      {
        systemInstruction: { parts: [{ text: "Be brief." }, { text: "Use French." }] },
        contents: [
          { role: "user", parts: [{ text: "Hi" }, { text: "there" }] },
          { role: "model", parts: [{ text: "Bonjour" }] },
        ],
      },
    ],
    [
      "images, audio and files: data URIs inline, web URLs as fileData",
      {
        messages: [
          user(
            { part: { case: "image", value: { url: "data:image/png;base64,iVBORw0K" } } },
            { part: { case: "image", value: { url: "https://example.com/cat.jpg" } } },
            { part: { case: "image", value: { url: "https://example.com/render?id=4" } } },
            { part: { case: "audio", value: { data: "UklGRg==", format: "wav" } } },
            { part: { case: "audio", value: { data: "SUQz", format: "mp3" } } },
            { part: { case: "file", value: { filename: "a.pdf", fileData: "data:application/pdf;base64,JVBERi0=" } } },
            { part: { case: "file", value: { filename: "notes.txt", fileData: "aGVsbG8=" } } },
            { part: { case: "file", value: { fileId: "https://generativelanguage.googleapis.com/v1beta/files/abc", mimeType: "video/mp4" } } },
          ),
        ],
      },
      {},
      {
        contents: [
          {
            role: "user",
            parts: [
              { inlineData: { mimeType: "image/png", data: "iVBORw0K" } },
              { fileData: { mimeType: "image/jpeg", fileUri: "https://example.com/cat.jpg" } },
              { fileData: { fileUri: "https://example.com/render?id=4" } },
              { inlineData: { mimeType: "audio/wav", data: "UklGRg==" } },
              { inlineData: { mimeType: "audio/mp3", data: "SUQz" } },
              { inlineData: { mimeType: "application/pdf", data: "JVBERi0=" } },
              { inlineData: { mimeType: "text/plain", data: "aGVsbG8=" } },
              { fileData: { mimeType: "video/mp4", fileUri: "https://generativelanguage.googleapis.com/v1beta/files/abc" } },
            ],
          },
        ],
      },
    ],
    [
      "tool calls and their results, named from the call; parallel results in one turn",
      {
        messages: [
          hi,
          assistant(text("Checking."), toolCall("call_1", "weather", '{"city":"Paris"}'), toolCall("call_2", "time", "")),
          toolResult("call_1", [text('{"temp":21}')]),
          toolResult("call_2", [text("12:00")]),
          toolResult("call_1", [text("boom")], true),
        ],
        tools: [{ name: "weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } }, { name: "time" }],
      },
      {},
      {
        contents: [
          { role: "user", parts: [{ text: "Hi" }] },
          {
            role: "model",
            parts: [
              { text: "Checking." },
              { functionCall: { name: "weather", args: { city: "Paris" } }, thoughtSignature: SIGNATURE_BYPASS },
              { functionCall: { name: "time", args: {} } },
            ],
          },
          {
            role: "user",
            parts: [
              { functionResponse: { name: "weather", response: { temp: 21 } } },
              { functionResponse: { name: "time", response: { output: "12:00" } } },
              { functionResponse: { name: "weather", response: { error: "boom" } } },
            ],
          },
        ],
        tools: [
          {
            functionDeclarations: [
              { name: "weather", description: "Weather", parametersJsonSchema: { type: "object", properties: { city: { type: "string" } } } },
              { name: "time" },
            ],
          },
        ],
      },
    ],
    [
      "thought signatures back on the part they came with; reasoning text left out",
      {
        messages: [
          hi,
          assistant(reasoning("Let me think.", "c2lnLTE="), text("Sunny."), reasoning("", "c2lnLTI=")),
          user(text("And tomorrow?")),
          assistant(reasoning("", "c2lnLTM="), toolCall("call_1", "weather", "{}"), toolCall("call_2", "weather", '{"day":2}')),
          toolResult("call_1", [text("rain")]),
          toolResult("call_2", [text("snow")]),
          assistant(reasoning("thinking", "msg_not-base64!"), toolCall("call_9", "weather", "{}")),
          toolResult("call_9", [text("hail")]),
        ],
      },
      {},
      {
        contents: [
          { role: "user", parts: [{ text: "Hi" }] },
          { role: "model", parts: [{ text: "Sunny.", thoughtSignature: "c2lnLTE=" }] },
          { role: "user", parts: [{ text: "And tomorrow?" }] },
          {
            role: "model",
            parts: [
              { functionCall: { name: "weather", args: {} }, thoughtSignature: "c2lnLTM=" },
              { functionCall: { name: "weather", args: { day: 2 } } },
            ],
          },
          {
            role: "user",
            parts: [
              { functionResponse: { name: "weather", response: { output: "rain" } } },
              { functionResponse: { name: "weather", response: { output: "snow" } } },
            ],
          },
          { role: "model", parts: [{ functionCall: { name: "weather", args: {} }, thoughtSignature: SIGNATURE_BYPASS }] },
          { role: "user", parts: [{ functionResponse: { name: "weather", response: { output: "hail" } } }] },
        ],
      },
    ],
    ...([
      ["auto", ToolChoice_Mode.AUTO, { mode: "AUTO" }],
      ["none", ToolChoice_Mode.NONE, { mode: "NONE" }],
      ["required", ToolChoice_Mode.REQUIRED, { mode: "ANY" }],
    ] as const).map(([label, mode, functionCallingConfig]): [string, RequestInit, Partial<ModelProviderConfig>, Record<string, unknown>] => [
      `tool choice: ${label} becomes ${functionCallingConfig.mode}`,
      { messages: [hi], tools: [{ name: "weather" }], toolChoice: { mode } },
      {},
      {
        contents: [{ role: "user", parts: [{ text: "Hi" }] }],
        tools: [{ functionDeclarations: [{ name: "weather" }] }],
        toolConfig: { functionCallingConfig },
      },
    ]),
    [
      "no tool choice given: no toolConfig",
      { messages: [hi], tools: [{ name: "weather" }] },
      {},
      { contents: [{ role: "user", parts: [{ text: "Hi" }] }], tools: [{ functionDeclarations: [{ name: "weather" }] }] },
    ],
    [
      "tool choice: named becomes ANY with allowedFunctionNames",
      { messages: [hi], tools: [{ name: "weather" }], toolChoice: { mode: ToolChoice_Mode.NAMED, name: "weather" } },
      {},
      {
        contents: [{ role: "user", parts: [{ text: "Hi" }] }],
        tools: [{ functionDeclarations: [{ name: "weather" }] }],
        toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["weather"] } },
      },
    ],
    [
      "sampling into generationConfig (no maxOutputTokens unless asked)",
      {
        messages: [hi],
        sampling: { temperature: 0.5, topP: 0.9, topK: 40, presencePenalty: 0.1, frequencyPenalty: 0.2, seed: 7n, stop: ["END"], repetitionPenalty: 1.1 },
      },
      {},
      {
        contents: [{ role: "user", parts: [{ text: "Hi" }] }],
        generationConfig: { temperature: 0.5, topP: 0.9, topK: 40, presencePenalty: 0.1, frequencyPenalty: 0.2, seed: 7, stopSequences: ["END"] },
      },
    ],
    [
      "json_schema as responseJsonSchema",
      {
        messages: [hi],
        sampling: { maxTokens: 100 },
        responseFormat: { type: ResponseFormat_Type.JSON_SCHEMA, name: "answer", schema: { type: "object", $defs: { a: { type: "string" } }, properties: { a: { $ref: "#/$defs/a" } } } },
      },
      {},
      {
        contents: [{ role: "user", parts: [{ text: "Hi" }] }],
        generationConfig: {
          maxOutputTokens: 100,
          responseMimeType: "application/json",
          responseJsonSchema: { type: "object", $defs: { a: { type: "string" } }, properties: { a: { $ref: "#/$defs/a" } } },
        },
      },
    ],
    [
      "json_object as the MIME type alone",
      { messages: [hi], responseFormat: { type: ResponseFormat_Type.JSON_OBJECT } },
      {},
      { contents: [{ role: "user", parts: [{ text: "Hi" }] }], generationConfig: { responseMimeType: "application/json" } },
    ],
    [
      "a reasoning budget (Gemini 2.5)",
      { messages: [hi], reasoning: { maxTokens: 2048, enabled: true } },
      {},
      { contents: [{ role: "user", parts: [{ text: "Hi" }] }], generationConfig: { thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } } },
    ],
    [
      "an effort through the route's map (Gemini 3)",
      { messages: [hi], reasoning: { effort: "low" } },
      { provider_model_id: "gemini-3-pro-preview", reasoning_effort_map: { low: "low", high: "high" } },
      { contents: [{ role: "user", parts: [{ text: "Hi" }] }], generationConfig: { thinkingConfig: { thinkingLevel: "low", includeThoughts: true } } },
    ],
    [
      "thinking off: budget 0",
      { messages: [hi], reasoning: { enabled: false } },
      {},
      { contents: [{ role: "user", parts: [{ text: "Hi" }] }], generationConfig: { thinkingConfig: { thinkingBudget: 0 } } },
    ],
    [
      "thinking off on 2.5 Pro, which always thinks: its lowest budget",
      { messages: [hi], reasoning: { enabled: false } },
      { provider_model_id: "gemini-2.5-pro" },
      { contents: [{ role: "user", parts: [{ text: "Hi" }] }], generationConfig: { thinkingConfig: { thinkingBudget: 128 } } },
    ],
    [
      "an aspect ratio asks image models for images",
      { messages: [hi], media: { aspectRatio: "16:9" } },
      {},
      {
        contents: [{ role: "user", parts: [{ text: "Hi" }] }],
        generationConfig: { responseModalities: ["TEXT", "IMAGE"], imageConfig: { aspectRatio: "16:9" } },
      },
    ],
  ])("%s", (_name, request, route, expected) => {
    expect(convertRequest(call(request, route))).toEqual(expected);
  });

  it("sends none of the router's own fields", () => {
    const body = convertRequest(
      call({ messages: [hi], model: "google/gemini", models: ["x/y"], requestTags: ["t"], requestId: "r1", stream: true, cache: { cacheKey: "k" } }),
    );
    expect(Object.keys(body)).toEqual(["contents"]);
  });

  it("refuses a tool result that answers no tool call, for every provider alike", () => {
    const convert = () => convertRequest(call({ messages: [hi, toolResult("call_404", [text("x")])] }));
    expect(convert).toThrow(UpstreamError);
    expect(convert).toThrow(expect.objectContaining({ retryable: false }));
  });
});

describe("warnings", () => {
  it("are typed: a budget brought into range is adjusted_parameter on reasoning, a field without a place unsupported_parameter", () => {
    const { warnings } = convert(call({ messages: [hi], sampling: { repetitionPenalty: 1.1 }, reasoning: { maxTokens: 40000 } }, { provider_model_id: "gemini-2.5-flash" }));
    expect(warnings.map((w) => [w.code, w.param])).toEqual([
      ["unsupported_parameter", "repetition_penalty"],
      ["adjusted_parameter", "reasoning"],
    ]);
  });

  it("is quiet when everything is carried", () => {
    expect(warningsOf(call({ messages: [hi], sampling: { temperature: 1, seed: 1n } }))).toEqual([]);
  });

  it("about content are made afresh per request: changing one leaves the next request's alone", () => {
    const named = () => call({ messages: [{ role: Role.USER, name: "ann", content: [text("Hi")] }] });
    const first = convert(named()).warnings;
    first[0]!.message = "changed";
    const second = convert(named()).warnings;
    expect(second[0]).not.toBe(first[0]);
    expect(second.map((w) => w.message)).toEqual(["message author names are not supported by the Gemini protocol and were ignored"]);
  });

  it("names each field the protocol cannot carry", () => {
    const cached = (part: PartInit): PartInit => ({ ...part, cacheControl: { type: "ephemeral" } }) as PartInit;
    const warnings = warningsOf(
      call(
        {
          messages: [
            { role: Role.SYSTEM, content: [{ part: { case: "image", value: { url: "data:image/png;base64,AA==" } } }] },
            { role: Role.USER, name: "ann", content: [cached(text("Hi")), { part: { case: "image", value: { url: "ftp://x/y.png", detail: "high" } } }] },
            assistant(reasoning("I thought", "c2ln"), text("Hello")),
          ],
          sampling: { repetitionPenalty: 1.2 },
          tools: [{ name: "weather", strict: true }],
          parallelToolCalls: false,
          media: { audioPrompt: "calm", durationSeconds: 5, aspectRatio: "1:1" },
          reasoning: { enabled: false },
        },
        { provider_model_id: "gemini-2.5-pro" },
      ),
    );
    expect(warnings).toEqual([
      "repetition_penalty is not supported by the Gemini protocol and was ignored",
      "strict tool schemas are not supported by the Gemini protocol and were ignored",
      "parallel_tool_calls: false is not supported by the Gemini protocol and was ignored",
      "reasoning cannot be turned off on gemini-2.5-pro; its lowest thinking budget (128) was used",
      "message author names are not supported by the Gemini protocol and were ignored",
      "non-text content of system messages is not supported by the Gemini protocol and was left out",
      "Gemini takes no reasoning as input: earlier reasoning text was left out (its thought signatures were kept)",
      "image detail is not supported by the Gemini protocol and was ignored",
      "images must be data URIs or http(s)/gs URLs for the Gemini protocol; others were left out",
    ]);
  });

  it("provider options: safety_settings as generateContent's safetySettings, as given; a value that is no list is not sent", () => {
    const safety = [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_ONLY_HIGH" }];
    expect(convertRequest(call({ messages: [hi], providerOptions: { gemini: { safety_settings: safety } } })).safetySettings).toEqual(safety);
    expect(convertRequest(call({ messages: [hi], providerOptions: { gemini: { safety_settings: "BLOCK_NONE" } } }))).not.toHaveProperty("safetySettings");
    expect(convertRequest(call({ messages: [hi], providerOptions: { "gemini-interactions": { safety_settings: safety } } }))).not.toHaveProperty("safetySettings");
  });
});
