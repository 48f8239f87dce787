// The vendor quirks of the OpenAI-compatible protocol are data: one table of
// reasoning styles, each checked on the body that goes upstream; then tool_choice
// and how earlier reasoning is sent back.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { modelProviderSchema, providerSchema } from "../../../../core/config/schema.ts";
import { convertRequest as convert } from "../../../../core/providers/openai-compatible/convert-request.ts";
import type { UpstreamCall } from "../../../../core/providers/types.ts";
import { GenerateRequestSchema, Role, ToolChoice_Mode } from "../../../../gen/router/v1/inference_pb.js";

/** The body the converter builds (this protocol leaves nothing out, so it returns no warnings). */
const convertRequest = (upstreamCall: UpstreamCall) => convert(upstreamCall).body;
const text = (value: string) => ({ part: { case: "text" as const, value: { text: value } } });

function callWith(quirks: Record<string, string>, reasoning: Record<string, unknown> | undefined, effortMap?: Record<string, string>): UpstreamCall {
  const provider = providerSchema.parse({ id: "vendor", label: "Vendor", protocol: "openai-compatible", base_url: "https://vendor.example/v1", quirks });
  const route = modelProviderSchema.parse({
    provider: "vendor",
    provider_model_id: "m",
    pricing: { prompt: "0", completion: "0" },
    ...(effortMap && { reasoning_effort_map: effortMap }),
  });
  const request = create(GenerateRequestSchema, {
    messages: [{ role: 3, content: [{ part: { case: "text", value: { text: "hi" } } }] }],
    sampling: { maxTokens: 100 },
    reasoning,
  });
  return { request, provider, route, apiKey: "", stream: false, maxCompletionTokens: 1000, signal: new AbortController().signal };
}

const MAP = { low: "low", medium: "medium", high: "high" };

describe("OpenAI-compatible reasoning styles (quirks.reasoning_field)", () => {
  it.each([
    ["reasoning_effort", { effort: "high" }, MAP, { reasoning_effort: "high" }],
    ["reasoning", { effort: "low" }, MAP, { reasoning: { effort: "low" } }],
    ["enable_thinking", { enabled: true, maxTokens: 2048 }, undefined, { enable_thinking: true, thinking_budget: 2048 }],
    ["enable_thinking", { enabled: false }, undefined, { enable_thinking: false }],
    ["thinking", { effort: "high" }, undefined, { thinking: { type: "enabled" } }],
    ["thinking", { effort: "none" }, undefined, { thinking: { type: "disabled" } }],
  ])("%s with %o", (style, reasoning, map, expected) => {
    const body = convertRequest(callWith({ reasoning_field: style }, reasoning, map));
    expect(body).toMatchObject(expected);
  });

  it("sends nothing about reasoning when the request asks for none", () => {
    for (const style of ["reasoning_effort", "reasoning", "enable_thinking", "thinking"]) {
      const body = convertRequest(callWith({ reasoning_field: style }, undefined, MAP));
      expect(Object.keys(body).sort()).toEqual(["max_tokens", "messages", "model"]);
    }
  });

  it("sends no effort the route's map does not offer", () => {
    const body = convertRequest(callWith({}, { effort: "minimal" }, MAP));
    expect(body).not.toHaveProperty("reasoning_effort");
  });

  it("puts the completion limit in the vendor's field", () => {
    expect(convertRequest(callWith({ max_tokens_field: "max_completion_tokens" }, undefined))).toMatchObject({ max_completion_tokens: 100 });
  });
});

/** A call on a vendor with these quirks, carrying `request` as given. */
function callOf(quirks: Record<string, string>, request: MessageInitShape<typeof GenerateRequestSchema>): UpstreamCall {
  const call = callWith(quirks, undefined);
  return { ...call, request: create(GenerateRequestSchema, request) };
}

describe("OpenAI-compatible parallel_tool_calls", () => {
  const request = (parallelToolCalls: boolean | undefined, tools = [{ name: "get_weather" }]) =>
    convertRequest(callOf({}, { messages: [{ role: Role.USER, content: [text("Weather?")] }], tools, parallelToolCalls }));
  it("sends false with tools, and nothing for the default or without tools", () => {
    expect(request(false).parallel_tool_calls).toBe(false);
    expect(request(true)).not.toHaveProperty("parallel_tool_calls");
    expect(request(undefined)).not.toHaveProperty("parallel_tool_calls");
    expect(request(false, [])).not.toHaveProperty("parallel_tool_calls");
  });
});

describe("OpenAI-compatible tool_choice", () => {
  it.each([
    [ToolChoice_Mode.AUTO, "", "auto"],
    [ToolChoice_Mode.NONE, "", "none"],
    [ToolChoice_Mode.REQUIRED, "", "required"],
    [ToolChoice_Mode.NAMED, "get_weather", { type: "function", function: { name: "get_weather" } }],
  ])("mode %s is sent as %o", (mode, name, expected) => {
    const body = convertRequest(
      callOf({}, { messages: [{ role: Role.USER, content: [text("Weather?")] }], tools: [{ name: "get_weather", parameters: { type: "object" } }], toolChoice: { mode, name } }),
    );
    expect(body.tools).toEqual([{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }]);
    expect(body.tool_choice).toEqual(expected);
  });

  it("sends no tool_choice when the request names none", () => {
    const body = convertRequest(callOf({}, { messages: [{ role: Role.USER, content: [text("Weather?")] }], tools: [{ name: "get_weather" }] }));
    expect(body).not.toHaveProperty("tool_choice");
  });
});

describe("OpenAI-compatible earlier reasoning (quirks.reasoning_passback)", () => {
  // A thinking-mode tool loop: the assistant reasoned, called a tool, and got its result.
  const history = {
    messages: [
      { role: Role.USER, content: [text("Weather in Paris?")] },
      {
        role: Role.ASSISTANT,
        content: [
          { part: { case: "reasoning" as const, value: { text: "I need the weather tool. " } } },
          { part: { case: "reasoning" as const, value: { text: "Paris it is.", signature: "sig" } } },
          { part: { case: "toolCall" as const, value: { id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' } } },
        ],
      },
      { role: Role.TOOL, content: [{ part: { case: "toolResult" as const, value: { toolCallId: "call_1", content: [text("21C")] } } }] },
      { role: Role.ASSISTANT, content: [{ part: { case: "reasoning" as const, value: { text: "Sunny." } } }, text("It is 21C.")] },
      { role: Role.USER, content: [text("Thanks")] },
    ],
  };

  it("writes the assistant's reasoning text back as reasoning_content where the vendor reads it (DeepSeek, Kimi)", () => {
    const body = convertRequest(callOf({ reasoning_passback: "reasoning_content" }, history));
    expect(body.messages).toEqual([
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
        reasoning_content: "I need the weather tool. Paris it is.",
      },
      { role: "tool", tool_call_id: "call_1", content: "21C" },
      { role: "assistant", content: "It is 21C.", reasoning_content: "Sunny." },
      { role: "user", content: "Thanks" },
    ]);
  });

  it("leaves reasoning out by default, as OpenAI's own API has no such field", () => {
    const body = convertRequest(callOf({}, history));
    expect(JSON.stringify(body)).not.toContain("reasoning_content");
    expect(JSON.stringify(body)).not.toContain("Paris it is.");
  });

  it("sends nothing for reasoning without text (redacted reasoning from another provider)", () => {
    const body = convertRequest(
      callOf(
        { reasoning_passback: "reasoning_content" },
        { messages: [{ role: Role.ASSISTANT, content: [{ part: { case: "reasoning", value: { redactedData: "opaque" } } }, text("Hi")] }] },
      ),
    );
    expect(body.messages).toEqual([{ role: "assistant", content: "Hi" }]);
  });
});
