// The semantic cache a core runs with: its index (Redis when REDIS_URL is
// set, shared by every instance; else this instance's memory) and its
// embedding (the configured provider's, else the built-in lexical one). A
// configured provider's cost is the gateway's own expense, recorded in the
// usage log of GATEWAY_EXPENSES, never charged to a caller.
import { randomUUID } from "node:crypto";
import type { UsageLog } from "../accounts/usage-log.ts";
import type { Environment } from "../catalogue/catalogue.ts";
import { formatMoney } from "../billing/money.ts";
import type { RouterConfig } from "../config/schema.ts";
import type { HttpClient } from "../providers/http-client.ts";
import type { Embedder } from "./embedding/embedder.ts";
import { createLexicalEmbedder } from "./embedding/lexical.ts";
import { createOpenAiEmbedder, type EmbeddingExpense } from "./embedding/openai-embeddings.ts";
import { openCacheIndex } from "./index/open-index.ts";
import { createSemanticCache, type SemanticCache } from "./semantic-cache.ts";

/** The usage log's organisation for the gateway's own expenses (a configured embedding provider's calls). */
export const GATEWAY_EXPENSES = "router:gateway";

export interface OpenSemanticCacheDeps {
  config: RouterConfig["cache"];
  env: Environment;
  now: () => Date;
  usage: Pick<UsageLog, "record">;
  /** The core's pooled HTTP client, for a configured embedding provider. */
  http: HttpClient;
  logger?: { warn(details: object, message: string): void };
}

export async function openSemanticCache(deps: OpenSemanticCacheDeps): Promise<{ cache: SemanticCache; close(): Promise<void> }> {
  const { config } = deps;
  const index = await openCacheIndex(deps.env, { maxEntriesPerPartition: config.max_entries_per_partition, maxEntryBytes: config.max_entry_bytes, logger: deps.logger });
  const cache = createSemanticCache({
    index,
    embedder: embedderOf(deps),
    settings: {
      defaultTtlSeconds: config.default_ttl_seconds,
      maxTtlSeconds: config.max_ttl_seconds,
      maxEntryBytes: config.max_entry_bytes,
      similarityThreshold: config.similarity_threshold,
    },
    now: () => deps.now().getTime(),
    logger: deps.logger,
  });
  return {
    cache,
    async close() {
      // The answers being kept are written before the index closes.
      await cache.flush();
      await index.close();
    },
  };
}

function embedderOf({ config, env, now, usage, http }: OpenSemanticCacheDeps): Embedder {
  const embedding = config.embedding;
  if (!embedding) return createLexicalEmbedder();
  const apiKey = embedding.api_key_env ? env[embedding.api_key_env] : undefined;
  const onExpense = (expense: EmbeddingExpense) => {
    const at = now().getTime();
    usage.record({
      id: `embedding_${randomUUID()}`,
      organizationId: GATEWAY_EXPENSES,
      keyId: "",
      model: expense.model,
      provider: expense.baseUrl,
      promptTokens: expense.inputTokens,
      completionTokens: 0,
      reasoningTokens: 0,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      cost: formatMoney(expense.cost),
      requestTags: ["semantic_cache_embedding"],
      latencyMs: 0,
      outcome: "ok",
      free: false,
      streamed: false,
      createdAt: at,
    });
  };
  return createOpenAiEmbedder({ config: embedding, apiKey, http, onExpense });
}
