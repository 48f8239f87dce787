// The credit hold of a paid request: its prompt at most and max_tokens, at the
// dearest price its prompt may be billed at (cache writes only where the request
// sets breakpoints, 1-hour writes only with ttl 1h).
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { holdFor } from "../../../core/routing/hold.ts";
import { formatMoney } from "../../../core/billing/money.ts";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { parseConfig } from "../../../core/config/load.ts";
import { GenerateRequestSchema, Role } from "../../../gen/router/v1/inference_pb.js";
import { planAttempts } from "../../../core/routing/plan.ts";

const catalogue = createCatalogue(
  parseConfig(
    JSON.stringify({
      providers: [
        { id: "anthropic", label: "Anthropic", protocol: "anthropic", base_url: "http://127.0.0.1:9", api_key_env: "K" },
        { id: "fee", label: "Fee", protocol: "openai-compatible", base_url: "http://127.0.0.1:9", api_key_env: "K" },
      ],
      models: [
        {
          id: "a/claude", name: "c", created: 1, creator: "a", context_length: 100_000, max_completion_tokens: 1000,
          input_modalities: ["text"], output_modalities: ["text"], supported_parameters: ["max_tokens"],
          providers: [
            {
              provider: "anthropic", provider_model_id: "claude",
              pricing: { prompt: "0.000001", completion: "0.000002", input_cache_write: "0.00000125", input_cache_write_1h: "0.000002" },
            },
          ],
        },
        {
          id: "g/video-tokens", name: "g", created: 1, creator: "g", context_length: 100_000, max_completion_tokens: 1000,
          input_modalities: ["text"], output_modalities: ["text", "video"], supported_parameters: ["max_tokens"],
          providers: [{ provider: "fee", provider_model_id: "g", pricing: { prompt: "0.000001", completion: "0.000002", completion_video: "0.00005" } }],
        },
        {
          id: "f/priced-per-request", name: "f", created: 1, creator: "f", context_length: 100_000, max_completion_tokens: 1000,
          input_modalities: ["text"], output_modalities: ["text"], supported_parameters: ["max_tokens"],
          providers: [{ provider: "fee", provider_model_id: "f", pricing: { prompt: "0.000001", completion: "0.000002", request: "0.005" } }],
        },
      ],
    }),
  ),
  { K: "key" },
);

/** A 1,000-byte user message, with or without a cache breakpoint. */
function holdOf(cacheControl?: { type: string; ttl?: string }, model = "a/claude") {
  const request = create(GenerateRequestSchema, {
    model,
    sampling: { maxTokens: 10 },
    messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "x".repeat(1000) } }, cacheControl }] }],
  });
  return formatMoney(holdFor(planAttempts(request, catalogue).attempts));
}

describe("the credit hold", () => {
  // 1,010 prompt tokens at most (1,000 bytes, 8 for the message, 2 for the empty tool list `[]`), and 10 completion tokens at 0.000002.
  it("prices the prompt at the prompt price without breakpoints", () => {
    expect(holdOf()).toBe("0.00103");
  });
  it("at the cache-write price with a breakpoint", () => {
    expect(holdOf({ type: "ephemeral" })).toBe("0.0012825");
  });
  it("at the 1-hour write price with a 1-hour breakpoint", () => {
    expect(holdOf({ type: "ephemeral", ttl: "1h" })).toBe("0.00204");
  });
  it("adds the per-request fee", () => {
    // 1,010 x 0.000001 + 10 x 0.000002 + 0.005
    expect(holdOf(undefined, "f/priced-per-request")).toBe("0.00603");
  });
  it("holds the output at its dearest token price: a model whose video tokens cost more holds max_tokens of them", () => {
    // 1,010 x 0.000001 + 10 x 0.00005
    expect(holdOf(undefined, "g/video-tokens")).toBe("0.00151");
  });
});
