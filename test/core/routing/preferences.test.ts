// The routing preferences as planning applies them (core/routing/preferences.ts):
// ignore, sort (price, measured throughput and latency), the :nitro and :floor
// suffixes and their combinations, require_parameters and max_price. Measured
// figures are injected into a store in memory: no clock, no network.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { ConnectError, errorDetailOf } from "../../../core/errors.ts";
import { planAttempts } from "../../../core/routing/plan.ts";
import { createMemoryMeasurements } from "../../../core/route-stats/measurements.ts";
import { GenerateRequestSchema, Role } from "../../../gen/router/v1/inference_pb.js";
import { testConfig } from "../../support/harness.ts";

const catalogue = createCatalogue(testConfig("http://127.0.0.1:9/v1"), { CHEAP_KEY: "c", DEAR_KEY: "d" });

/** cheap (the cheaper route of test/ok) is slow; dear is fast and answers sooner. */
function measured() {
  const measurements = createMemoryMeasurements(1);
  measurements.record("cheap", "test/ok", { firstTokenLatencyMs: 900, throughputTokensPerSecond: 20 });
  measurements.record("dear", "test/ok", { firstTokenLatencyMs: 150, throughputTokensPerSecond: 120 });
  return measurements;
}

function request(init: MessageInitShape<typeof GenerateRequestSchema>) {
  return create(GenerateRequestSchema, { model: "test/ok", messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Hi" } } }] }], ...init });
}

function providers(init: MessageInitShape<typeof GenerateRequestSchema>, measurements = measured()) {
  return planAttempts(request(init), catalogue, { measurements }).attempts.map((attempt) => attempt.route.provider.id);
}

describe("provider.ignore", () => {
  it("never uses the providers it names", () => {
    expect(providers({})).toEqual(["cheap", "dear"]);
    expect(providers({ provider: { ignore: ["cheap"] } })).toEqual(["dear"]);
    expect(providers({ provider: { ignore: ["cheap"], order: ["cheap", "dear"] } })).toEqual(["dear"]);
  });

  it("a provider not in the configuration is the same 400 as only's and order's", () => {
    expect(() => providers({ provider: { ignore: ["nope"] } })).toThrow(/provider.ignore names a provider that does not exist: "nope"/);
  });

  it("every provider of the model ignored: no provider available, saying so", () => {
    expect(() => providers({ provider: { ignore: ["cheap", "dear"] } })).toThrow(/served only by providers that provider.ignore names \(cheap, dear\)/);
  });
});

describe("provider.sort", () => {
  it("price: cheapest first (the default order)", () => {
    expect(providers({ provider: { sort: "price" } })).toEqual(["cheap", "dear"]);
  });

  it("throughput: the highest measured first; latency: the lowest measured first", () => {
    expect(providers({ provider: { sort: "throughput" } })).toEqual(["dear", "cheap"]);
    expect(providers({ provider: { sort: "latency" } })).toEqual(["dear", "cheap"]);
    const reversed = createMemoryMeasurements(1);
    reversed.record("cheap", "test/ok", { firstTokenLatencyMs: 100, throughputTokensPerSecond: 200 });
    reversed.record("dear", "test/ok", { firstTokenLatencyMs: 150, throughputTokensPerSecond: 120 });
    expect(providers({ provider: { sort: "throughput" } }, reversed)).toEqual(["cheap", "dear"]);
    expect(providers({ provider: { sort: "latency" } }, reversed)).toEqual(["cheap", "dear"]);
  });

  it("a route not measured yet follows the measured ones, in price order", () => {
    const some = createMemoryMeasurements(1);
    some.record("dear", "test/ok", { firstTokenLatencyMs: 5000, throughputTokensPerSecond: 1 });
    expect(providers({ provider: { sort: "latency" } }, some)).toEqual(["dear", "cheap"]);
    expect(providers({ provider: { sort: "latency" } }, createMemoryMeasurements())).toEqual(["cheap", "dear"]);
  });

  it("an explicit order still wins over the sort", () => {
    expect(providers({ provider: { sort: "throughput", order: ["cheap"] } })).toEqual(["cheap", "dear"]);
  });

  it("the conversation keeper wins over the sort", () => {
    const keptByCheap = { conversation: { previousId: "rtr_1", upstream: { provider: "cheap", upstreamId: "x", historyMessages: 2 } } };
    expect(providers({ ...keptByCheap, provider: { sort: "throughput" } })).toEqual(["cheap", "dear"]);
  });
});

describe("the :nitro and :floor suffixes", () => {
  it(":nitro sorts by throughput, :floor by price", () => {
    expect(providers({ model: "test/ok:nitro" })).toEqual(["dear", "cheap"]);
    expect(providers({ model: "test/ok:floor" })).toEqual(["cheap", "dear"]);
    expect(providers({ model: "test/fail-503", models: ["test/ok:nitro"] })).toEqual(["cheap", "dear", "dear", "cheap"]);
  });

  it("combine with :thinking (in either order) and :nitro with :free", () => {
    const plan = planAttempts(request({ model: "test/thinker:thinking:nitro" }), catalogue, { measurements: measured() });
    expect(plan.attempts[0].request.reasoning?.effort).toBe("high");
    expect(planAttempts(request({ model: "test/ok:floor:thinking" }), catalogue).attempts.map((a) => a.route.provider.id)).toEqual(["cheap", "dear"]);
    const free = planAttempts(request({ model: "test/free:free:nitro" }), catalogue, { measurements: measured() });
    expect(free.free).toBe(true);
  });

  it.each([
    ["test/ok:nitro:floor", ":nitro (fastest first) and :floor (cheapest first) cannot be combined"],
    ["test/free:free:floor", ":floor (cheapest first) cannot be combined with :free"],
    ["test/ok:nitro:nitro", "the :nitro suffix is given twice"],
  ])("%s is a 400 naming the combination", (model, message) => {
    expect(() => providers({ model })).toThrow(message);
    expect(() => providers({ model })).toThrow(model);
  });

  it("a suffix that contradicts provider.sort is a 400 naming both", () => {
    expect(() => providers({ model: "test/ok:nitro", provider: { sort: "price" } })).toThrow(/test\/ok:nitro sorts providers by throughput \(:nitro\), but provider.sort asks for price/);
    expect(providers({ model: "test/ok:nitro", provider: { sort: "throughput" } })).toEqual(["dear", "cheap"]);
  });
});

describe("provider.require_parameters", () => {
  it("keeps only the routes that support every parameter sent; the others are skipped and traced", () => {
    // test/plain supports max_tokens and temperature only.
    const plan = planAttempts(request({ model: "test/ok", models: ["test/plain"], sampling: { temperature: 0.5, topP: 0.9 }, provider: { requireParameters: true } }), catalogue);
    expect(plan.attempts.map((a) => `${a.model.config.id}@${a.route.provider.id}`)).toEqual(["test/ok@cheap", "test/ok@dear"]);
    expect(plan.skipped.map((s) => `${s.modelId}@${s.provider};${s.requirement.reason}`)).toEqual(["test/plain@cheap;require_parameters"]);
  });

  it("without it, an unsupported parameter is dropped with a warning as before", () => {
    const plan = planAttempts(request({ model: "test/plain", sampling: { topP: 0.9 } }), catalogue);
    expect(plan.attempts).toHaveLength(1);
  });

  it("no provider supports them all: 400 naming the preference and the parameters", () => {
    expect(() => planAttempts(request({ model: "test/plain", sampling: { topP: 0.9 }, provider: { requireParameters: true } }), catalogue)).toThrow(
      /test\/plain lacks support for every parameter sent \(provider.require_parameters: top_p\)/,
    );
  });
});

describe("provider.max_price", () => {
  // test/ok: cheap at 1 USD per million prompt tokens, dear at 3; both 2 per million completion tokens.
  it("keeps the routes within every limit given", () => {
    expect(providers({ provider: { maxPrice: { prompt: "2" } } })).toEqual(["cheap"]);
    expect(providers({ provider: { maxPrice: { prompt: "3", completion: "2" } } })).toEqual(["cheap", "dear"]);
    expect(providers({ provider: { maxPrice: { request: "0" } } })).toEqual(["cheap", "dear"]);
  });

  it("no provider fits: 400 naming provider.max_price", () => {
    expect(() => providers({ provider: { maxPrice: { completion: "1.5" } } })).toThrow(/lacks a price within provider.max_price \(completion 1.5; prompt and completion per million tokens\)/);
    try {
      providers({ provider: { maxPrice: { completion: "1.5" } } });
    } catch (error) {
      expect(errorDetailOf(error as ConnectError)).toMatchObject({ reason: "capability_not_supported", param: "provider.max_price" });
    }
  });

  it("a limit that is not a decimal amount is a 400 naming its field", () => {
    expect(() => providers({ provider: { maxPrice: { prompt: "-1" } } })).toThrow(/provider.max_price.prompt must be a non-negative decimal amount/);
  });
});
