// Each HTTP protocol's descriptor tells the truth about its converter: what the
// descriptor says the protocol carries reaches the body, and what it says it
// cannot carry comes back as a typed warning instead.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { modelProviderSchema, providerSchema, type ProviderProtocol } from "../../../core/config/schema.ts";
import { convertRequest as convertAnthropic } from "../../../core/providers/anthropic/convert-request.ts";
import { convertRequest as convertGemini } from "../../../core/providers/gemini/convert-request.ts";
import { convertRequest as convertOpenAi } from "../../../core/providers/openai-compatible/convert-request.ts";
import { capabilitiesOf } from "../../../core/providers/registry.ts";
import type { ConvertedRequest, UpstreamCall } from "../../../core/providers/types.ts";
import { GenerateRequestSchema, Role } from "../../../gen/router/v1/inference_pb.js";

const CONVERTERS: [ProviderProtocol, (call: UpstreamCall) => ConvertedRequest][] = [
  ["openai-compatible", convertOpenAi],
  ["anthropic", convertAnthropic],
  ["gemini", convertGemini],
];

function call(protocol: ProviderProtocol, request: MessageInitShape<typeof GenerateRequestSchema>): UpstreamCall {
  return {
    request: create(GenerateRequestSchema, { messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Hi" } } }] }], ...request }),
    provider: providerSchema.parse({ id: "p", label: "P", protocol, base_url: "https://upstream.invalid/v1" }),
    route: modelProviderSchema.parse({ provider: "p", provider_model_id: "m", pricing: { prompt: "0", completion: "0" } }),
    apiKey: "k",
    stream: false,
    maxCompletionTokens: 1000,
    signal: new AbortController().signal,
  };
}

const sent = (converted: ConvertedRequest, value: string) => JSON.stringify(converted.body).includes(value);

describe.each(CONVERTERS)("the %s descriptor", (protocol, convert) => {
  const capabilities = capabilitiesOf(protocol);

  it("parallelToolCalls: the limit is sent, or left out with a typed warning", () => {
    const converted = convert(call(protocol, { tools: [{ name: "w" }], parallelToolCalls: false }));
    const warned = converted.warnings.some((w) => w.code === "unsupported_parameter" && w.param === "parallel_tool_calls");
    expect(warned).toBe(!capabilities.parallelToolCalls);
    expect(sent(converted, "parallel")).toBe(capabilities.parallelToolCalls);
  });

  it("passthrough: every listed field reaches the body", () => {
    for (const field of capabilities.passthrough) {
      expect(sent(convert(call(protocol, { passthrough: { [field]: "passed-through" } })), "passed-through")).toBe(true);
    }
  });

  it("cacheControl: breakpoints reach the body exactly where the descriptor says", () => {
    const breakpoint = { role: Role.USER, content: [{ part: { case: "text" as const, value: { text: "Hi" } }, cacheControl: { type: "ephemeral" } }] };
    expect(sent(convert(call(protocol, { messages: [breakpoint] })), "ephemeral")).toBe(capabilities.cacheControl);
  });

  it("mediaOptions: an aspect ratio and an audio prompt reach the body exactly where the descriptor says", () => {
    expect(sent(convert(call(protocol, { media: { aspectRatio: "16:9" } })), "16:9")).toBe(capabilities.mediaOptions.includes("image"));
    expect(sent(convert(call(protocol, { media: { audioPrompt: "a calm tune" } })), "a calm tune")).toBe(capabilities.mediaOptions.includes("audio"));
  });
});
