// DELETE {base_url}/interactions/{id}: the upstream forgets an interaction it
// keeps, when the caller deletes the stored turn that has it as its upstream id.
import { UpstreamError, type UpstreamCall } from "../types.ts";
import { interactionsUrl } from "./endpoint.ts";

/** Resolves once the upstream no longer keeps it (one already gone included); throws UpstreamError otherwise. */
export async function deleteInteraction(target: Pick<UpstreamCall, "provider" | "apiKey">, id: string): Promise<void> {
  const { provider, apiKey } = target;
  const response = await fetch(interactionsUrl(provider, id), {
    method: "DELETE",
    headers: apiKey ? { "x-goog-api-key": apiKey } : {},
    signal: AbortSignal.timeout(provider.timeout_ms),
  });
  await response.body?.cancel();
  if (!response.ok && response.status !== 404) {
    throw new UpstreamError(`DELETE of interaction ${id} answered ${response.status}`, { status: response.status, retryable: false, reason: `http_${response.status}` });
  }
}
