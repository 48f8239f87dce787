// GET /api/v1/generation?id=<chat id>: the usage record of one earlier request,
// to a key of the organisation that made it (the shape OpenRouter clients read:
// `{data: {...}}`).
import { invalidParameter } from "../../../core/errors.ts";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { UsageRecord } from "../../../gen/router/v1/usage_pb.js";
import { bearerKey } from "../../credentials.ts";
import { specErrorBody } from "../../errors/spec-error-body.ts";
import { exactNumber } from "../../json.ts";
import type { FormatDeps, FormatRoutes, GatewayFormat } from "../format.ts";

export const generation: GatewayFormat = { encodeError: specErrorBody, register: registerGenerationRoutes };

function registerGenerationRoutes(router: FormatRoutes, { core }: FormatDeps) {
  router.get("/api/v1/generation", async (ctx) => {
    const apiKey = bearerKey(ctx.headers);
    const id = ctx.query.id;
    if (typeof id !== "string" || id === "") throw invalidParameter("id", "Query parameter id (the chat id) is required, once.");
    const { generation } = await core.inference.getGeneration({ caller: { apiKey }, id });
    ctx.body = { data: encodeGeneration(generation!) };
  });
}

function encodeGeneration(generation: UsageRecord) {
  return {
    id: generation.id,
    model: generation.model,
    provider_name: generation.provider || null,
    created_at: generation.createdAt ? timestampDate(generation.createdAt).toISOString() : null,
    tokens_prompt: generation.promptTokens,
    tokens_completion: generation.completionTokens,
    tokens_reasoning: generation.reasoningTokens,
    tokens_cached: generation.cachedTokens,
    tokens_cache_write: generation.cacheWriteTokens,
    total_cost: exactNumber(generation.cost),
    latency_ms: generation.latencyMs,
    outcome: generation.outcome,
    is_free: generation.free,
    streamed: generation.streamed,
    // Served from the semantic cache (docs/cache.md), at a tenth of the original's price.
    cache_hit: generation.cacheHit,
    cache_similarity: generation.cacheHit ? generation.cacheSimilarity : null,
    request_tags: generation.requestTags,
    api_key_id: generation.keyId,
    organization_id: generation.organizationId,
  };
}
