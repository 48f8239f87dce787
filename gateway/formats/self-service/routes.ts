// The self-service endpoints OpenRouter clients call with their own key:
// GET /api/v1/key (the calling key: label, limits, spending, free quota left)
// and GET /api/v1/credits (its organisation's credits and spending), in
// OpenRouter's `{data: {...}}` shape. Each shows the caller's key and
// organisation only (docs/accounts.md, "Self-service").
import { bearerKey } from "../../credentials.ts";
import { specErrorBody } from "../../errors/spec-error-body.ts";
import { exactNumber } from "../../json.ts";
import type { GetKeyResponse } from "../../../gen/router/v1/inference_pb.js";
import type { FormatDeps, FormatRoutes, GatewayFormat } from "../format.ts";

export const selfService: GatewayFormat = { encodeError: specErrorBody, register: registerSelfServiceRoutes };

function registerSelfServiceRoutes(router: FormatRoutes, { core }: FormatDeps) {
  // `/auth/key` is the older path of the same answer, which many OpenRouter clients still call.
  for (const path of ["/api/v1/key", "/api/v1/auth/key"]) {
    router.get(path, async (ctx) => {
      const key = await core.inference.getKey({ caller: { apiKey: bearerKey(ctx.headers) } });
      ctx.body = { data: encodeKey(key) };
    });
  }

  router.get("/api/v1/credits", async (ctx) => {
    const credits = await core.inference.getCredits({ caller: { apiKey: bearerKey(ctx.headers) } });
    ctx.body = { data: { total_credits: exactNumber(credits.totalCredits), total_usage: exactNumber(credits.usage) } };
  });
}

/** Every field of OpenRouter's key object (its SDK's `apiKeys.getCurrent()` requires each), then the router's own. */
function encodeKey(key: GetKeyResponse) {
  return {
    label: key.label,
    // Keys carry no spending limit of their own: the organisation's balance is theirs.
    limit: null,
    limit_reset: null,
    limit_remaining: null,
    include_byok_in_limit: false,
    usage: exactNumber(key.usage),
    usage_daily: exactNumber(key.usageDaily),
    usage_weekly: exactNumber(key.usageWeekly),
    usage_monthly: exactNumber(key.usageMonthly),
    // The router calls providers with the operator's keys only: nothing is charged to a caller's own.
    byok_usage: 0,
    byok_usage_daily: 0,
    byok_usage_weekly: 0,
    byok_usage_monthly: 0,
    // Nothing left to spend: only `:free` models answer.
    is_free_tier: /^0(\.0*)?$/.test(key.balance),
    is_provisioning_key: false,
    is_management_key: false,
    // OpenRouter's legacy object, -1 when unknown: here the key's own limits per minute.
    rate_limit: { requests: key.rpm ?? -1, tokens: key.tpm ?? -1, interval: "1m", note: RATE_LIMIT_NOTE },
    key_id: key.keyId,
    allowed_models: key.allowedModels.length > 0 ? key.allowedModels : null,
    free_quota: key.freeQuotas.map((quota) => ({
      model: quota.modelId,
      limit: quota.limit,
      used: quota.used,
      remaining: quota.limit - quota.used,
      reset_at: new Date(Number(quota.resetAtMs)).toISOString(),
    })),
  };
}

const RATE_LIMIT_NOTE = "The key's own requests and tokens per minute; -1: none of its own (its organisation's may apply).";
