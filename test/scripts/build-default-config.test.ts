import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../core/config/load.ts";
import type { RouterConfig } from "../../core/config/schema.ts";
import {
  DEFAULT_OUTPUT_PATH,
  DEFAULT_PRICES_PATH,
  buildDefaultConfig,
  claudeVersion,
  createdFromKey,
  exactDecimal,
  UNDATED_CREATED,
} from "../../scripts/build-default-config.ts";

const SCRIPT = fileURLToPath(new URL("../../scripts/build-default-config.ts", import.meta.url));
const prices = JSON.parse(readFileSync(DEFAULT_PRICES_PATH, "utf8")) as Record<string, Record<string, unknown>>;

let dir: string;
let yaml: string;
let config: RouterConfig;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "default-config-"));
  const output = join(dir, "nested", "default.yaml");
  // The script as `npm run build:config` runs it (this Node runs TypeScript directly).
  execFileSync(process.execPath, [SCRIPT, DEFAULT_PRICES_PATH, output], { stdio: "pipe" });
  yaml = readFileSync(output, "utf8");
  config = parseConfig(yaml, output);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const route = (id: string) => config.models.find((m) => m.id === id)?.providers[0];

describe("build-default-config", () => {
  it("is byte-identical to the committed config/default.yaml (regenerate with npm run build:config)", () => {
    expect(yaml).toBe(readFileSync(DEFAULT_OUTPUT_PATH, "utf8"));
  });

  it("says it is generated", () => {
    expect(yaml.startsWith("# Bundled default configuration")).toBe(true);
    expect(yaml).toContain("do not hand-edit");
  });

  it("copies openai/gpt-4o's prices exactly from the snapshot", () => {
    const entry = prices["gpt-4o"];
    expect(entry.input_cost_per_token).toBe(2.5e-6);
    expect(route("openai/gpt-4o")).toMatchObject({
      provider: "openai",
      provider_model_id: "gpt-4o",
      pricing: { prompt: "0.0000025", completion: "0.00001", input_cache_read: "0.00000125", request: "0" },
    });
    const model = config.models.find((m) => m.id === "openai/gpt-4o")!;
    expect(model).toMatchObject({ name: "OpenAI: gpt-4o", creator: "openai", context_length: 128000, max_completion_tokens: 16384 });
    expect(model.supported_parameters).toEqual(expect.arrayContaining(["tools", "tool_choice", "response_format"]));
    expect(model.input_modalities).toEqual(["text", "image", "file"]);
  });

  it("leaves the sampling parameters out for OpenAI reasoning models, except gpt-5-chat", () => {
    const params = (id: string) => config.models.find((m) => m.id === id)!.supported_parameters;
    for (const id of ["openai/o3", "openai/o4-mini", "openai/gpt-5", "openai/gpt-5.1"]) {
      expect(params(id)).toEqual(expect.arrayContaining(["max_tokens", "stop", "seed", "reasoning"]));
      for (const sampling of ["temperature", "top_p", "frequency_penalty", "presence_penalty"]) expect(params(id)).not.toContain(sampling);
    }
    expect(params("openai/gpt-5-chat-latest")).toEqual(expect.arrayContaining(["temperature", "top_p"]));
    expect(params("openai/gpt-4o")).toEqual(expect.arrayContaining(["temperature", "top_p", "frequency_penalty", "presence_penalty"]));
  });

  it("maps only the reasoning efforts each model supports, each to itself", () => {
    expect(prices["gpt-5"]).toMatchObject({ supports_minimal_reasoning_effort: true, supports_none_reasoning_effort: false });
    expect(route("openai/gpt-5")?.reasoning_effort_map).toEqual({ minimal: "minimal", low: "low", medium: "medium", high: "high" });
    expect(route("openai/gpt-5.1")?.reasoning_effort_map).toEqual({ none: "none", minimal: "minimal", low: "low", medium: "medium", high: "high" });
    expect(route("openai/gpt-5.5")?.reasoning_effort_map).toEqual({ none: "none", low: "low", medium: "medium", high: "high" });
    expect(route("openai/o3")?.reasoning_effort_map).toEqual({ low: "low", medium: "medium", high: "high" });
    expect(route("simulator/reasoning")?.reasoning_effort_map).toEqual({ low: "low", medium: "medium", high: "high" });
    // Simulator models that do not reason get none.
    for (const id of ["simulator/audio", "simulator/image", "simulator/video"]) expect(route(id)?.reasoning_effort_map).toBeUndefined();
    expect(route("openai/gpt-4o")?.reasoning_effort_map).toBeUndefined();
  });

  it("sends no reasoning_effort to vendors that choose reasoning by model", () => {
    for (const id of ["deepseek/deepseek-reasoner", "moonshot/kimi-k2.6", "xai/grok-4.20-0309-reasoning"]) {
      expect(config.models.find((m) => m.id === id)!.supported_parameters).toContain("reasoning");
      expect(route(id)?.reasoning_effort_map).toBeUndefined();
    }
    expect(route("xai/grok-4.3")?.reasoning_effort_map).toEqual({ low: "low", medium: "medium", high: "high" });
    expect(config.models.find((m) => m.id === "deepseek/deepseek-chat")!.supported_parameters).not.toContain("reasoning");
  });

  it("matches every generated upstream price to the snapshot", () => {
    // The simulator's, BFL's, Kling's and Vertex's models, and OpenAI's image models (priced per image), are not from the snapshot (their prices are their own pages').
    for (const model of config.models.filter((m) => m.creator !== "simulator" && !["bfl", "kling", "vertex"].includes(m.providers[0].provider) && !m.output_modalities.includes("image"))) {
      const [{ provider_model_id, pricing }] = model.providers;
      const entry = prices[provider_model_id];
      expect(Number(pricing.prompt)).toBe(entry.input_cost_per_token);
      expect(Number(pricing.completion)).toBe(entry.output_cost_per_token);
      // Audio, image and video output tokens at their own prices where the snapshot has them.
      for (const modality of ["audio", "image", "video"] as const) {
        const own = (entry as Record<string, unknown>)[`output_cost_per_${modality}_token`];
        const priced = (pricing as Record<string, string | undefined>)[`completion_${modality}`];
        expect(priced === undefined ? undefined : Number(priced), `${model.id} completion_${modality}`).toBe(own);
      }
    }
  });

  it("has the upstream and simulator providers, and the development organisation", () => {
    expect(config.providers.map((p) => [p.id, p.protocol])).toEqual([
      ["openai", "openai-compatible"],
      ["anthropic", "anthropic"],
      ["google", "gemini"],
      ["xai", "openai-compatible"],
      ["deepseek", "openai-compatible"],
      ["moonshot", "openai-compatible"],
      ["bfl", "bfl"],
      ["kling", "kling"],
      ["vertex", "vertex"],
      ["simulator", "simulator"],
      ["simulator-backup", "simulator"],
    ]);
    expect(config.providers.find((p) => p.id === "openai")?.quirks.max_tokens_field).toBe("max_completion_tokens");
    // toMatchObject: fields the schema defaults (the accounts work adds some) are not this test's business.
    expect(config.organizations).toMatchObject([
      { id: "org_dev", name: "Development", keys: [{ id: "key_dev", env: "ROUTER_DEV_KEY", disabled: false }] },
    ]);
    const perProvider = (id: string) => config.models.filter((m) => m.providers.some((p) => p.provider === id)).length;
    for (const id of ["openai", "anthropic", "google", "xai", "deepseek", "moonshot", "bfl", "kling", "vertex", "simulator"]) expect(perProvider(id)).toBeGreaterThan(0);
  });

  it("lists only the sampling fields each protocol carries, and effort maps only where an effort is taken", () => {
    const model = (id: string) => config.models.find((m) => m.id === id)!;
    const haiku = model("anthropic/claude-haiku-4-5");
    expect(haiku.supported_parameters).toEqual(["max_tokens", "temperature", "top_p", "top_k", "stop", "tools", "tool_choice", "response_format", "reasoning"]);
    // Budget thinking: routing sizes it, so no effort map.
    expect(haiku.providers[0].reasoning_effort_map).toBeUndefined();
    // Adaptive thinking takes an effort.
    expect(model("anthropic/claude-opus-4-6").providers[0].reasoning_effort_map).toEqual({ low: "low", medium: "medium", high: "high" });
    const flash = model("google/gemini-flash-latest");
    expect(flash.supported_parameters).toContain("seed");
    expect(flash.input_modalities).toEqual(["text", "image", "file"]);
    expect(model("google/gemini-pro-latest").input_modalities).toEqual(["text", "image", "file", "audio", "video"]);
  });

  it("lists response_format for Claude models only from the 4.5 generation, which take output_config.format", () => {
    const params = (id: string) => config.models.find((m) => m.id === id)!.supported_parameters;
    for (const id of ["anthropic/claude-haiku-4-5", "anthropic/claude-sonnet-4-5-20250929", "anthropic/claude-opus-4-5", "anthropic/claude-opus-4-6", "anthropic/claude-sonnet-4-6", "anthropic/claude-opus-5", "anthropic/claude-sonnet-5"]) {
      expect(params(id)).toContain("response_format");
    }
    for (const id of ["anthropic/claude-3-7-sonnet-20250219", "anthropic/claude-3-haiku-20240307", "anthropic/claude-4-opus-20250514", "anthropic/claude-sonnet-4-20250514", "anthropic/claude-opus-4-20250514", "anthropic/claude-opus-4-1", "anthropic/claude-opus-4-1-20250805"]) {
      expect(prices[id.slice("anthropic/".length)].supports_response_schema).toBe(true);
      expect(params(id)).not.toContain("response_format");
      expect(params(id)).toContain("tools");
    }
    // Other vendors keep the snapshot's word.
    expect(params("openai/gpt-4o")).toContain("response_format");
  });

  it.each([
    ["claude-3-7-sonnet-20250219", { major: 3, minor: 7 }],
    ["claude-4-opus-20250514", { major: 4, minor: 0 }],
    ["claude-opus-4-20250514", { major: 4, minor: 0 }],
    ["claude-opus-4-1", { major: 4, minor: 1 }],
    ["claude-haiku-4-5-20251001", { major: 4, minor: 5 }],
    ["claude-opus-4-6-thinking", { major: 4, minor: 6 }],
    ["claude-sonnet-5", { major: 5, minor: 0 }],
    ["claude-instant", undefined],
  ])("reads the Claude generation of %s", (key, version) => {
    expect(claudeVersion(key)).toEqual(version);
  });

  it("has DeepSeek and Moonshot send earlier reasoning back as reasoning_content, and no one else", () => {
    const passback = (id: string) => config.providers.find((p) => p.id === id)?.quirks.reasoning_passback;
    expect(passback("deepseek")).toBe("reasoning_content");
    expect(passback("moonshot")).toBe("reasoning_content");
    for (const id of ["openai", "xai"]) expect(passback(id)).toBe("none");
  });

  it("serves simulator/fallback cheapest-first from a failing route, then the backup", () => {
    const fallback = config.models.find((m) => m.id === "simulator/fallback")!;
    expect(fallback.providers.map((p) => [p.provider, p.provider_model_id])).toEqual([
      ["simulator", "error-503"],
      ["simulator-backup", "echo"],
    ]);
    const [failing, backup] = fallback.providers.map((p) => Number(p.pricing.prompt) + Number(p.pricing.completion));
    expect(failing).toBeLessThan(backup);
    expect(route("simulator/echo")?.free).toEqual({ enabled: true, daily_quota: 10 });
  });

  it("scores the chat models router/auto may pick, and none of the specialists or the simulator's test behaviours", () => {
    const quality = (id: string) => config.models.find((m) => m.id === id)?.quality;
    expect(quality("openai/gpt-5-nano")!.coding).toBeLessThan(quality("openai/gpt-5")!.coding!);
    expect(quality("openai/o3")!.math).toBeGreaterThan(quality("openai/gpt-4.1")!.math!);
    expect(quality("openai/gpt-4o")!.vision).toBeDefined();
    expect(quality("deepseek/deepseek-chat")!.vision).toBeUndefined();
    for (const id of ["openai/gpt-4o-audio-preview", "openai/gpt-5-search-api", "openai/gpt-image-1.5", "simulator/error-503", "simulator/fallback", "bfl/flux-2-pro"]) {
      expect(quality(id), id).toBeUndefined();
    }
    // With no provider key set, router/auto answers with the simulator, which any real model outscores.
    expect(Math.max(...Object.values(quality("simulator/echo")!))).toBeLessThan(Math.min(...Object.values(quality("openai/gpt-3.5-turbo")!)));
  });

  it("is sorted by model id", () => {
    const ids = config.models.map((m) => m.id);
    expect(ids).toEqual([...ids].sort());
  });

  it("leaves out models without a price, and ones without a chat completions endpoint", () => {
    const fixture = join(dir, "prices.json");
    writeFileSync(
      fixture,
      JSON.stringify({
        "priced-model": { litellm_provider: "openai", mode: "chat", input_cost_per_token: 1e-6, output_cost_per_token: 2e-6, max_input_tokens: 1000, max_output_tokens: 100 },
        "no-output-price": { litellm_provider: "openai", mode: "chat", input_cost_per_token: 1e-6, max_input_tokens: 1000, max_output_tokens: 100 },
        "no-price": { litellm_provider: "xai", mode: "chat", max_input_tokens: 1000, max_output_tokens: 100 },
        "voice-only": { litellm_provider: "openai", mode: "chat", input_cost_per_token: 1e-6, output_cost_per_token: 2e-6, max_input_tokens: 1000, max_output_tokens: 100, supported_endpoints: ["/v1/realtime"] },
        "embedder": { litellm_provider: "openai", mode: "embedding", input_cost_per_token: 1e-6, output_cost_per_token: 0 },
      }),
    );
    const ids = buildDefaultConfig(readFileSync(fixture, "utf8")).config.models.map((m) => m.id);
    expect(ids.filter((id) => !id.startsWith("simulator/") && !id.startsWith("bfl/") && !id.startsWith("kling/") && !id.startsWith("google/veo-") && !id.startsWith("openai/gpt-image-"))).toEqual(["openai/priced-model"]);
  });
});

describe("exactDecimal", () => {
  it("writes the number's exact decimal form", () => {
    expect(exactDecimal(2.5e-6)).toBe("0.0000025");
    expect(exactDecimal(1e-5)).toBe("0.00001");
    expect(exactDecimal(3.625e-9)).toBe("0.000000003625");
    expect(exactDecimal(9.54e-7)).toBe("0.000000954");
    expect(exactDecimal(0.0275)).toBe("0.0275");
    expect(exactDecimal(0)).toBe("0");
    expect(exactDecimal(15)).toBe("15");
    expect(exactDecimal(1.1)).toBe("1.1");
    expect(exactDecimal(1e21)).toBe("1000000000000000000000");
  });

  it("shifts the decimal point without float multiplication", () => {
    expect(exactDecimal(0.0275, 3)).toBe("27.5");
    expect(exactDecimal(0.03, 3)).toBe("30");
    expect(exactDecimal(1.5e-7, 3)).toBe("0.00015");
  });

  it("rejects what is not a price", () => {
    expect(() => exactDecimal(-1)).toThrow();
    expect(() => exactDecimal(Number.NaN)).toThrow();
  });
});

describe("createdFromKey", () => {
  it("reads a full date from the key", () => {
    expect(createdFromKey("gpt-4o-2024-08-06")).toBe(Date.UTC(2024, 7, 6) / 1000);
    expect(createdFromKey("claude-3-haiku-20240307")).toBe(Date.UTC(2024, 2, 7) / 1000);
  });

  it("uses the documented constant when there is no full date", () => {
    expect(createdFromKey("gpt-4o")).toBe(UNDATED_CREATED);
    expect(createdFromKey("gpt-4-0613")).toBe(UNDATED_CREATED);
    expect(createdFromKey("model-2024-13-45")).toBe(UNDATED_CREATED);
  });
});
