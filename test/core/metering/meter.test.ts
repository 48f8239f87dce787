// The meter on its own, as a caller other than chat (the coming task service)
// uses it: a charge in, an Admission out, then settle or release once. Real
// in-memory account stores; balances, quotas and usage records are read back.
import { describe, expect, it } from "vitest";
import { createAccounts, type Accounts } from "../../../core/accounts/accounts.ts";
import { createMemoryAccountStores } from "../../../core/accounts/memory-store.ts";
import type { AccountStores } from "../../../core/accounts/store.ts";
import { sha256Hex } from "../../../core/auth/keys.ts";
import { parseConfig } from "../../../core/config/load.ts";
import { ConnectError, errorDetailOf } from "../../../core/errors.ts";
import { admit, type ChargeInput, type UsageDetails } from "../../../core/metering/meter.ts";
import { losingAdmissionReplies } from "../../support/lost-admission-reply.ts";

const KEY = "sk-meter";
const ORG = "org_meter";
const START = 1_000_000_000n; // 1 USD in nano-dollars
const NANO = 1_000_000n; // femto-dollars (Money) per nano-dollar

const config = parseConfig(
  JSON.stringify({
    providers: [{ id: "simulator", label: "Simulator", protocol: "simulator" }],
    models: [],
    organizations: [{ id: ORG, name: "Meter", credits: "1", keys: [{ id: "key_meter", sha256: sha256Hex(KEY) }] }],
  }),
);

async function accountsWith(stores: AccountStores = createMemoryAccountStores()): Promise<Accounts> {
  return createAccounts({ organizations: config.organizations, env: {}, stores });
}

let requests = 0;
const admitted = (accounts: Accounts, charge: ChargeInput, requestId = `task-${++requests}`) =>
  admit(accounts, { requestId, keyDigest: sha256Hex(KEY), modelIds: [], charge, now: 0 });

const details: UsageDetails = { model: "img/model", provider: "imgs", outcome: "ok", requestTags: ["job"], latencyMs: 12.4, streamed: false, now: 5 };
const tokens = { inputTokens: 7, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 3, reasoningTokens: 1 };
const free = (quota: number, extra: Partial<Extract<ChargeInput, { kind: "free" }>> = {}): ChargeInput => ({
  kind: "free",
  candidates: [{ modelId: "img/free", dailyQuota: quota }],
  ...extra,
});
const reasonOf = (error: unknown) => (error instanceof ConnectError ? errorDetailOf(error)?.reason : String(error));

describe("paid work", () => {
  it("holds at admission; settling charges the exact cost rounded up to the nano-dollar and records it under the key", async () => {
    const accounts = await accountsWith();
    const admission = await admitted(accounts, { kind: "credits", holdNanos: 5_000n });
    expect(admission.holdNanos).toBe(5_000n);
    expect(await accounts.stores.credits.balance(ORG)).toBe(START - 5_000n);
    admission.settle({ tokens, cost: 1_500n * NANO + 1n }, details);
    await accounts.idle();
    expect(await accounts.stores.credits.balance(ORG)).toBe(START - 1_501n);
    expect(await accounts.usage.get(ORG, admission.requestId)).toMatchObject({
      keyId: "key_meter",
      model: "img/model",
      provider: "imgs",
      promptTokens: 7,
      completionTokens: 3,
      reasoningTokens: 1,
      cost: "0.000001500000001",
      requestTags: ["job"],
      latencyMs: 12,
      free: false,
      createdAt: 5,
    });
    await accounts.close();
  });

  it("an estimate beyond the hold is charged the hold, and the record shows the hold as its cost", async () => {
    const accounts = await accountsWith();
    const admission = await admitted(accounts, { kind: "credits", holdNanos: 1_000n });
    admission.settle({ tokens, cost: 4_000n * NANO, estimated: true }, details);
    await accounts.idle();
    expect(await accounts.stores.credits.balance(ORG)).toBe(START - 1_000n);
    expect(await accounts.usage.get(ORG, admission.requestId)).toMatchObject({ promptTokens: 7, cost: "0.000001" });
    await accounts.close();
  });

  it("an exact cost beyond the hold is charged in full (the balance allowing)", async () => {
    const accounts = await accountsWith();
    const admission = await admitted(accounts, { kind: "credits", holdNanos: 1_000n });
    admission.settle({ tokens, cost: 4_000n * NANO }, details);
    await accounts.idle();
    expect(await accounts.stores.credits.balance(ORG)).toBe(START - 4_000n);
    await accounts.close();
  });

  it("releasing returns the hold and records no tokens at cost 0", async () => {
    const accounts = await accountsWith();
    const admission = await admitted(accounts, { kind: "credits", holdNanos: 5_000n });
    admission.release({ ...details, provider: "", outcome: "cancelled" });
    await accounts.idle();
    expect(await accounts.stores.credits.balance(ORG)).toBe(START);
    expect(await accounts.usage.get(ORG, admission.requestId)).toMatchObject({ promptTokens: 0, completionTokens: 0, cost: "0", outcome: "cancelled" });
    await accounts.close();
  });

  it("only the first of settle and release counts (a cancel racing the completion)", async () => {
    const accounts = await accountsWith();
    const admission = await admitted(accounts, { kind: "credits", holdNanos: 5_000n });
    admission.settle({ tokens, cost: 2_000n * NANO }, details);
    admission.release(details);
    admission.settle({ tokens, cost: 3_000n * NANO }, details);
    await accounts.idle();
    expect(await accounts.stores.credits.balance(ORG)).toBe(START - 2_000n);
    expect(await accounts.usage.list(ORG, 10)).toHaveLength(1);
    await accounts.close();
  });

  it("a hold beyond the balance is refused as the core's 402 error, holding nothing", async () => {
    const accounts = await accountsWith();
    const refused = await admitted(accounts, { kind: "credits", holdNanos: START + 1n }).catch((error: unknown) => error);
    expect(reasonOf(refused)).toBe("insufficient_credits");
    expect(await accounts.stores.credits.balance(ORG)).toBe(START);
    await accounts.close();
  });
});

describe("free work", () => {
  it("is never charged credits; settling spends the unit, and the window shows the quota left", async () => {
    const accounts = await accountsWith();
    const admission = await admitted(accounts, free(1));
    expect(admission.free).toMatchObject({ modelId: "img/free", limit: 1, used: 1 });
    expect(admission.requestsWindow).toMatchObject({ limit: 1, remaining: 0 });
    admission.settle({ tokens, cost: 9_000n * NANO }, details);
    await accounts.idle();
    expect(await accounts.stores.credits.balance(ORG)).toBe(START);
    expect(await accounts.usage.get(ORG, admission.requestId)).toMatchObject({ promptTokens: 7, cost: "0", free: true });
    expect(reasonOf(await admitted(accounts, free(1)).catch((error: unknown) => error))).toBe("free_quota_exhausted");
    await accounts.close();
  });

  it("releasing gives the unit back", async () => {
    const accounts = await accountsWith();
    (await admitted(accounts, free(1))).release(details);
    await accounts.idle();
    const again = await admitted(accounts, free(1));
    expect(again.free?.used).toBe(1);
    await accounts.close();
  });

  it("for any free model (router/free), no quota left is no_free_model_available", async () => {
    const accounts = await accountsWith();
    (await admitted(accounts, free(1))).settle({ tokens, cost: 0n }, details);
    await accounts.idle();
    const refused = await admitted(accounts, free(1, { anyModel: true, pick: 0.5 })).catch((error: unknown) => error);
    expect(reasonOf(refused)).toBe("no_free_model_available");
    await accounts.close();
  });
});

describe("a lost reply to the admission", () => {
  it("is 503 state_unavailable, and what the store took is released once it answers again", async () => {
    const memory = createMemoryAccountStores();
    let replyLost = true;
    const accounts = await accountsWith(losingAdmissionReplies(memory, () => replyLost));
    const failure = await admitted(accounts, { kind: "credits", holdNanos: 5_000n }).catch((error: unknown) => error);
    expect(reasonOf(failure)).toBe("state_unavailable");
    replyLost = false;
    await accounts.idle();
    expect(await memory.credits.balance(ORG)).toBe(START);
    await accounts.close();
  });
});
