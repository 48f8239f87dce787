// Requests refused because Redis is down queue nothing: their admission was
// never sent, so there is no hold to release. (An admission whose reply was
// lost may have run and is still released: admission-failures.test.ts.)
// A real private Redis behind an in-process gateway.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createRedisAccountStores } from "../../../core/accounts/redis-store.ts";
import { StoreUnavailableError } from "../../../core/accounts/store-errors.ts";
import type { AccountStores } from "../../../core/accounts/store.ts";
import { startGateway, type Gateway } from "../../support/harness.ts";
import { chatWithKey, paidSimulatorConfig } from "../../support/paid-simulator.ts";
import { startRedisServer, type RedisServer } from "../../support/redis-server.ts";

const KEY = "sk-outage-releases";
const CONFIG = paidSimulatorConfig({ keyEnv: "OUTAGE_KEY", credits: "10", pricing: { prompt: "0.000001", completion: "0.000001" } });
const chat = (gateway: Gateway) => chatWithKey(gateway, KEY);

describe("requests refused while Redis is down", { timeout: 30_000 }, () => {
  let redis: RedisServer;
  let stores: AccountStores;
  let gateway: Gateway;

  beforeAll(async () => {
    redis = await startRedisServer();
    stores = await createRedisAccountStores({ url: redis.url, prefix: "outage-releases:" });
    gateway = await startGateway(CONFIG, { core: { stores }, env: { OUTAGE_KEY: KEY } });
  });
  afterAll(async () => {
    await gateway?.close();
    await redis?.stop();
  });

  it("queue no release for admissions never sent, and the queue stays empty once Redis is back", async () => {
    expect((await chat(gateway)).status).toBe(200);
    await gateway.core.accounts.idle();

    await redis.stop();
    // Until the client has seen the connection close, a command may still be written
    // to the dead socket (and rightly be released); wait until it refuses to send.
    await vi.waitFor(async () => {
      const failure = await stores.credits.balance("org_paid").catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StoreUnavailableError);
      expect((failure as StoreUnavailableError).mayHaveRun).toBe(false);
    });

    const refused = await Promise.all(Array.from({ length: 20 }, () => chat(gateway)));
    for (const answer of refused) {
      expect(answer.status).toBe(503);
      expect(answer.json.error?.code).toBe("state_unavailable");
    }
    expect(gateway.core.accounts.settlements.pending).toBe(0);

    await redis.start();
    await vi.waitFor(async () => expect(await stores.credits.balance("org_paid").catch(() => undefined)).toBeDefined(), { timeout: 10_000, interval: 50 });
    expect(gateway.core.accounts.settlements.pending).toBe(0);
  });
});

describe("an admission whose reply is lost", { timeout: 30_000 }, () => {
  it("is reported as possibly run, so the core still releases it", async () => {
    const frozen = await startRedisServer();
    const stores = await createRedisAccountStores({ url: frozen.url, commandTimeoutMs: 200 });
    try {
      await stores.seed([{ organizationId: "org", initialCreditsNanos: 100n, keys: [] }]);
      frozen.freeze();
      const failure = await stores.admission
        .admit({ requestId: "r-1", keyDigest: "none", modelIds: [], charge: { kind: "credits", holdNanos: 1n }, now: 0 })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StoreUnavailableError);
      expect((failure as StoreUnavailableError).mayHaveRun).toBe(true);
    } finally {
      frozen.thaw();
      await stores.close();
      await frozen.stop();
    }
  });
});
