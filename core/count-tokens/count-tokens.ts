// CountTokens: the input tokens a request would be charged for on the route
// Generate would serve it by (the first attempt of the same plan: model
// resolution, suffixes, capabilities), without running it. The caller's key
// is checked (401 first) and its model allow-list applies, but nothing is
// admitted: no hold, no free-quota unit, no rate-limit window, no usage record.
// Exact where the provider counts (its adapter's countTokens: Anthropic,
// Gemini), an estimate elsewhere (estimate.ts). docs/count-tokens.md.
import { create } from "@bufbuild/protobuf";
import { CountTokensResponseSchema, type CountTokensRequest, type CountTokensResponse } from "../../gen/router/v1/inference_pb.js";
import { authenticate } from "../accounts/check-key.ts";
import { refusalError } from "../accounts/refusals.ts";
import type { KeyRecord } from "../accounts/store.ts";
import { previousNotFound, referenceParam } from "../conversations/conversations.ts";
import { callerWentAway, invalidParameter } from "../errors.ts";
import { tokenEstimateOf } from "../providers/registry.ts";
import { UpstreamError, type UpstreamCall } from "../providers/types.ts";
import { planAttempts, type Attempt } from "../routing/plan.ts";
import { traceEntry, upstreamRejected, type InferenceDeps } from "../routing/run-inference.ts";
import { estimateInputTokens } from "./estimate.ts";

export async function countTokens(count: CountTokensRequest, signal: AbortSignal, deps: InferenceDeps): Promise<CountTokensResponse> {
  let request = count.request;
  if (!request) throw invalidParameter("request", "CountTokens needs the request to count.");
  const key = await authenticate(deps.accounts, request.caller);
  // A stored conversation's history is part of the prompt, as for Generate.
  if (request.conversation?.previousId) {
    if (!deps.conversations) throw previousNotFound(request.conversation.previousId, referenceParam(request));
    request = await deps.conversations.expand(request, key.organizationId);
  }
  const plan = planAttempts(request, deps.catalogue, { measurements: deps.measurements, caller: key });
  checkAllowed(key, plan.namedModelIds, deps.now().getTime());
  const attempt = plan.attempts[0];
  const { exact, inputTokens } = await countOn(attempt, signal, deps);
  return create(CountTokensResponseSchema, { inputTokens, exact, modelId: attempt.model.config.id, provider: attempt.route.provider.id });
}

/** The key's allow-list, as admission would apply it (a key limited to some models learns nothing of the others). */
function checkAllowed(key: KeyRecord, modelIds: string[], now: number) {
  if (key.allowedModels.length === 0) return;
  const refused = modelIds.find((id) => !key.allowedModels.includes(id));
  if (refused) throw refusalError({ reason: "model_not_allowed", modelId: refused }, now);
}

/**
 * The provider's own count when its adapter has one. A request it refuses
 * (400, 413, 422) is the caller's 400, as Generate would answer; any other
 * failure (unavailable, rate limited, a bad answer) falls back to the estimate,
 * since a count is advice and an estimate is still useful.
 */
async function countOn(attempt: Attempt, signal: AbortSignal, deps: InferenceDeps): Promise<{ exact: boolean; inputTokens: number }> {
  const { provider, route, apiKey, maxCompletionTokens } = attempt.route;
  const adapter = deps.adapters[provider.protocol];
  if (adapter.countTokens) {
    const call: UpstreamCall = { request: attempt.request, provider, route, apiKey, stream: false, maxCompletionTokens, signal };
    try {
      return { exact: true, inputTokens: await adapter.countTokens(call) };
    } catch (error) {
      if (signal.aborted) throw callerWentAway();
      if (!(error instanceof UpstreamError)) throw error;
      if (!error.retryable) throw upstreamRejected(error, [traceEntry(attempt, "error", error.reason)]);
    }
  }
  const profile = tokenEstimateOf(provider.protocol);
  const inputTokens = await estimateInputTokens(attempt.request, { media: profile.media, openAiModelId: profile.openAiModelIds ? route.provider_model_id : undefined });
  return { exact: false, inputTokens };
}
