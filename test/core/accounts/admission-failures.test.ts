// What the core does when the account store fails around an admission or a
// settlement: a lost admission reply is released once the store answers, and
// queued settlements that met an outage are retried until they are taken.
import { describe, expect, it } from "vitest";
import { createAccounts } from "../../../core/accounts/accounts.ts";
import { admitRequest } from "../../../core/routing/inference-charge.ts";
import { createMemoryAccountStores } from "../../../core/accounts/memory-store.ts";
import { createSettlementQueue } from "../../../core/accounts/settlement-queue.ts";
import { StoreUnavailableError } from "../../../core/accounts/store-errors.ts";
import type { AdmissionStore, Settlement } from "../../../core/accounts/store.ts";
import { sha256Hex } from "../../../core/auth/keys.ts";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { parseConfig } from "../../../core/config/load.ts";
import { ConnectError, errorDetailOf } from "../../../core/errors.ts";
import { planAttempts } from "../../../core/routing/plan.ts";
import { create } from "@bufbuild/protobuf";
import { GenerateRequestSchema, Role } from "../../../gen/router/v1/inference_pb.js";
import { losingAdmissionReplies } from "../../support/lost-admission-reply.ts";

const config = parseConfig(
  JSON.stringify({
    providers: [{ id: "simulator", label: "Simulator", protocol: "simulator" }],
    models: [
      {
        id: "sim/echo", name: "echo", created: 1, creator: "sim", context_length: 1000, max_completion_tokens: 100,
        input_modalities: ["text"], output_modalities: ["text"], supported_parameters: ["max_tokens"],
        providers: [{ provider: "simulator", provider_model_id: "echo", pricing: { prompt: "0.000001", completion: "0.000001" } }],
      },
    ],
    organizations: [{ id: "org", name: "Org", credits: "1", keys: [{ id: "key", sha256: sha256Hex("sk-test") }] }],
  }),
);

describe("admission when the store's reply is lost", () => {
  it("answers 503 state_unavailable and releases what the store took once it answers again", async () => {
    const memory = createMemoryAccountStores();
    let replyLost = true;
    // The script runs (the hold is taken) but its reply never arrives.
    const stores = losingAdmissionReplies(memory, () => replyLost);
    const accounts = await createAccounts({ organizations: config.organizations, env: {}, stores });
    const before = await memory.credits.balance("org");
    const request = create(GenerateRequestSchema, { model: "sim/echo", messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "hi" } } }] }] });
    const plan = planAttempts(request, createCatalogue(config, {}));
    const failure = await admitRequest({ accounts, random: () => 0 }, { id: "r-1", keyDigest: sha256Hex("sk-test"), plan, now: 0 }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ConnectError);
    expect(errorDetailOf(failure as ConnectError)?.reason).toBe("state_unavailable");
    replyLost = false;
    await accounts.idle();
    expect(await memory.credits.balance("org")).toBe(before);
    await accounts.close();
  });
});

describe("settlement queue", () => {
  it("settles in batches, retries a batch that met an outage whole, and settles each request once", async () => {
    const settled: string[] = [];
    const batches: number[] = [];
    let outages = 1;
    const store: AdmissionStore = {
      admit: async () => {
        throw new Error("unused");
      },
      settle: async () => {
        throw new Error("the queue settles in batches");
      },
      releaseAbandoned: async () => 0,
      freeUsed: async () => [],
      settleAll: async (settlements: Settlement[]) => {
        if (outages > 0) {
          outages--;
          throw new StoreUnavailableError("down");
        }
        batches.push(settlements.length);
        settled.push(...settlements.map((s) => s.requestId));
      },
    };
    const queue = createSettlementQueue(store, { retryMs: 1, batchSize: 4, delayMs: 60_000 });
    // Four fill a batch, which goes at once (and meets the outage); two wait for their delay.
    for (let i = 1; i <= 6; i++) queue.push({ requestId: `r-${i}`, chargeNanos: 0n, tokens: 0, refundFreeQuota: false, now: 0 });
    await queue.idle();
    expect(settled.sort()).toEqual(["r-1", "r-2", "r-3", "r-4", "r-5", "r-6"]);
    expect(outages).toBe(0);
    expect(batches.length).toBeLessThan(6);
    queue.close();
  });
});
