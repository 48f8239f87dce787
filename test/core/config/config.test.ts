// Configuration validation (every problem named by its dotted path), the default
// configuration, and the exact money arithmetic that prices requests.
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfigFile, parseConfig } from "../../../core/config/load.ts";
import { costOf, type TokenPrices } from "../../../core/billing/cost.ts";
import { formatMoney, parseMoney } from "../../../core/billing/money.ts";
import type { UsageCounts } from "../../../core/billing/cost.ts";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { create } from "@bufbuild/protobuf";
import { Modality, ModalityTokensSchema } from "../../../gen/router/v1/inference_pb.js";

/** A small valid configuration; each test breaks one thing in a copy. */
function validConfig() {
  return {
    providers: [
      { id: "simulator", label: "Simulator", protocol: "simulator" },
      { id: "cloud", label: "Cloud", protocol: "openai-compatible", base_url: "https://cloud.example/v1", api_key_env: "CLOUD_KEY" },
    ],
    models: [
      {
        id: "simulator/echo",
        name: "Echo",
        created: 1700000000,
        creator: "simulator",
        context_length: 8192,
        max_completion_tokens: 1024,
        input_modalities: ["text"],
        output_modalities: ["text"],
        supported_parameters: ["max_tokens"],
        providers: [{ provider: "simulator", provider_model_id: "echo", pricing: { prompt: "0", completion: "0" } }],
      },
      {
        id: "cloud/big",
        name: "Big",
        created: 1700000000,
        creator: "cloud",
        context_length: 128000,
        max_completion_tokens: 4096,
        input_modalities: ["text"],
        output_modalities: ["text"],
        supported_parameters: ["max_tokens", "temperature"],
        providers: [{ provider: "cloud", provider_model_id: "big", pricing: { prompt: "0.0000025", completion: "0.00001" } }],
      },
    ],
    organizations: [{ id: "org", name: "Org", keys: [{ id: "key_dev", env: "ROUTER_DEV_KEY" }] }],
  };
}

type Config = ReturnType<typeof validConfig>;

/** The problems parseConfig reports for a configuration (fails the test if it is accepted). */
function problemsOf(edit: (config: Config) => void): string[] {
  const config = validConfig();
  edit(config);
  try {
    parseConfig(JSON.stringify(config), "router.yaml");
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain("router.yaml");
    return (error as ConfigError).problems;
  }
  throw new Error("the configuration was accepted");
}

describe("parseConfig", () => {
  it("accepts the valid base configuration and fills defaults", () => {
    const config = parseConfig(JSON.stringify(validConfig()));
    expect(config.id_prefix).toBe("rtr");
    expect(config.models[1].providers[0].pricing.request).toBe("0");
    expect(config.providers[1].timeout_ms).toBe(60_000);
  });

  it("accepts YAML text", () => {
    const config = parseConfig(
      [
        "providers:",
        "  - {id: simulator, label: Simulator, protocol: simulator}",
        "models: []",
      ].join("\n"),
    );
    expect(config.providers.map((p) => p.id)).toEqual(["simulator"]);
  });

  it("rejects a model that refers to an unknown provider", () => {
    const problems = problemsOf((c) => (c.models[1].providers[0].provider = "nowhere"));
    expect(problems).toEqual([expect.stringMatching(/^models\.1\.providers\.0\.provider: .*unknown provider "nowhere"/)]);
  });

  it("rejects a duplicate model id", () => {
    const problems = problemsOf((c) => c.models.push({ ...c.models[0] }));
    expect(problems).toEqual([expect.stringMatching(/^models\.2: .*duplicate model id "simulator\/echo"/)]);
  });

  it.each(["1e-6", "-1", "0.5.1", "", " 1", "$1"])("rejects the price %j", (price) => {
    const problems = problemsOf((c) => (c.models[1].providers[0].pricing.prompt = price));
    expect(problems).toEqual([expect.stringMatching(/^models\.1\.providers\.0\.pricing\.prompt: .*decimal/)]);
  });

  it("rejects a price given as a number rather than a decimal string", () => {
    const problems = problemsOf((c) => ((c.models[1].providers[0].pricing as Record<string, unknown>).completion = 0.00001));
    expect(problems).toEqual([expect.stringMatching(/^models\.1\.providers\.0\.pricing\.completion: /)]);
  });

  it.each([
    ["0.0000025", ', as "0.0000025"'],
    [".5", ', as "0.5"'],
    ["1e-7", ', as "0.0000001"'],
    ["2.5E+2", ', as "250"'],
    ["-1", ""],
    ["0x10", ""],
  ])("says to quote the number %s where a decimal string is expected, spelt as a price takes it", (written, suggestion) => {
    const text = `providers: [{id: s, label: S, protocol: simulator}]\nmodels: []\norganizations: [{id: o, name: O, credits: ${written}}]\n`;
    expect(() => parseConfig(text)).toThrow(
      expect.objectContaining({ problems: [`organizations.0.credits: expected a string, got the number ${written}: put it in quotes${suggestion} (line 3)`] }),
    );
  });

  it("rejects a model route without a price", () => {
    const problems = problemsOf((c) => delete (c.models[1].providers[0].pricing as Partial<{ prompt: string }>).prompt);
    expect(problems).toEqual([expect.stringMatching(/^models\.1\.providers\.0\.pricing\.prompt: /)]);
  });

  it("rejects an openai-compatible provider without base_url", () => {
    const problems = problemsOf((c) => delete (c.providers[1] as Partial<(typeof c.providers)[1]>).base_url);
    expect(problems).toEqual([expect.stringMatching(/^providers\.1\.base_url: required for protocol openai-compatible/)]);
  });

  it.each(["ftp://cloud.example/v1", "localhost:11434/v1", "cloud.example", "not a url"])("rejects the base_url %j: an http(s) URL is expected", (url) => {
    const problems = problemsOf((c) => (c.providers[1].base_url = url));
    expect(problems).toEqual([
      `providers.1.base_url: must be an http:// or https:// URL (for example https://api.openai.com/v1), got ${JSON.stringify(url)} (line 1)`,
    ]);
  });

  it("rejects a key with both sha256 and env", () => {
    const problems = problemsOf((c) => Object.assign(c.organizations[0].keys[0], { sha256: "a".repeat(64) }));
    expect(problems).toEqual([expect.stringMatching(/^organizations\.0\.keys\.0: .*exactly one of sha256 and env/)]);
  });

  it("rejects a key with neither sha256 nor env", () => {
    const problems = problemsOf((c) => delete (c.organizations[0].keys[0] as Partial<{ env: string }>).env);
    expect(problems).toEqual([expect.stringMatching(/^organizations\.0\.keys\.0: .*exactly one of sha256 and env/)]);
  });

  it("rejects unknown fields rather than ignoring them", () => {
    const problems = problemsOf((c) => Object.assign(c.providers[1], { api_key: "sk-oops" }));
    expect(problems).toEqual(['providers.1.api_key: unknown key; did you mean "api_key_env"? (line 1)']);
  });

  it("reports every problem at once, each with its own path", () => {
    const problems = problemsOf((c) => {
      c.models[1].providers[0].pricing.prompt = "1e-6";
      c.models[0].input_modalities = ["smell"];
    });
    expect(problems).toHaveLength(2);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^models\.1\.providers\.0\.pricing\.prompt: /),
        expect.stringMatching(/^models\.0\.input_modalities\.0: /),
      ]),
    );
  });

  it("reports unparseable text as a configuration error", () => {
    expect(() => parseConfig("providers: [", "broken.yaml")).toThrow(ConfigError);
  });

  it("accepts the bundled default configuration", () => {
    const config = loadConfigFile();
    expect(config.providers.some((p) => p.protocol === "simulator")).toBe(true);
    expect(config.models.find((m) => m.id === "simulator/echo")).toBeDefined();
    expect(config.organizations.flatMap((o) => o.keys).some((k) => k.env === "ROUTER_DEV_KEY")).toBe(true);
  });

  it("names the file when it cannot be read", () => {
    expect(() => loadConfigFile("/nonexistent/router.yaml")).toThrow(/\/nonexistent\/router\.yaml/);
  });
});

describe("money", () => {
  it.each([
    ["0.0000025", 2_500_000_000n],
    ["0", 0n],
    ["12.5", 12_500_000_000_000_000n],
    ["0.000000000000001", 1n],
    ["1", 1_000_000_000_000_000n],
    ["123456789.123456789012345", 123_456_789_123_456_789_012_345n],
  ])("parses %s exactly and formats it back unchanged", (text, amount) => {
    expect(parseMoney(text)).toBe(amount);
    expect(formatMoney(amount)).toBe(text);
  });

  it("formats the shortest exact decimal", () => {
    expect(formatMoney(parseMoney("12.50"))).toBe("12.5");
    expect(formatMoney(parseMoney("0.000001000"))).toBe("0.000001");
    expect(formatMoney(parseMoney("007"))).toBe("7");
  });

  it("accepts trailing zeros past the 15th decimal but rejects more precision", () => {
    expect(parseMoney("0.0000000000000010")).toBe(1n);
    expect(() => parseMoney("0.0000000000000001")).toThrow(/15 decimal places/);
    expect(() => parseMoney("1.0000000000000005")).toThrow(/15 decimal places/);
  });

  it.each(["1e-6", "-1", "", ".5", "1.", "0x10", "1,5"])("rejects %j", (text) => {
    expect(() => parseMoney(text)).toThrow();
  });

  it("adds without float drift", () => {
    expect(formatMoney(parseMoney("0.1") + parseMoney("0.2"))).toBe("0.3");
  });
});

describe("costOf", () => {
  const usage = (u: Partial<UsageCounts>): UsageCounts => ({
    inputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 0,
    reasoningTokens: 0,
    ...u,
  });
  const prices = (p: Partial<Record<keyof TokenPrices, string>>): TokenPrices => ({
    prompt: parseMoney(p.prompt ?? "0"),
    completion: parseMoney(p.completion ?? "0"),
    request: parseMoney(p.request ?? "0"),
    inputCacheRead: parseMoney(p.inputCacheRead ?? "0"),
    inputCacheWrite: parseMoney(p.inputCacheWrite ?? "0"),
    inputCacheWrite1h: parseMoney(p.inputCacheWrite1h ?? "0"),
  });

  it("charges 1,000,000 prompt tokens at 0.0000025 exactly 2.5", () => {
    expect(formatMoney(costOf(usage({ inputTokens: 1_000_000 }), prices({ prompt: "0.0000025" })))).toBe("2.5");
  });

  it("charges completion tokens at the completion price", () => {
    expect(formatMoney(costOf(usage({ outputTokens: 3 }), prices({ completion: "0.00001" })))).toBe("0.00003");
  });

  it("charges cached and cache-write tokens at their own rates, not as prompt tokens", () => {
    const cost = costOf(
      usage({ inputTokens: 1000, cachedInputTokens: 400, cacheWriteTokens: 100 }),
      prices({ prompt: "0.000003", inputCacheRead: "0.0000003", inputCacheWrite: "0.00000375" }),
    );
    // 500 uncached * 0.000003 + 400 * 0.0000003 + 100 * 0.00000375 = 0.0015 + 0.00012 + 0.000375
    expect(formatMoney(cost)).toBe("0.001995");
  });

  it("charges cache writes kept an hour at their own rate, the rest of the writes at the 5-minute rate", () => {
    const cost = costOf(
      usage({ inputTokens: 300, cacheWriteTokens: 300, cacheWrite1hTokens: 100 }),
      prices({ prompt: "0.000003", inputCacheWrite: "0.00000375", inputCacheWrite1h: "0.000006" }),
    );
    // 200 * 0.00000375 + 100 * 0.000006 = 0.00075 + 0.0006
    expect(formatMoney(cost)).toBe("0.00135");
  });

  it("charges output tokens of a modality with a price of its own at that price, the rest of the output at the completion price", () => {
    const byModality = { ...prices({ completion: "0.00001" }), completionByModality: { [Modality.VIDEO]: parseMoney("0.0001"), [Modality.IMAGE]: parseMoney("0.00003") } };
    const outputByModality = [
      create(ModalityTokensSchema, { modality: Modality.TEXT, tokens: 10 }),
      create(ModalityTokensSchema, { modality: Modality.VIDEO, tokens: 100 }),
      create(ModalityTokensSchema, { modality: Modality.IMAGE, tokens: 20 }),
    ];
    // 100 x 0.0001 + 20 x 0.00003 + (150 - 120) x 0.00001 (text and thoughts, whatever the provider left unlisted)
    expect(formatMoney(costOf(usage({ outputTokens: 150, outputByModality }), byModality))).toBe("0.0109");
    // Never more tokens at a modality's price than the output has; without prices by modality, all at completion.
    expect(formatMoney(costOf(usage({ outputTokens: 50, outputByModality }), byModality))).toBe("0.005");
    expect(formatMoney(costOf(usage({ outputTokens: 150, outputByModality }), prices({ completion: "0.00001" })))).toBe("0.0015");
  });

  it("reads completion_image, completion_audio and completion_video from a route's pricing", () => {
    const config = validConfig();
    const route = (config.models[0] as { providers: { pricing: Record<string, string> }[] }).providers[0];
    route.pricing = { ...route.pricing, completion_video: "0.0001", completion_audio: "0.00002" };
    const [model] = createCatalogue(parseConfig(JSON.stringify(config)), {}).models;
    expect(model.routes[0].prices.completionByModality).toEqual({ [Modality.VIDEO]: parseMoney("0.0001"), [Modality.AUDIO]: parseMoney("0.00002") });
  });

  it.each([
    ["anthropic", "0.000006"],
    ["openai-compatible", "0.000003"],
  ])("defaults the 1-hour write price on a %s route to %s (Anthropic's rate is twice the prompt; elsewhere the write price)", (protocol, expected) => {
    const catalogue = createCatalogue(
      parseConfig(
        JSON.stringify({
          providers: [{ id: "p", label: "P", protocol, base_url: "http://127.0.0.1:9" }],
          models: [
            {
              id: "a/b", name: "b", created: 1, creator: "a", context_length: 10, max_completion_tokens: 10,
              input_modalities: ["text"], output_modalities: ["text"], supported_parameters: [],
              providers: [{ provider: "p", provider_model_id: "b", pricing: { prompt: "0.000003", completion: "0" } }],
            },
          ],
        }),
      ),
      {},
    );
    expect(formatMoney(catalogue.get("a/b")!.routes[0].prices.inputCacheWrite1h)).toBe(expected);
  });

  it("counts reasoning tokens as completion tokens (once, not twice)", () => {
    const withReasoning = costOf(usage({ outputTokens: 200, reasoningTokens: 150 }), prices({ completion: "0.00001" }));
    const withoutReasoning = costOf(usage({ outputTokens: 200 }), prices({ completion: "0.00001" }));
    expect(formatMoney(withReasoning)).toBe("0.002");
    expect(withReasoning).toBe(withoutReasoning);
  });

  it("adds the per-request fee", () => {
    expect(formatMoney(costOf(usage({}), prices({ request: "0.005" })))).toBe("0.005");
  });

  it("is exact for everything together, with prices that floats cannot represent", () => {
    const cost = costOf(
      usage({ inputTokens: 123_457, cachedInputTokens: 23_456, cacheWriteTokens: 1, outputTokens: 7_891, reasoningTokens: 4_000 }),
      prices({ prompt: "0.0000001", completion: "0.0000003", inputCacheRead: "0.00000001", inputCacheWrite: "0.00000013", request: "0.0001" }),
    );
    // 100000 * 0.0000001 = 0.01; 23456 * 0.00000001 = 0.00023456; 1 * 0.00000013;
    // 7891 * 0.0000003 = 0.0023673; fee 0.0001  => 0.01270199
    expect(formatMoney(cost)).toBe("0.01270199");
  });

  it("never charges a negative uncached prompt when the provider over-reports cache tokens", () => {
    const cost = costOf(usage({ inputTokens: 10, cachedInputTokens: 20 }), prices({ prompt: "1", inputCacheRead: "0.1" }));
    expect(formatMoney(cost)).toBe("2");
  });
});
