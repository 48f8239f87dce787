// A Redis that loses its data (restarted empty, flushed) is seeded again with
// the configuration, so a configured key is never refused as invalid because
// the store forgot it: on reconnection, and by any admission or key lookup
// that finds neither the key nor the seed marker. Seeding stays idempotent:
// an organisation that kept its balance keeps it. Real private Redis servers.
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createRedisAccountStores } from "../../../core/accounts/redis-store.ts";
import type { AccountStores, AdmissionRequest, SeedOrganization } from "../../../core/accounts/store.ts";
import { sha256Hex } from "../../../core/auth/keys.ts";
import { startGateway, type Gateway } from "../../support/harness.ts";
import { chatWithKey, paidSimulatorConfig } from "../../support/paid-simulator.ts";
import { startRedisServer, type RedisServer } from "../../support/redis-server.ts";

const KEY = "sk-reseed";
/** sim/paid: max_tokens 3 at 0.000000001 per completion token holds 3 nano-dollars. */
const CONFIG = paidSimulatorConfig({ keyEnv: "RESEED_KEY", credits: "0.000001", pricing: { prompt: "0", completion: "0.000000001" } });
const STARTING_NANOS = 1_000n;

const chat = (gateway: Gateway, model?: string) => chatWithKey(gateway, KEY, model);

describe("a gateway whose Redis restarts empty", { timeout: 30_000 }, () => {
  let redis: RedisServer;
  let gateway: Gateway;
  const errors: string[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    const logger = { warn: () => {}, info: () => {}, error: (_: object, message: string) => errors.push(message) };
    const stores = await createRedisAccountStores({ url: redis.url, prefix: "reseed:", logger });
    gateway = await startGateway(CONFIG, { core: { stores }, env: { RESEED_KEY: KEY } });
  });
  afterAll(async () => {
    await gateway?.close();
    await redis?.stop();
  });

  it("serves the configured key again once Redis is back (503 meanwhile, never 401), from its starting balance", async () => {
    expect((await chat(gateway)).status).toBe(200);
    await gateway.core.accounts.idle();
    expect(await gateway.core.accounts.stores.credits.balance("org_paid")).toBeLessThan(STARTING_NANOS);

    await redis.stop();
    await redis.start(); // nothing persisted: it comes back empty
    // Requests race the client's reconnection and the re-seed: each is refused
    // for want of the store, or served; none is told its key is invalid.
    const seen: number[] = [];
    await vi.waitFor(
      async () => {
        const answer = await chat(gateway);
        seen.push(answer.status);
        expect(answer.status).toBe(200);
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(seen.filter((status) => status !== 503 && status !== 200)).toEqual([]);
    // Before the model is looked at, the key is checked: known, so the model's 404 is what is said.
    const unknownModel = await chat(gateway, "sim/none");
    expect(unknownModel.status).toBe(404);
    expect(unknownModel.json.error?.code).toBe("model_not_found");

    await gateway.core.accounts.idle();
    // Seeded afresh (the lost balance is gone), less the one answer since: 3 nano-dollars.
    expect(await gateway.core.accounts.stores.credits.balance("org_paid")).toBe(STARTING_NANOS - 3n);
    expect(errors).toEqual(["Redis account store had lost its data; the configured organisations and keys are seeded again"]);
  });
});

describe("a Redis store that finds its seed gone without a reconnection", { timeout: 30_000 }, () => {
  let redis: RedisServer;
  let stores: AccountStores;
  let admin: ReturnType<typeof createClient>;
  const prefix = "flushed:";
  const organization: SeedOrganization = {
    organizationId: "org",
    initialCreditsNanos: 100n,
    keys: [{ digest: sha256Hex("sk-a"), keyId: "key-a", organizationId: "org", name: "a", allowedModels: [], disabled: false, createdAt: 0 }],
  };
  let requests = 0;
  const admission = (key: string): AdmissionRequest => ({
    requestId: `r-${++requests}`, keyDigest: sha256Hex(key), modelIds: [], charge: { kind: "credits", holdNanos: 10n }, now: 0,
  });

  beforeAll(async () => {
    redis = await startRedisServer();
    stores = await createRedisAccountStores({ url: redis.url, prefix });
    await stores.seed([organization]);
    admin = createClient({ url: redis.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.close();
    await stores?.close();
    await redis?.stop();
  });

  it("re-seeds and admits when the whole database was flushed", async () => {
    await admin.flushAll();
    const admitted = await stores.admission.admit(admission("sk-a"));
    expect(admitted).toMatchObject({ admitted: true, value: { key: { keyId: "key-a", organizationId: "org" } } });
    expect(await stores.credits.balance("org")).toBe(90n);
  });

  it("re-seeds a key lookup too, and keeps the balance of an organisation that still has one", async () => {
    // Partial loss: the marker and the key go, the balance (90 after the hold above) stays.
    await admin.del([`${prefix}seeded`, `${prefix}key:${sha256Hex("sk-a")}`]);
    expect(await stores.keys.findByDigest(sha256Hex("sk-a"))).toMatchObject({ keyId: "key-a" });
    expect(await stores.credits.balance("org")).toBe(90n);
    await admin.del(`${prefix}seeded`);
    expect(await stores.admission.admit(admission("sk-a"))).toMatchObject({ admitted: true });
    expect(await stores.credits.balance("org")).toBe(80n);
  });

  it("still refuses an unknown key as invalid, after a re-seed as before one", async () => {
    await admin.flushAll();
    expect(await stores.admission.admit(admission("sk-unknown"))).toEqual({ admitted: false, refusal: { reason: "invalid_api_key" } });
    expect(await stores.keys.findByDigest(sha256Hex("sk-unknown"))).toBeUndefined();
    expect(await admin.exists(`${prefix}seeded`)).toBe(1);
    expect(await stores.admission.admit(admission("sk-unknown"))).toEqual({ admitted: false, refusal: { reason: "invalid_api_key" } });
  });

  it("calls an unknown key invalid in a store never seeded (no configuration to restore)", async () => {
    const unseeded = await createRedisAccountStores({ url: redis.url, prefix: "never-seeded:" });
    try {
      expect(await unseeded.admission.admit(admission("sk-a"))).toEqual({ admitted: false, refusal: { reason: "invalid_api_key" } });
      expect(await unseeded.keys.findByDigest(sha256Hex("sk-a"))).toBeUndefined();
    } finally {
      await unseeded.close();
    }
  });
});
