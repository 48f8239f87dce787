// The `cache` block: its defaults, the embedding server's, and every refusal
// named by its dotted path, as the rest of the configuration is.
import { describe, expect, it } from "vitest";
import { CACHE_DEFAULTS } from "../../../core/config/cache-schema.ts";
import { ConfigError, parseConfig } from "../../../core/config/load.ts";

const EMBEDDING = { base_url: "https://api.openai.com/v1", api_key_env: "OPENAI_API_KEY", model: "text-embedding-3-small", similarity_threshold: 0.9 };

function configWith(cache: unknown) {
  const config = { providers: [{ id: "simulator", label: "Simulator", protocol: "simulator" }], models: [], ...(cache !== undefined && { cache }) };
  return parseConfig(JSON.stringify(config), "router.yaml");
}

/** The problems parseConfig reports for a `cache` block (fails the test if it is accepted). */
function problemsOf(cache: unknown): string[] {
  try {
    configWith(cache);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error("the configuration was accepted");
}

describe("cache defaults", () => {
  it("fills the whole block when it is absent: an hour, 30 days at most, 10,000 entries, 1 MiB, the lexical embedding", () => {
    const { cache } = configWith(undefined);
    expect(cache).toEqual({ default_ttl_seconds: 3600, max_ttl_seconds: 2_592_000, max_entries_per_partition: 10_000, max_entry_bytes: 1_048_576 });
    expect(cache).toEqual(CACHE_DEFAULTS);
    expect(cache.embedding).toBeUndefined();
    expect(cache.similarity_threshold).toBeUndefined();
  });

  it("fills each field left out of a block given in part", () => {
    expect(configWith({ max_entries_per_partition: 50, similarity_threshold: 0.97 }).cache).toEqual({ ...CACHE_DEFAULTS, max_entries_per_partition: 50, similarity_threshold: 0.97 });
  });

  it("fills an embedding server's price, timeout and input cut, and sends no dimensions unless asked", () => {
    expect(configWith({ embedding: EMBEDDING }).cache.embedding).toEqual({ ...EMBEDDING, price_per_million_tokens: "0", timeout_ms: 2000, max_input_characters: 32_000 });
  });

  it("takes a local server with no key, with its dimensions and thresholds at their edges", () => {
    const embedding = { base_url: "http://localhost:11434/v1", model: "nomic-embed-text", dimensions: 256, similarity_threshold: 1, price_per_million_tokens: "0.02" };
    const { cache } = configWith({ similarity_threshold: 0, embedding });
    expect(cache.embedding).toMatchObject(embedding);
    expect(cache.embedding?.api_key_env).toBeUndefined();
    expect(cache.similarity_threshold).toBe(0);
  });
});

describe("cache refusals", () => {
  it.each<[string, unknown, RegExp]>([
    ["an unknown field", { max_entries: 10 }, /^cache\.max_entries: unknown key; did you mean "max_entries_per_partition"/],
    ["an unknown embedding field", { embedding: { ...EMBEDDING, api_key: "sk-..." } }, /^cache\.embedding\.api_key: unknown key/],
    ["a threshold above 1", { similarity_threshold: 1.01 }, /^cache\.similarity_threshold: /],
    ["a negative threshold", { similarity_threshold: -0.1 }, /^cache\.similarity_threshold: /],
    ["an embedding threshold above 1", { embedding: { ...EMBEDDING, similarity_threshold: 1.5 } }, /^cache\.embedding\.similarity_threshold: /],
    ["an embedding without its threshold", { embedding: { ...EMBEDDING, similarity_threshold: undefined } }, /^cache\.embedding\.similarity_threshold: /],
    ["an embedding without its model", { embedding: { ...EMBEDDING, model: undefined } }, /^cache\.embedding\.model: /],
    ["a ttl of 0", { default_ttl_seconds: 0 }, /^cache\.default_ttl_seconds: /],
    ["a maximum ttl of 0", { max_ttl_seconds: 0 }, /^cache\.max_ttl_seconds: /],
    ["a ttl in fractions of a second", { default_ttl_seconds: 1.5 }, /^cache\.default_ttl_seconds: /],
    ["a default ttl past the maximum", { default_ttl_seconds: 7200, max_ttl_seconds: 3600 }, /^cache\.default_ttl_seconds: default_ttl_seconds is longer than max_ttl_seconds/],
    ["no entries per partition", { max_entries_per_partition: 0 }, /^cache\.max_entries_per_partition: /],
    ["an entry size of 0", { max_entry_bytes: 0 }, /^cache\.max_entry_bytes: /],
    ["a base_url without a scheme", { embedding: { ...EMBEDDING, base_url: "localhost:8080/v1" } }, /^cache\.embedding\.base_url: must be an http/],
    ["a key variable that is not a variable name", { embedding: { ...EMBEDDING, api_key_env: "sk-123" } }, /^cache\.embedding\.api_key_env: /],
    ["dimensions of 0", { embedding: { ...EMBEDDING, dimensions: 0 } }, /^cache\.embedding\.dimensions: /],
    ["a price as a number", { embedding: { ...EMBEDDING, price_per_million_tokens: 0.02 } }, /^cache\.embedding\.price_per_million_tokens: /],
    ["a price finer than a billionth", { embedding: { ...EMBEDDING, price_per_million_tokens: "0.0000000001" } }, /^cache\.embedding\.price_per_million_tokens: .*9 decimal places/],
    ["a timeout of 0", { embedding: { ...EMBEDDING, timeout_ms: 0 } }, /^cache\.embedding\.timeout_ms: /],
    ["an input cut of 0", { embedding: { ...EMBEDDING, max_input_characters: 0 } }, /^cache\.embedding\.max_input_characters: /],
  ])("refuses %s", (_, cache, problem) => {
    expect(problemsOf(cache)).toEqual([expect.stringMatching(problem)]);
  });
});
