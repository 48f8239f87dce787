// The Messages request body the Anthropic adapter sends, case by case.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { modelProviderSchema, providerSchema } from "../../../../core/config/schema.ts";
import { JSON_OBJECT_INSTRUCTION, convertRequest as convert } from "../../../../core/providers/anthropic/convert-request.ts";
import { UpstreamError, type UpstreamCall } from "../../../../core/providers/types.ts";
import { GenerateRequestSchema, ResponseFormat_Type, Role, ToolChoice_Mode } from "../../../../gen/router/v1/inference_pb.js";

type RequestInit = MessageInitShape<typeof GenerateRequestSchema>;
const text = (value: string, cacheControl?: { type: string; ttl?: string }) => ({ part: { case: "text" as const, value: { text: value } }, cacheControl });
const user = (...content: ReturnType<typeof text>[]) => ({ role: Role.USER, content });

function call(request: RequestInit, route: Record<string, unknown> = {}, stream = false): UpstreamCall {
  return {
    request: create(GenerateRequestSchema, request),
    provider: providerSchema.parse({ id: "anthropic", label: "Anthropic", protocol: "anthropic", base_url: "https://api.anthropic.com/v1" }),
    route: modelProviderSchema.parse({ provider: "anthropic", provider_model_id: "claude-x", pricing: { prompt: "0", completion: "0" }, ...route }),
    apiKey: "k",
    stream,
    maxCompletionTokens: 64000,
    signal: new AbortController().signal,
  };
}

/** The body the converter builds, and the words of the warnings it returns with it. */
const convertRequest = (upstreamCall: UpstreamCall) => convert(upstreamCall).body;
const warningsOf = (upstreamCall: UpstreamCall) => convert(upstreamCall).warnings.map((w) => w.message);

describe("Anthropic request conversion", () => {
  it("moves system and developer text to `system`, keeping cache breakpoints, and requires max_tokens", () => {
    const body = convertRequest(
      call({
        messages: [
          { role: Role.SYSTEM, content: [text("Be brief.", { type: "ephemeral", ttl: "1h" })] },
          { role: Role.DEVELOPER, content: [text("Use metric units.")] },
          user(text("Hi")),
        ],
      }),
    );
    expect(body).toEqual({
      model: "claude-x",
      max_tokens: 64000,
      system: [
        { type: "text", text: "Be brief.", cache_control: { type: "ephemeral", ttl: "1h" } },
        { type: "text", text: "Use metric units." },
      ],
      messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
    });
  });

  it("sends earlier thinking first with its signature, tool calls as tool_use, and merges consecutive tool results into one user turn", () => {
    const body = convertRequest(
      call({
        messages: [
          user(text("Weather in Paris and Rome?")),
          {
            role: Role.ASSISTANT,
            content: [
              { part: { case: "toolCall", value: { id: "toolu_1", name: "w", arguments: '{"city":"Paris"}' } } },
              { part: { case: "toolCall", value: { id: "toolu_2", name: "w", arguments: '{"city":"Rome"}' } } },
              { part: { case: "reasoning", value: { text: "Two calls.", signature: "sig" } } },
              { part: { case: "reasoning", value: { redactedData: "opaque" } } },
            ],
          },
          { role: Role.TOOL, content: [{ part: { case: "toolResult", value: { toolCallId: "toolu_1", content: [text("21C")] } } }] },
          { role: Role.TOOL, content: [{ part: { case: "toolResult", value: { toolCallId: "toolu_2", content: [text("boom")], isError: true } } }] },
        ],
      }),
    );
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Paris and Rome?" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Two calls.", signature: "sig" },
          { type: "redacted_thinking", data: "opaque" },
          { type: "tool_use", id: "toolu_1", name: "w", input: { city: "Paris" } },
          { type: "tool_use", id: "toolu_2", name: "w", input: { city: "Rome" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "21C" },
          { type: "tool_result", tool_use_id: "toolu_2", content: "boom", is_error: true },
        ],
      },
    ]);
  });

  it("sends images and PDFs as base64 or URL sources", () => {
    const body = convertRequest(
      call({
        messages: [
          {
            role: Role.USER,
            content: [
              { part: { case: "image", value: { url: "data:image/jpeg;base64,/9j/" } } },
              { part: { case: "image", value: { url: "https://img.example/cat.png" } } },
              { part: { case: "file", value: { filename: "a.pdf", fileData: "data:application/pdf;base64,JVBERi0=" } } },
            ],
          },
        ],
      }),
    );
    expect(body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j/" } },
          { type: "image", source: { type: "url", url: "https://img.example/cat.png" } },
          { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" }, title: "a.pdf" },
        ],
      },
    ]);
  });

  it.each([
    [ToolChoice_Mode.AUTO, "", { type: "auto" }],
    [ToolChoice_Mode.REQUIRED, "", { type: "any" }],
    [ToolChoice_Mode.NONE, "", { type: "none" }],
    [ToolChoice_Mode.NAMED, "w", { type: "tool", name: "w" }],
  ])("maps tool_choice mode %s", (mode, name, expected) => {
    const body = convertRequest(call({ messages: [user(text("x"))], tools: [{ name: "w" }], toolChoice: { mode, name } }));
    expect(body.tools).toEqual([{ name: "w", input_schema: { type: "object" } }]);
    expect(body.tool_choice).toEqual(expected);
  });

  it.each([
    [undefined, { type: "auto" }],
    [ToolChoice_Mode.REQUIRED, { type: "any", disable_parallel_tool_use: true }],
    [ToolChoice_Mode.NONE, { type: "none" }],
  ])("parallel_tool_calls false with tool_choice %s becomes disable_parallel_tool_use", (mode, expected) => {
    const toolChoice = mode === undefined ? undefined : { mode };
    const body = convertRequest(call({ messages: [user(text("x"))], tools: [{ name: "w" }], toolChoice, parallelToolCalls: false }));
    expect(body.tool_choice).toEqual(mode === undefined ? { ...expected, disable_parallel_tool_use: true } : expected);
    // The default (parallel calls allowed) needs no field.
    expect(convertRequest(call({ messages: [user(text("x"))], tools: [{ name: "w" }], toolChoice, parallelToolCalls: true })).tool_choice ?? {}).not.toHaveProperty(
      "disable_parallel_tool_use",
    );
  });

  it("thinks on a budget, and then drops temperature and top_k (named in warnings)", () => {
    const request = { messages: [user(text("x"))], sampling: { maxTokens: 4096, temperature: 0.2, topK: 5, topP: 0.99, stop: ["END"] }, reasoning: { maxTokens: 2048 } };
    const upstreamCall = call(request);
    expect(convertRequest(upstreamCall)).toMatchObject({ max_tokens: 4096, thinking: { type: "enabled", budget_tokens: 2048 }, top_p: 0.99, stop_sequences: ["END"] });
    expect(convertRequest(upstreamCall)).not.toHaveProperty("temperature");
    expect(warningsOf(upstreamCall)).toEqual([
      "temperature is not accepted by Anthropic while thinking and was ignored",
      "top_k is not accepted by Anthropic while thinking and was ignored",
    ]);
  });

  describe("thinking and tool_choice (Anthropic allows thinking only with auto or none)", () => {
    const tools = [{ name: "w" }];
    const budget = { maxTokens: 2048 };

    it.each([
      [ToolChoice_Mode.AUTO, "", { type: "auto" }],
      [ToolChoice_Mode.NONE, "", { type: "none" }],
    ])("keeps thinking with tool_choice mode %s", (mode, name, expected) => {
      const upstreamCall = call({ messages: [user(text("x"))], tools, toolChoice: { mode, name }, sampling: { maxTokens: 4096 }, reasoning: budget });
      expect(convertRequest(upstreamCall)).toMatchObject({ thinking: { type: "enabled", budget_tokens: 2048 }, tool_choice: expected });
      expect(warningsOf(upstreamCall)).toEqual([]);
    });

    it.each([
      [ToolChoice_Mode.REQUIRED, "", { type: "any" }],
      [ToolChoice_Mode.NAMED, "w", { type: "tool", name: "w" }],
    ])("sends the forced choice of mode %s and leaves thinking out, with a warning", (mode, name, expected) => {
      const upstreamCall = call({ messages: [user(text("x"))], tools, toolChoice: { mode, name }, sampling: { maxTokens: 4096, temperature: 0.2 }, reasoning: budget });
      const body = convertRequest(upstreamCall);
      expect(body.tool_choice).toEqual(expected);
      expect(body).not.toHaveProperty("thinking");
      // Not thinking, so the sampling fields thinking refuses go as asked.
      expect(body.temperature).toBe(0.2);
      expect(warningsOf(upstreamCall)).toEqual([
        "reasoning was not sent: Anthropic does not allow thinking when tool_choice forces tool use (required or a named tool); the tool choice was kept",
      ]);
    });

    it("leaves adaptive thinking and its effort out under a forced choice too", () => {
      const body = convertRequest(
        call({ messages: [user(text("x"))], tools, toolChoice: { mode: ToolChoice_Mode.REQUIRED }, reasoning: { effort: "high" } }, { reasoning_effort_map: { high: "high" } }),
      );
      expect(body).not.toHaveProperty("thinking");
      expect(body).not.toHaveProperty("output_config");
      expect(body.tool_choice).toEqual({ type: "any" });
    });

    it("keeps thinking when a forced choice comes without tools (no tool_choice is sent then)", () => {
      const upstreamCall = call({ messages: [user(text("x"))], toolChoice: { mode: ToolChoice_Mode.REQUIRED }, sampling: { maxTokens: 4096 }, reasoning: budget });
      const body = convertRequest(upstreamCall);
      expect(body).toMatchObject({ thinking: { type: "enabled", budget_tokens: 2048 } });
      expect(body).not.toHaveProperty("tool_choice");
      expect(warningsOf(upstreamCall)).toEqual([]);
    });
  });

  it.each([
    [1.5, 1, ["temperature 1.5 is above Anthropic's maximum of 1 and was sent as 1"]],
    [2, 1, ["temperature 2 is above Anthropic's maximum of 1 and was sent as 1"]],
    [1, 1, []],
    [0.7, 0.7, []],
  ])("sends temperature %s (the chat format allows up to 2, Anthropic up to 1) as %s", (temperature, sent, warnings) => {
    const upstreamCall = call({ messages: [user(text("x"))], sampling: { temperature } });
    expect(convertRequest(upstreamCall).temperature).toBe(sent);
    expect(warningsOf(upstreamCall)).toEqual(warnings);
  });

  it("names a temperature above 1 only once while thinking, where none is sent", () => {
    const upstreamCall = call({ messages: [user(text("x"))], sampling: { maxTokens: 4096, temperature: 1.5 }, reasoning: { maxTokens: 2048 } });
    expect(convertRequest(upstreamCall)).not.toHaveProperty("temperature");
    expect(warningsOf(upstreamCall)).toEqual(["temperature is not accepted by Anthropic while thinking and was ignored"]);
  });

  it("uses adaptive thinking with the mapped effort where the route has an effort map", () => {
    const body = convertRequest(call({ messages: [user(text("x"))], reasoning: { effort: "high" } }, { reasoning_effort_map: { low: "low", high: "high" } }));
    expect(body).toMatchObject({ thinking: { type: "adaptive" }, output_config: { effort: "high" } });
  });

  it("sends a Messages request's thinking display as it asked, adaptive or by budget", () => {
    const adaptive = convertRequest(call({ messages: [user(text("x"))], reasoning: { effort: "high" }, providerOptions: { anthropic: { thinking: { display: "omitted" } } } }, { reasoning_effort_map: { high: "high" } }));
    expect(adaptive.thinking).toEqual({ type: "adaptive", display: "omitted" });
    const budget = convertRequest(call({ messages: [user(text("x"))], sampling: { maxTokens: 4000 }, reasoning: { maxTokens: 2000 }, providerOptions: { anthropic: { thinking: { display: "summarized" } } } }));
    expect(budget.thinking).toEqual({ type: "enabled", budget_tokens: 2000, display: "summarized" });
    const plain = convertRequest(call({ messages: [user(text("x"))], sampling: { maxTokens: 4000 }, reasoning: { maxTokens: 2000 } }));
    expect(plain.thinking).toEqual({ type: "enabled", budget_tokens: 2000 });
  });

  it("sends no thinking when reasoning is off", () => {
    const body = convertRequest(call({ messages: [user(text("x"))], sampling: { temperature: 0.3 }, reasoning: { enabled: false } }));
    expect(body).not.toHaveProperty("thinking");
    expect(body.temperature).toBe(0.3);
  });

  it("asks for structured output with output_config.format, and for json_object in the system prompt", () => {
    const schema = { type: "object", properties: { a: { type: "string" } } };
    const withSchema = convertRequest(call({ messages: [user(text("x"))], responseFormat: { type: ResponseFormat_Type.JSON_SCHEMA, name: "a", schema } }));
    expect(withSchema.output_config).toEqual({ format: { type: "json_schema", schema } });
    const jsonObject = call({ messages: [user(text("x"))], responseFormat: { type: ResponseFormat_Type.JSON_OBJECT } });
    expect(convertRequest(jsonObject).system).toEqual([{ type: "text", text: JSON_OBJECT_INSTRUCTION }]);
    expect(warningsOf(jsonObject)).toEqual(["Anthropic has no json_object mode: the system prompt asks for a single JSON object instead"]);
  });

  it("names what the protocol cannot carry", () => {
    const warnings = warningsOf(
      call({
        messages: [{ role: Role.USER, name: "ann", content: [{ part: { case: "audio", value: { data: "UklG", format: "wav" } } }] }],
        sampling: { seed: 1n, frequencyPenalty: 0.1, presencePenalty: 0.1 },
      }),
    );
    expect(warnings).toEqual([
      "seed is not supported by the Anthropic protocol and was ignored",
      "frequency_penalty is not supported by the Anthropic protocol and was ignored",
      "presence_penalty is not supported by the Anthropic protocol and was ignored",
      "audio input is not supported by the Anthropic protocol and was ignored",
      "message author names are not supported by the Anthropic protocol and were ignored",
    ]);
  });

  it("makes each request's content warnings afresh: changing one leaves the next request's alone", () => {
    const named = () => call({ messages: [{ role: Role.USER, name: "ann", content: [text("Hi")] }] });
    const first = convert(named()).warnings;
    first[0]!.message = "changed";
    const second = convert(named()).warnings;
    expect(second[0]).not.toBe(first[0]);
    expect(second.map((w) => w.message)).toEqual(["message author names are not supported by the Anthropic protocol and were ignored"]);
  });

  it("types each warning: what was left out is unsupported_parameter, what was changed adjusted_parameter, each naming its parameter", () => {
    const { warnings } = convert(
      call({
        messages: [{ role: Role.USER, content: [{ part: { case: "audio", value: { data: "UklG", format: "wav" } } }] }],
        sampling: { seed: 1n, temperature: 1.5 },
        responseFormat: { type: ResponseFormat_Type.JSON_OBJECT },
      }),
    );
    expect(warnings.map((w) => [w.code, w.param])).toEqual([
      ["unsupported_parameter", "seed"],
      ["adjusted_parameter", "temperature"],
      ["adjusted_parameter", "response_format"],
      ["unsupported_parameter", "messages"],
    ]);
  });

  it("refuses tool-call arguments that are not a JSON object, without trying another provider", () => {
    const assistant = { role: Role.ASSISTANT, content: [{ part: { case: "toolCall" as const, value: { id: "t", name: "w", arguments: "not json" } } }] };
    const error = (() => {
      try {
        convertRequest(call({ messages: [user(text("x")), assistant] }));
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 400, retryable: false });
  });

  it("streams when asked, and passes the end user's id as metadata", () => {
    const body = convertRequest(call({ messages: [user(text("x"))], passthrough: { user: "u-42" } }, {}, true));
    expect(body).toMatchObject({ stream: true, metadata: { user_id: "u-42" } });
  });
});
