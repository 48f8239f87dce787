// The core's account side in one place: the stores (memory or Redis), the
// settlements that run after each answer and the batched usage log.
import type { Logger } from "pino";
import type { Environment } from "../catalogue/catalogue.ts";
import type { OrganizationConfig } from "../config/schema.ts";
import { createMemoryAccountStores } from "./memory-store.ts";
import { seedsFromConfig } from "./seed.ts";
import { createSettlementQueue, type SettlementQueue } from "./settlement-queue.ts";
import type { AccountStores } from "./store.ts";
import { createUsageLog, type UsageLog } from "./usage-log.ts";

export interface Accounts {
  stores: AccountStores;
  settlements: SettlementQueue;
  usage: UsageLog;
  /** Resolves when every settlement is done and the usage log is written (tests, shutdown). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export interface AccountsOptions {
  organizations: OrganizationConfig[];
  env: Environment;
  /** Given stores (tests); otherwise Redis when REDIS_URL is set, else memory. */
  stores?: AccountStores;
  logger?: Logger;
  now?: () => Date;
}

/** How often an instance looks for holds abandoned by a dead instance. */
const ABANDONED_SWEEP_MS = 60_000;

export async function createAccounts(options: AccountsOptions): Promise<Accounts> {
  const stores = options.stores ?? (await storesFor(options.env));
  await stores.seed(seedsFromConfig(options.organizations, options.env));
  const logger = options.logger;
  const settlements = createSettlementQueue(stores.admission, {
    onError: (error, batch) => logger?.warn({ err: error, requests: batch.length }, "settlement failed; it will be retried"),
  });
  const usage = createUsageLog(stores.usage, { onError: (error) => logger?.warn({ err: error }, "usage log write failed; it will be retried") });
  const now = options.now ?? (() => new Date());
  const sweep = setInterval(() => {
    stores.admission.releaseAbandoned(now().getTime()).then(
      (released) => released > 0 && logger?.warn({ released }, "released the holds of requests abandoned unsettled"),
      (error: unknown) => logger?.warn({ err: error }, "could not release abandoned holds; will try again"),
    );
  }, ABANDONED_SWEEP_MS).unref();
  return {
    stores,
    settlements,
    usage,
    async idle() {
      await settlements.idle();
      await usage.flush();
    },
    async close() {
      clearInterval(sweep);
      // Settle what is queued while the store is still there (bounded: a store that is away cannot take them).
      await Promise.race([settlements.idle(), new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())]);
      if (settlements.pending > 0) logger?.error({ pending: settlements.pending }, "closing with unsettled requests; their holds stay taken");
      settlements.close();
      await usage.close().catch(() => {});
      await stores.close();
    },
  };
}

/** How long closing waits for queued settlements. */
const CLOSE_GRACE_MS = 2_000;

async function storesFor(env: Environment): Promise<AccountStores> {
  if (!env.REDIS_URL) return createMemoryAccountStores();
  const { createRedisAccountStores } = await import("./redis-store.ts");
  return createRedisAccountStores({ url: env.REDIS_URL, prefix: env.REDIS_PREFIX });
}
