// The Interactions request body, field by field, and the warnings it comes with of what was left out.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { modelProviderSchema, providerSchema, type ModelProviderConfig, type ProviderConfig } from "../../../../core/config/schema.ts";
import { convertRequest as convert } from "../../../../core/providers/gemini-interactions/convert-request.ts";
import type { UpstreamCall } from "../../../../core/providers/types.ts";
import { ContentPartSchema, GenerateRequestSchema, ResponseFormat_Type, Role, ToolChoice_Mode } from "../../../../gen/router/v1/inference_pb.js";

type RequestInit = MessageInitShape<typeof GenerateRequestSchema>;
type PartInit = MessageInitShape<typeof ContentPartSchema>;

const provider: ProviderConfig = providerSchema.parse({
  id: "google",
  label: "Google",
  protocol: "gemini-interactions",
  base_url: "https://generativelanguage.googleapis.com/v1beta",
});

function call(request: RequestInit, route: Partial<ModelProviderConfig> = {}): UpstreamCall {
  return {
    request: create(GenerateRequestSchema, request),
    provider,
    route: modelProviderSchema.parse({ provider: "google", provider_model_id: "gemini-3-flash-preview", pricing: { prompt: "0", completion: "0" }, ...route }),
    apiKey: "key",
    stream: false,
    maxCompletionTokens: 8192,
    signal: new AbortController().signal,
  };
}

const bodyOf = (request: RequestInit, route: Partial<ModelProviderConfig> = {}) => convert(call(request, route)).body;
const warningsOf = (request: RequestInit, route: Partial<ModelProviderConfig> = {}) => convert(call(request, route)).warnings.map((w) => `${w.code} ${w.param}: ${w.message}`);

const text = (value: string): PartInit => ({ part: { case: "text", value: { text: value } } });
const user = (...content: PartInit[]) => ({ role: Role.USER, content });
const assistant = (...content: PartInit[]) => ({ role: Role.ASSISTANT, content });
const toolCall = (id: string, name: string, args: string): PartInit => ({ part: { case: "toolCall", value: { id, name, arguments: args } } });
const toolResult = (toolCallId: string, content: PartInit[], isError = false) => ({
  role: Role.TOOL,
  content: [{ part: { case: "toolResult" as const, value: { toolCallId, content, isError } } }],
});
const reasoning = (value: string, signature: string, signedBy = ""): PartInit => ({ part: { case: "reasoning", value: { text: value, signature, signedBy } } });
const hi = user(text("Hi"));
const HI_STEP = { type: "user_input", content: [{ type: "text", text: "Hi" }] };
const LEVELS = { none: "minimal", minimal: "minimal", low: "low", medium: "medium", high: "high" };

describe("the body", () => {
  it("names the model without Google's models/ prefix, asks for a stream and stores nothing upstream", () => {
    expect(bodyOf({ messages: [hi] }, { provider_model_id: "models/gemini-3-flash-preview" })).toEqual({ model: "gemini-3-flash-preview", input: [HI_STEP], stream: true, store: false });
  });

  it("system and developer texts are the system instruction; consecutive user messages one user_input step", () => {
    const body = bodyOf({
      messages: [{ role: Role.SYSTEM, content: [text("Be brief.")] }, { role: Role.DEVELOPER, content: [text("Use French.")] }, user(text("Hi")), user(text("there")), assistant(text("Bonjour"))],
    });
    expect(body.system_instruction).toBe("Be brief.\n\nUse French.");
    expect(body.input).toEqual([
      { type: "user_input", content: [{ type: "text", text: "Hi" }, { type: "text", text: "there" }] },
      { type: "model_output", content: [{ type: "text", text: "Bonjour" }] },
    ]);
  });

  it("images, audio and files as Interactions content: data inline, web and Cloud Storage URLs as uri, a file by its type", () => {
    const body = bodyOf({
      messages: [
        user(
          { part: { case: "image", value: { url: "data:image/png;base64,iVBORw0K", detail: "low" } } },
          { part: { case: "image", value: { data: "R0lGOD", mimeType: "image/gif", detail: "auto" } } },
          { part: { case: "image", value: { url: "https://example.com/cat.jpg", detail: "high" } } },
          { part: { case: "audio", value: { data: "SUQz", format: "mp3" } } },
          { part: { case: "file", value: { filename: "a.pdf", fileData: "data:application/pdf;base64,JVBERi0=" } } },
          { part: { case: "file", value: { fileData: "JVBERi0=" } } },
          { part: { case: "file", value: { fileId: "https://generativelanguage.googleapis.com/v1beta/files/abc", mimeType: "video/mp4" } } },
          { part: { case: "file", value: { url: "gs://bucket/scan.png" } } },
        ),
      ],
    });
    expect(body.input).toEqual([
      {
        type: "user_input",
        content: [
          { type: "image", data: "iVBORw0K", mime_type: "image/png", resolution: "low" },
          { type: "image", data: "R0lGOD", mime_type: "image/gif" },
          { type: "image", uri: "https://example.com/cat.jpg", mime_type: "image/jpeg", resolution: "high" },
          { type: "audio", data: "SUQz", mime_type: "audio/mp3" },
          { type: "document", data: "JVBERi0=", mime_type: "application/pdf" },
          // Bare base64 without a type: the chat formats' files are PDFs.
          { type: "document", data: "JVBERi0=", mime_type: "application/pdf" },
          { type: "video", uri: "https://generativelanguage.googleapis.com/v1beta/files/abc", mime_type: "video/mp4" },
          { type: "image", uri: "gs://bucket/scan.png", mime_type: "image/png" },
        ],
      },
    ]);
  });

  it("an image URL Google cannot fetch is left out, with a warning", () => {
    const request = { messages: [user(text("Look"), { part: { case: "image", value: { url: "ftp://example.com/a.png" } } })] } as RequestInit;
    expect(bodyOf(request).input).toEqual([{ type: "user_input", content: [{ type: "text", text: "Look" }] }]);
    expect(warningsOf(request)).toEqual(["unsupported_parameter messages: images must be data URIs or http(s)/gs URLs for the Gemini Interactions protocol; others were left out"]);
  });

  it("an assistant turn as its steps in order: its own thought with signature and summary, output, calls; results named from their call", () => {
    const body = bodyOf({
      messages: [
        hi,
        assistant(reasoning("Check both.", "c2lnLTE=", "gemini-interactions"), text("Checking."), toolCall("fc_1", "weather", '{"city":"Paris"}'), toolCall("fc_2", "time", "")),
        toolResult("fc_1", [text('{"temp":21}')]),
        toolResult("fc_2", [text("12:00")], true),
      ],
      tools: [{ name: "weather" }, { name: "time" }],
    });
    expect(body.input).toEqual([
      HI_STEP,
      { type: "thought", signature: "c2lnLTE=", summary: [{ type: "text", text: "Check both." }] },
      { type: "model_output", content: [{ type: "text", text: "Checking." }] },
      { type: "function_call", id: "fc_1", name: "weather", arguments: { city: "Paris" } },
      { type: "function_call", id: "fc_2", name: "time", arguments: {} },
      { type: "function_result", call_id: "fc_1", name: "weather", result: '{"temp":21}' },
      { type: "function_result", call_id: "fc_2", name: "time", result: "12:00", is_error: true },
    ]);
  });

  it("a tool result holding media is sent as content; arguments given as an object go as they are, text that is no object under `arguments`", () => {
    const image: PartInit = { part: { case: "image", value: { data: "iVBORw0K", mimeType: "image/png" } } };
    const body = bodyOf({
      messages: [
        hi,
        assistant(
          { part: { case: "toolCall", value: { id: "toolu_1", name: "shot", input: { zoom: 2 } } } },
          toolCall("toolu_2", "echo", "not json"),
        ),
        toolResult("toolu_1", [text("Here:"), image]),
        toolResult("toolu_2", [text("ok")]),
      ],
    });
    expect(body.input).toEqual([
      HI_STEP,
      // Another model's calls carry no signature: Google's stand-in goes first.
      { type: "thought", signature: "skip_thought_signature_validator" },
      { type: "function_call", id: "toolu_1", name: "shot", arguments: { zoom: 2 } },
      { type: "function_call", id: "toolu_2", name: "echo", arguments: { arguments: "not json" } },
      { type: "function_result", call_id: "toolu_1", name: "shot", result: [{ type: "text", text: "Here:" }, { type: "image", data: "iVBORw0K", mime_type: "image/png" }] },
      { type: "function_result", call_id: "toolu_2", name: "echo", result: "ok" },
    ]);
  });

  it("reasoning another protocol signed, or without a signature, is left out (a call after it gets the stand-in), with one warning", () => {
    const request = {
      messages: [
        hi,
        assistant(reasoning("Claude's thought", "EqQBCgIYAhIM", "anthropic"), reasoning("Gemini's", "c2ln", "gemini"), reasoning("No signature", ""), toolCall("c1", "f", "{}")),
        toolResult("c1", [text("done")]),
        assistant(reasoning("Unclaimed, base64", "dW5jbGFpbWVk"), text("Done.")),
      ],
    };
    expect(bodyOf(request).input).toEqual([
      HI_STEP,
      { type: "thought", signature: "skip_thought_signature_validator" },
      { type: "function_call", id: "c1", name: "f", arguments: {} },
      { type: "function_result", call_id: "c1", name: "f", result: "done" },
      // A signature a client sent back without saying whose, in Google's form, is taken as this protocol's.
      { type: "thought", signature: "dW5jbGFpbWVk", summary: [{ type: "text", text: "Unclaimed, base64" }] },
      { type: "model_output", content: [{ type: "text", text: "Done." }] },
    ]);
    expect(warningsOf(request)).toEqual([
      "adjusted_parameter messages: earlier reasoning without a Gemini Interactions signature (another provider's, or none) was left out: the model takes back only its own thoughts",
    ]);
  });

  it("function tools with their JSON Schema; strict schemas and parallel_tool_calls: false are said not carried", () => {
    const parameters = { type: "object", properties: { city: { type: "string" } }, additionalProperties: false };
    const request = { messages: [hi], tools: [{ name: "weather", description: "Weather", parameters, strict: true }, { name: "time" }], parallelToolCalls: false };
    expect(bodyOf(request).tools).toEqual([{ type: "function", name: "weather", description: "Weather", parameters }, { type: "function", name: "time" }]);
    expect(warningsOf(request)).toEqual([
      "unsupported_parameter tools: strict tool schemas are not supported by the Gemini Interactions protocol and were ignored",
      "unsupported_parameter parallel_tool_calls: parallel_tool_calls: false is not supported by the Gemini Interactions protocol and was ignored",
    ]);
  });

  it.each([
    [ToolChoice_Mode.AUTO, "", "auto"],
    [ToolChoice_Mode.NONE, "", "none"],
    [ToolChoice_Mode.REQUIRED, "", "any"],
    [ToolChoice_Mode.NAMED, "weather", { allowed_tools: { mode: "any", tools: ["weather"] } }],
  ])("tool_choice %s is generation_config.tool_choice %j", (mode, name, expected) => {
    expect(bodyOf({ messages: [hi], tools: [{ name: "weather" }], toolChoice: { mode, name } }).generation_config).toEqual({ tool_choice: expected });
  });

  it("sampling in generation_config; top_k and the penalties are said not carried", () => {
    const request = {
      messages: [hi],
      sampling: { temperature: 0.5, topP: 0.9, maxTokens: 50, seed: 7n, stop: ["END"], topK: 40, presencePenalty: 0.1, frequencyPenalty: 0.2, repetitionPenalty: 1.1 },
    };
    expect(bodyOf(request).generation_config).toEqual({ temperature: 0.5, top_p: 0.9, max_output_tokens: 50, seed: 7, stop_sequences: ["END"] });
    expect(warningsOf(request).map((w) => w.split(":")[0])).toEqual([
      "unsupported_parameter top_k",
      "unsupported_parameter presence_penalty",
      "unsupported_parameter frequency_penalty",
      "unsupported_parameter repetition_penalty",
    ]);
  });

  it.each<[string, RequestInit["reasoning"], Partial<ModelProviderConfig>, Record<string, unknown>]>([
    ["an effort at the route's level, with summaries", { effort: "medium" }, { reasoning_effort_map: LEVELS }, { thinking_level: "medium", thinking_summaries: "auto" }],
    ["turned off: the route's level for none, no summaries", { effort: "none", enabled: false }, { reasoning_effort_map: LEVELS }, { thinking_level: "minimal", thinking_summaries: "none" }],
    ["no map: the model's own level, with summaries", { effort: "high" }, {}, { thinking_summaries: "auto" }],
  ])("reasoning: %s", (_, reasoningOptions, route, expected) => {
    expect(bodyOf({ messages: [hi], reasoning: reasoningOptions }, route).generation_config).toEqual(expected);
  });

  it.each<[string, RequestInit["responseFormat"], unknown]>([
    ["json_schema: JSON text with its schema", { type: ResponseFormat_Type.JSON_SCHEMA, name: "a", schema: { type: "object" } }, { type: "text", mime_type: "application/json", schema: { type: "object" } }],
    ["json_object: JSON text", { type: ResponseFormat_Type.JSON_OBJECT }, { type: "text", mime_type: "application/json" }],
    ["text: nothing to say", { type: ResponseFormat_Type.TEXT }, undefined],
  ])("response_format %s", (_, responseFormat, expected) => {
    expect(bodyOf({ messages: [hi], responseFormat }).response_format).toEqual(expected);
  });

  it("an image model's aspect ratio: an image format beside the JSON text", () => {
    const body = bodyOf({ messages: [hi], responseFormat: { type: ResponseFormat_Type.JSON_OBJECT }, media: { aspectRatio: "1:1" } });
    expect(body.response_format).toEqual([{ type: "text", mime_type: "application/json" }, { type: "image", aspect_ratio: "1:1", delivery: "inline" }]);
  });

  it("provider options: safety_settings, service_tier and environment as given; anything else, or of another type, is not sent", () => {
    const safety = [{ type: "dangerous_content", threshold: "block_only_high", method: "severity" }];
    const environment = { type: "remote", sources: [{ type: "github", uri: "https://github.com/a/b" }] };
    const body = bodyOf({ messages: [hi], providerOptions: { "gemini-interactions": { safety_settings: safety, service_tier: "priority", environment, labels: { team: "x" } } } });
    expect(body).toMatchObject({ safety_settings: safety, service_tier: "priority", environment });
    expect(body).not.toHaveProperty("labels");
    const wrong = bodyOf({ messages: [hi], providerOptions: { "gemini-interactions": { safety_settings: "none", service_tier: 3, environment: [] }, gemini: { safety_settings: safety } } });
    expect(Object.keys(wrong)).toEqual(["model", "input", "stream", "store"]);
  });

  it("message author names are said not carried", () => {
    expect(warningsOf({ messages: [{ ...hi, name: "ada" }] })).toEqual(["unsupported_parameter messages: message author names are not supported by the Gemini Interactions protocol and were ignored"]);
  });
});
