// What a key may learn about itself (GetKey) and its organisation's money
// (GetCredits), for the self-service endpoints GET /api/v1/key and
// /api/v1/credits: authenticated by the key, nothing of any other key.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Caller, GetCreditsResponseSchema, GetKeyResponseSchema } from "../../gen/router/v1/inference_pb.js";
import type { Accounts } from "../accounts/accounts.ts";
import { authenticate } from "../accounts/check-key.ts";
import { formatNanos } from "../accounts/ledger-units.ts";
import { fromStore } from "../accounts/refusals.ts";
import { nextUtcMidnight } from "../accounts/windows.ts";
import type { Catalogue } from "../catalogue/catalogue.ts";
import { dailyFreeQuota } from "../routing/inference-charge.ts";

export interface KeyReportDeps {
  catalogue: Catalogue;
  accounts: Accounts;
  now: () => Date;
}

export async function describeKey(caller: Caller | undefined, deps: KeyReportDeps): Promise<MessageInitShape<typeof GetKeyResponseSchema>> {
  const key = await authenticate(deps.accounts, caller);
  const { stores } = deps.accounts;
  const now = deps.now().getTime();
  // The free models this key may use, each with the organisation's quota (quotas are per organisation).
  const allowed = (id: string) => key.allowedModels.length === 0 || key.allowedModels.includes(id);
  const free = deps.catalogue.models.flatMap((model) => {
    const limit = dailyFreeQuota(model);
    return limit !== undefined && allowed(model.config.id) ? [{ modelId: model.config.id, limit }] : [];
  });
  const [spent, balance, used] = await Promise.all([
    fromStore(stores.credits.spent(key.organizationId, key.keyId, now)),
    fromStore(stores.credits.balance(key.organizationId)),
    fromStore(stores.admission.freeUsed(key.organizationId, free.map((quota) => quota.modelId), now)),
  ]);
  const resetAtMs = BigInt(nextUtcMidnight(now));
  return {
    keyId: key.keyId,
    label: key.name || key.keyId,
    rpm: key.rpm,
    tpm: key.tpm,
    allowedModels: key.allowedModels,
    usage: formatNanos(spent.keyNanos),
    usageDaily: formatNanos(spent.keyPeriodNanos.day),
    usageWeekly: formatNanos(spent.keyPeriodNanos.week),
    usageMonthly: formatNanos(spent.keyPeriodNanos.month),
    balance: formatNanos(balance),
    freeQuotas: free.map((quota, index) => ({ ...quota, used: Math.min(used[index], quota.limit), resetAtMs })),
  };
}

export async function describeCredits(caller: Caller | undefined, deps: KeyReportDeps): Promise<MessageInitShape<typeof GetCreditsResponseSchema>> {
  const key = await authenticate(deps.accounts, caller);
  const { credits } = deps.accounts.stores;
  const now = deps.now().getTime();
  const [spent, balance] = await Promise.all([fromStore(credits.spent(key.organizationId, key.keyId, now)), fromStore(credits.balance(key.organizationId))]);
  return { balance: formatNanos(balance), usage: formatNanos(spent.organizationNanos), totalCredits: formatNanos(balance + spent.organizationNanos) };
}
