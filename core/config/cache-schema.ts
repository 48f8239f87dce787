// The `cache` block of the configuration: the semantic cache's expiry, sizes and
// match threshold, and the embedding provider it may use (docs/configuration.md, "cache").
import { z } from "zod";
import { environmentVariable, httpUrl } from "../config-fields.ts";

export const CACHE_DEFAULTS = {
  default_ttl_seconds: 3600,
  max_ttl_seconds: 30 * 24 * 60 * 60,
  max_entries_per_partition: 10_000,
  max_entry_bytes: 1024 * 1024,
};

const EMBEDDING_DEFAULTS = { price_per_million_tokens: "0", timeout_ms: 2000, max_input_characters: 32_000 };

/** A cosine similarity at which two prompts count as the same question. */
const threshold = z.number().min(0).max(1);

/**
 * USD per million tokens. At most 9 decimal places: a token's cost then fits the
 * 15 places of core/billing/money.ts, so every call's expense is exact.
 */
const pricePerMillion = z
  .string()
  .regex(/^\d+(\.\d{1,9})?$/, "must be a non-negative decimal string with at most 9 decimal places, such as \"0.02\"");

/** A server speaking the OpenAI embeddings protocol (OpenAI, Gemini's OpenAI-compatible endpoint, TEI, vLLM, Ollama). */
export const embeddingSchema = z
  .object({
    /** Where `/embeddings` is appended (`https://api.openai.com/v1`, `http://localhost:11434/v1`). */
    base_url: httpUrl("https://api.openai.com/v1"),
    /** The environment variable holding the bearer key; unset: no Authorization header (local servers). */
    api_key_env: environmentVariable.optional(),
    /** The server's model name, sent as `model`. */
    model: z.string().min(1),
    /** Sent as `dimensions` (models that can shorten their vectors); unset: the model's own length. */
    dimensions: z.number().int().positive().optional(),
    /** The gateway's own expense per million input tokens (`usage.prompt_tokens`), never charged to the caller. */
    price_per_million_tokens: pricePerMillion.default(EMBEDDING_DEFAULTS.price_per_million_tokens),
    /** The whole call's longest wait; past it the request is served without the cache. */
    timeout_ms: z.number().int().positive().default(EMBEDDING_DEFAULTS.timeout_ms),
    /**
     * Required: a model's similarities have a scale of their own (unrelated texts
     * score 0.1 on one model, 0.7 on another), so no default would suit every model.
     */
    similarity_threshold: threshold,
    /** A longer text is cut to its last this many characters before it is sent (its latest turn is what tells it apart). */
    max_input_characters: z.number().int().positive().default(EMBEDDING_DEFAULTS.max_input_characters),
  })
  .strict();

export const cacheSchema = z
  .object({
    /** How long an entry is kept when the request's `expiration_time` is absent, in seconds. */
    default_ttl_seconds: z.number().int().positive().default(CACHE_DEFAULTS.default_ttl_seconds),
    /** The longest `expiration_time` honoured; a longer one is served as this, with a warning. */
    max_ttl_seconds: z.number().int().positive().default(CACHE_DEFAULTS.max_ttl_seconds),
    /** Entries kept per partition; past it, the oldest are evicted. */
    max_entries_per_partition: z.number().int().positive().default(CACHE_DEFAULTS.max_entries_per_partition),
    /** A stored answer's largest size; a bigger answer is not stored. */
    max_entry_bytes: z.number().int().positive().default(CACHE_DEFAULTS.max_entry_bytes),
    /** The threshold when the request names none; unset: the embedding's own (the lexical one's, or `embedding.similarity_threshold`). */
    similarity_threshold: threshold.optional(),
    /** The embedding provider; unset: the built-in lexical embedding (works offline, no key). */
    embedding: embeddingSchema.optional(),
  })
  .strict()
  .refine((cache) => cache.default_ttl_seconds <= cache.max_ttl_seconds, {
    message: "default_ttl_seconds is longer than max_ttl_seconds",
    path: ["default_ttl_seconds"],
    // Only between two valid durations: a max_ttl_seconds of 0 is one problem, not two.
    when: (payload) => payload.issues.length === 0,
  });

export type CacheConfig = z.infer<typeof cacheSchema>;
export type EmbeddingConfig = z.infer<typeof embeddingSchema>;
