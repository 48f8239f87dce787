// The thinking budget a request gets on the budget protocols (Anthropic's
// `thinking.budget_tokens`, Gemini 2.5's `thinkingBudget`), row by row.
//
// Every expected value below is worked out from the rules, not read off the
// implementation:
// - the spec (gateway-api.md, `reasoning`): effort low, medium, high are about
//   20%, 50%, 80% of max_tokens; docs/routing.md adds minimal 10%, medium for
//   `enabled: true` alone, and rounds the share down;
// - the spec's bounds of reasoning.max_tokens: 1024 to 32000;
// - Anthropic refuses a budget_tokens that is not below max_tokens, so the
//   budget is at most max_tokens - 1, and a max_tokens under 1025 leaves no room
//   for the 1024 minimum: reasoning is turned off, with a warning.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { createCatalogue, type ProviderRoute } from "../../../core/catalogue/catalogue.ts";
import { routerConfigSchema } from "../../../core/config/schema.ts";
import { convertRequest as convertAnthropicRequest } from "../../../core/providers/anthropic/convert-request.ts";
import { convertRequest as convertGeminiRequest } from "../../../core/providers/gemini/convert-request.ts";
import type { UpstreamCall } from "../../../core/providers/types.ts";
import { resolveReasoning } from "../../../core/routing/reasoning.ts";
import { GenerateRequestSchema, Role, type GenerateRequest } from "../../../gen/router/v1/inference_pb.js";

type ReasoningInit = NonNullable<MessageInitShape<typeof GenerateRequestSchema>["reasoning"]>;
type BudgetProtocol = "anthropic" | "gemini";

const ROUTE_COMPLETION_LIMIT = 8192;
/** The largest thinkingBudget Gemini 2.5 Flash (the gemini route's model) takes, per Google's thinking guide. */
const GEMINI_FLASH_MAX_BUDGET = 24576;

/** One model served by one provider of the given protocol, with no effort map, through the real catalogue. */
function budgetRoute(protocol: BudgetProtocol | "openai-compatible", reasoningEffortMap?: Record<string, string>): ProviderRoute {
  const config = routerConfigSchema.parse({
    providers: [{ id: "p", label: "P", protocol, base_url: "https://upstream.invalid/v1" }],
    models: [
      {
        id: "test/thinker",
        name: "Thinker",
        created: 0,
        creator: "test",
        context_length: 200_000,
        max_completion_tokens: ROUTE_COMPLETION_LIMIT,
        input_modalities: ["text"],
        output_modalities: ["text"],
        supported_parameters: ["max_tokens", "reasoning"],
        providers: [
          {
            provider: "p",
            provider_model_id: protocol === "gemini" ? "gemini-2.5-flash" : "claude-x",
            pricing: { prompt: "0", completion: "0" },
            reasoning_effort_map: reasoningEffortMap,
          },
        ],
      },
    ],
  });
  return createCatalogue(config, {}).get("test/thinker")!.routes[0];
}

function request(maxTokens: number | undefined, reasoning: ReasoningInit): GenerateRequest {
  return create(GenerateRequestSchema, {
    messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Think." } } }] }],
    sampling: maxTokens === undefined ? undefined : { maxTokens },
    reasoning,
  });
}

function turnedOffWarning(limit: number): string {
  return `max_tokens ${limit} leaves no room for a reasoning budget of at least 1024 on test/thinker; reasoning was turned off`;
}

/** What the provider is sent once routing resolved the reasoning: the request body's thinking part. */
function sentThinking(protocol: BudgetProtocol, resolved: GenerateRequest, route: ProviderRoute) {
  const call: UpstreamCall = {
    request: resolved,
    provider: route.provider,
    route: route.route,
    apiKey: "k",
    stream: false,
    maxCompletionTokens: route.maxCompletionTokens,
    signal: new AbortController().signal,
  };
  if (protocol === "anthropic") {
    const body = convertAnthropicRequest(call).body as { max_tokens: number; thinking?: { budget_tokens?: number } };
    return { maxTokens: body.max_tokens, budget: body.thinking?.budget_tokens };
  }
  const config = (convertGeminiRequest(call).body as { generationConfig: { maxOutputTokens?: number; thinkingConfig?: { thinkingBudget?: number } } }).generationConfig;
  return { maxTokens: config.maxOutputTokens ?? route.maxCompletionTokens, budget: config.thinkingConfig?.thinkingBudget };
}

// [request max_tokens, reasoning, expected budget or "off"]
// Shares rounded down: 10%, 20%, 50%, 80%.
type Row = [number | undefined, ReasoningInit, number | "off"];
const ROWS: Row[] = [
  // 1024: budget must be < 1024 and >= 1024 at once, so reasoning goes off at every effort.
  [1024, { effort: "minimal" }, "off"],
  [1024, { effort: "low" }, "off"],
  [1024, { effort: "medium" }, "off"],
  [1024, { effort: "high" }, "off"],
  [1024, { maxTokens: 1024 }, "off"],
  // 1025: every share is under 1024, raised to the minimum, which is exactly max_tokens - 1.
  [1025, { effort: "minimal" }, 1024],
  [1025, { effort: "low" }, 1024],
  [1025, { effort: "medium" }, 1024],
  [1025, { effort: "high" }, 1024],
  // 4096: minimal 409 and low 819 are raised to 1024; medium 2048; high 3276.8 -> 3276.
  [4096, { effort: "minimal" }, 1024],
  [4096, { effort: "low" }, 1024],
  [4096, { effort: "medium" }, 2048],
  [4096, { effort: "high" }, 3276],
  // 10000: each share clear of the bounds, so a changed share shows.
  [10000, { effort: "minimal" }, 1024],
  [10000, { effort: "low" }, 2000],
  [10000, { effort: "medium" }, 5000],
  [10000, { effort: "high" }, 8000],
  // 50000: high (40000) is capped at 32000; the others stay under it.
  [50000, { effort: "minimal" }, 5000],
  [50000, { effort: "low" }, 10000],
  [50000, { effort: "medium" }, 25000],
  [50000, { effort: "high" }, 32000],
  // enabled alone reasons at medium.
  [4096, { enabled: true }, 2048],
  // No request max_tokens: the share of the route's completion limit (8192): high 6553.6 -> 6553.
  [undefined, { effort: "high" }, 6553],
  [undefined, { effort: "low" }, 1638],
  // reasoning.max_tokens as given when within the bounds and below max_tokens.
  [4096, { maxTokens: 2048 }, 2048],
  [4096, { maxTokens: 1024 }, 1024],
  [50000, { maxTokens: 32000 }, 32000],
  // Out of the spec's bounds (the gateway refuses these; the core still clamps): raised to 1024, capped at 32000.
  [4096, { maxTokens: 500 }, 1024],
  [4096, { maxTokens: 1 }, 1024],
  [64000, { maxTokens: 40000 }, 32000],
  // Equal to or above max_tokens (Anthropic refuses budget_tokens >= max_tokens): max_tokens - 1.
  [4096, { maxTokens: 4096 }, 4095],
  [4096, { maxTokens: 8000 }, 4095],
  [1025, { maxTokens: 1024 }, 1024],
];

describe.each<BudgetProtocol>(["anthropic", "gemini"])("reasoning budget on a %s route without an effort map", (protocol) => {
  const route = budgetRoute(protocol);

  it.each(ROWS)("max_tokens %s, reasoning %j -> %s", (maxTokens, reasoning, expected) => {
    const resolved = resolveReasoning(request(maxTokens, reasoning), route);
    if (expected === "off") {
      expect(resolved.reasoning).toMatchObject({ enabled: false });
      expect(resolved.reasoning?.maxTokens).toBeUndefined();
      expect(resolved.warnings.map((w) => [w.code, w.param, w.message])).toEqual([["adjusted_parameter", "reasoning", turnedOffWarning(maxTokens ?? ROUTE_COMPLETION_LIMIT)]]);
    } else {
      expect(resolved.reasoning).toMatchObject({ enabled: true, maxTokens: expected, effort: "" });
      expect(resolved.warnings).toEqual([]);
    }
  });

  it.each(ROWS.filter((row) => row[2] !== "off"))("sends max_tokens %s, reasoning %j as a budget of %s, below max_tokens", (maxTokens, reasoning, expected) => {
    const resolved = resolveReasoning(request(maxTokens, reasoning), route);
    const sent = sentThinking(protocol, { ...request(maxTokens, reasoning), reasoning: resolved.reasoning }, route);
    // Gemini 2.5 Flash refuses a budget above its documented 24576: the adapter sends that instead.
    expect(sent.budget).toBe(protocol === "gemini" ? Math.min(expected as number, GEMINI_FLASH_MAX_BUDGET) : expected);
    expect(sent.budget!).toBeLessThan(sent.maxTokens);
  });

  it.each<[string, ReasoningInit]>([
    ["enabled: false", { enabled: false }],
    ["enabled: false with an effort", { enabled: false, effort: "high" }],
    ["enabled: false with a budget", { enabled: false, maxTokens: 2048 }],
    ["effort none", { effort: "none" }],
  ])("%s turns reasoning off, silently, and sends no budget", (_name, reasoning) => {
    const resolved = resolveReasoning(request(4096, { ...reasoning, exclude: true }), route);
    expect(resolved.reasoning).toMatchObject({ enabled: false, exclude: true });
    expect(resolved.reasoning?.maxTokens).toBeUndefined();
    expect(resolved.warnings).toEqual([]);
    const sent = sentThinking(protocol, { ...request(4096, {}), reasoning: resolved.reasoning }, route);
    // Gemini 2.5 Flash turns thinking off with a budget of 0; Anthropic simply gets no thinking.
    expect(sent.budget).toBe(protocol === "gemini" ? 0 : undefined);
  });

  it("keeps exclude on the budget it sets", () => {
    const resolved = resolveReasoning(request(4096, { effort: "high", exclude: true }), route);
    expect(resolved.reasoning).toMatchObject({ enabled: true, maxTokens: 3276, exclude: true });
  });

  it("leaves a request without reasoning without reasoning", () => {
    const resolved = resolveReasoning(create(GenerateRequestSchema, { sampling: { maxTokens: 4096 } }), route);
    expect(resolved).toEqual({ reasoning: undefined, warnings: [] });
  });
});

describe("routes that do not think on a budget", () => {
  it("an Anthropic route with an effort map gets the mapped effort, never a budget", () => {
    const route = budgetRoute("anthropic", { low: "low", medium: "medium", high: "high" });
    const resolved = resolveReasoning(request(4096, { effort: "high" }), route);
    expect(resolved.reasoning).toMatchObject({ effort: "high" });
    expect(resolved.reasoning?.maxTokens).toBeUndefined();
    expect(resolved.warnings).toEqual([]);
  });

  it("an OpenAI-compatible route without a map reasons at its fixed effort, with a warning", () => {
    const route = budgetRoute("openai-compatible");
    const resolved = resolveReasoning(request(4096, { effort: "high" }), route);
    expect(resolved.reasoning).toMatchObject({ effort: "high" });
    expect(resolved.reasoning?.maxTokens).toBeUndefined();
    expect(resolved.warnings.map((w) => w.message)).toEqual(["test/thinker on p reasons at a fixed effort; the requested effort was not applied"]);
  });
});
