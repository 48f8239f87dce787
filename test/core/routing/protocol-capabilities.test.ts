// Routing and the catalogue decide by a protocol's descriptor, never by its
// name: a made-up protocol with a test descriptor gets budgets, cache
// breakpoints, media options, pass-through fields and 1-hour cache prices
// exactly as its descriptor says.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { createCatalogue, type Catalogue } from "../../../core/catalogue/catalogue.ts";
import { routerConfigSchema, type ProviderProtocol } from "../../../core/config/schema.ts";
import type { ProtocolCapabilities } from "../../../core/providers/capabilities.ts";
import { errorDetailOf } from "../../../core/errors.ts";
import { planAttempts, type Attempt } from "../../../core/routing/plan.ts";
import { GenerateRequestSchema, Role } from "../../../gen/router/v1/inference_pb.js";

const MADE_UP = "made-up-protocol" as ProviderProtocol;

const NOTHING: ProtocolCapabilities = { reasoning: "effort", cacheControl: false, mediaOptions: [], passthrough: [], parallelToolCalls: false, serverTools: [] };

/** One model generating text, images and audio, served by one provider of the made-up protocol. */
function catalogueWith(capabilities: ProtocolCapabilities, pricing: Record<string, string> = {}): Catalogue {
  const config = routerConfigSchema.parse({
    providers: [{ id: "p", label: "P", protocol: "openai-compatible", base_url: "https://upstream.invalid/v1" }],
    models: [
      {
        id: "test/any",
        name: "Any",
        created: 0,
        creator: "test",
        context_length: 100_000,
        max_completion_tokens: 10_000,
        input_modalities: ["text"],
        output_modalities: ["text", "image", "audio"],
        supported_parameters: ["max_tokens", "reasoning"],
        providers: [{ provider: "p", provider_model_id: "any", pricing: { prompt: "0.000001", completion: "0.000002", ...pricing } }],
      },
    ],
  });
  config.providers[0].protocol = MADE_UP;
  return createCatalogue(config, {}, (protocol) => {
    expect(protocol).toBe(MADE_UP);
    return capabilities;
  });
}

type RequestInit = MessageInitShape<typeof GenerateRequestSchema>;

/** The attempt planned for the request, its warnings as words (their codes are checked at the end). */
function plan(capabilities: ProtocolCapabilities, init: RequestInit = {}): Omit<Attempt, "warnings"> & { warnings: string[] } {
  const request = create(GenerateRequestSchema, {
    model: "test/any",
    messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Hi" } } }] }],
    ...init,
  });
  const attempt = planAttempts(request, catalogueWith(capabilities)).attempts[0];
  return { ...attempt, warnings: attempt.warnings.map((w) => w.message) };
}

describe("reasoning by the descriptor", () => {
  const reasoning = { sampling: { maxTokens: 4000 } };
  it("a budget protocol gets a token budget for an effort (50% of max_tokens for medium)", () => {
    const attempt = plan({ ...NOTHING, reasoning: "budget" }, { sampling: reasoning.sampling, reasoning: { effort: "medium" } });
    expect(attempt.request.reasoning?.maxTokens).toBe(2000);
    expect(attempt.warnings).toEqual([]);
  });
  it("an effort protocol without an effort map reasons at a fixed effort, and says so", () => {
    const attempt = plan(NOTHING, { sampling: reasoning.sampling, reasoning: { effort: "medium" } });
    expect(attempt.request.reasoning?.maxTokens).toBeUndefined();
    expect(attempt.warnings).toEqual(["test/any on p reasons at a fixed effort; the requested effort was not applied"]);
  });
});

describe("cache breakpoints by the descriptor", () => {
  const withBreakpoint: RequestInit = { messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Hi" } }, cacheControl: { type: "ephemeral" } }] }] };
  it("are sent without a word where the protocol carries them", () => {
    expect(plan({ ...NOTHING, cacheControl: true }, withBreakpoint).warnings).toEqual([]);
  });
  it("are reported as not sent where it does not", () => {
    expect(plan(NOTHING, withBreakpoint).warnings).toEqual(["cache_control breakpoints are not sent to p, which caches prompts automatically"]);
  });
});

describe("media options by the descriptor", () => {
  const media: RequestInit = { media: { aspectRatio: "16:9", audioPrompt: "a tune", durationSeconds: 5 } };
  it("are kept for the modalities the protocol carries", () => {
    const attempt = plan({ ...NOTHING, mediaOptions: ["image", "audio"] }, media);
    expect(attempt.request.media).toMatchObject({ aspectRatio: "16:9", audioPrompt: "a tune", durationSeconds: 5 });
    expect(attempt.warnings).toEqual([]);
  });
  it("are dropped, with a warning, for the others", () => {
    const attempt = plan({ ...NOTHING, mediaOptions: ["audio"] }, media);
    expect(attempt.request.media).toMatchObject({ aspectRatio: "", audioPrompt: "a tune", durationSeconds: 5 });
    expect(attempt.warnings).toEqual(["aspectRatio is not supported by test/any on p and was ignored"]);
    const none = plan(NOTHING, media);
    expect(none.request.media).toMatchObject({ aspectRatio: "", audioPrompt: "", durationSeconds: undefined });
    expect(none.warnings).toEqual([
      "aspectRatio is not supported by test/any on p and was ignored",
      "prompt and duration are not supported by test/any on p and were ignored",
    ]);
  });
});

describe("pass-through fields by the descriptor", () => {
  it("those the protocol carries are sent; the others are dropped with a warning", () => {
    const attempt = plan({ ...NOTHING, passthrough: ["user"] }, { passthrough: { user: "u-1", safety_identifier: "s-1" } });
    expect(attempt.request.passthrough).toEqual({ user: "u-1" });
    expect(attempt.warnings).toEqual(["safety_identifier is not supported by test/any on p and was ignored"]);
  });
  it("a request without any leaves the request as it is", () => {
    expect(plan(NOTHING).request.passthrough).toBeUndefined();
  });
});

describe("routing's warnings", () => {
  it("are typed, each naming the parameter it concerns", () => {
    const request = create(GenerateRequestSchema, {
      model: "test/any",
      messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Hi" } }, cacheControl: { type: "ephemeral" } }] }],
      sampling: { temperature: 0.5 },
      passthrough: { user: "u-1" },
      media: { aspectRatio: "1:1" },
    });
    const { warnings } = planAttempts(request, catalogueWith(NOTHING)).attempts[0];
    expect(warnings.map((w) => [w.code, w.param])).toEqual([
      ["unsupported_parameter", "temperature"],
      ["unsupported_parameter", "aspectRatio"],
      ["unsupported_parameter", "cache_control"],
      ["unsupported_parameter", "user"],
    ]);
  });
});

describe("the 1-hour cache write price by the descriptor", () => {
  const route = (capabilities: ProtocolCapabilities, pricing?: Record<string, string>) => catalogueWith(capabilities, pricing).get("test/any")!.routes[0];
  it("is the descriptor's multiple of the prompt price when the route names none", () => {
    expect(route({ ...NOTHING, oneHourCacheWritePriceMultiple: 3 }).prices.inputCacheWrite1h).toBe(3n * route(NOTHING).prices.prompt);
  });
  it("is the cache-write price (else the prompt price) without a multiple", () => {
    expect(route(NOTHING, { input_cache_write: "0.00000125" }).prices.inputCacheWrite1h).toBe(route(NOTHING, { input_cache_write: "0.00000125" }).prices.inputCacheWrite);
    expect(route(NOTHING).prices.inputCacheWrite1h).toBe(route(NOTHING).prices.prompt);
  });
  it("is the route's own price when it names one", () => {
    const priced = route({ ...NOTHING, oneHourCacheWritePriceMultiple: 3 }, { input_cache_write_1h: "0.000005" });
    expect(priced.prices.inputCacheWrite1h).toBe(priced.prices.prompt * 5n);
  });
});

describe("chat by the descriptor", () => {
  const request = () => create(GenerateRequestSchema, { model: "test/any", messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Hi" } } }] }] });
  it("a protocol without chat (chat: false) is skipped for a chat request: a 400 naming the model, never a dispatch", () => {
    let refusal: unknown;
    try {
      planAttempts(request(), catalogueWith({ ...NOTHING, chat: false }));
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ConnectError);
    const detail = errorDetailOf(refusal as ConnectError);
    expect(detail).toMatchObject({ reason: "capability_not_supported", param: "model" });
    expect((refusal as ConnectError).rawMessage).toContain("serves chat");
  });
  it("a protocol with chat is planned", () => {
    expect(planAttempts(request(), catalogueWith(NOTHING)).attempts).toHaveLength(1);
  });
});
