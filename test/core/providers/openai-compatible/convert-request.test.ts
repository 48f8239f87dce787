// The vendor quirks of the OpenAI-compatible protocol are data: one table of
// reasoning styles, each checked on the body that goes upstream.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { modelProviderSchema, providerSchema } from "../../../../core/config/schema.ts";
import { convertRequest } from "../../../../core/providers/openai-compatible/convert-request.ts";
import type { UpstreamCall } from "../../../../core/providers/types.ts";
import { GenerateRequestSchema } from "../../../../gen/router/v1/inference_pb.js";

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
