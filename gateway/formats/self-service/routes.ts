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

function encodeKey(key: GetKeyResponse) {
  return {
    label: key.label,
    key_id: key.keyId,
    // Keys carry no spending limit of their own: the organisation's balance is theirs.
    limit: null,
    limit_remaining: null,
    limit_reset: null,
    usage: exactNumber(key.usage),
    // Nothing left to spend: only `:free` models answer.
    is_free_tier: /^0(\.0*)?$/.test(key.balance),
    is_provisioning_key: false,
    rate_limit: { requests: key.rpm ?? null, tokens: key.tpm ?? null, interval: "1m" },
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
