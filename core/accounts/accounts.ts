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
  /** Ids of keys made up at start whose store kept the digest it had (another instance's key). */
  keptKeyIds: string[];
  /** Resolves when every settlement is done and the usage log is written (tests, shutdown). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export interface AccountsOptions {
  organizations: OrganizationConfig[];
  env: Environment;
  /** Variables of `env` whose keys were made up at start (seedsFromConfig). */
  generatedKeys?: readonly string[];
  /** Given stores (tests); otherwise Redis when REDIS_URL is set, else memory. */
  stores?: AccountStores;
  logger?: Logger;
  now?: () => Date;
}

/** How often an instance looks for holds abandoned by a dead instance. */
const ABANDONED_SWEEP_MS = 60_000;

export async function createAccounts(options: AccountsOptions): Promise<Accounts> {
  const stores = options.stores ?? (await storesFor(options.env, options.logger));
  const { keptKeyIds } = await stores.seed(seedsFromConfig(options.organizations, options.env, options.generatedKeys));
  const logger = options.logger;
  // An outage is logged when it starts and when it ends, not per request or batch.
  const settlements = createSettlementQueue(stores.admission, {
    onOutage: (error, pending) => logger?.warn({ err: error, pending }, "account store unavailable: settlements wait in memory and are retried with backoff"),
    onRecovery: (pending) => logger?.info({ pending }, "account store available again: settlements are written"),
    onDropped: (dropped) =>
      logger?.error({ dropped }, "settlement queue was full: the oldest settlements were dropped; their holds are returned 6 h after admission"),
    onError: (error, batch) => logger?.error({ err: error, requests: batch.length }, "settlement failed; it is not retried"),
  });
  const usage = createUsageLog(stores.usage, {
    onOutage: (error, pending) => logger?.warn({ err: error, pending }, "account store unavailable: usage records wait in memory and are retried with backoff"),
    onRecovery: (dropped) =>
      dropped > 0
        ? logger?.error({ dropped }, "account store available again: usage records are written; the oldest were dropped while it was away")
        : logger?.info({}, "account store available again: usage records are written"),
  });
  const now = options.now ?? (() => new Date());
  let sweepFailing = false;
  const sweep = setInterval(() => {
    stores.admission.releaseAbandoned(now().getTime()).then(
      (released) => {
        sweepFailing = false;
        if (released > 0) logger?.warn({ released }, "released the holds of requests abandoned unsettled");
      },
      (error: unknown) => {
        // Once per failing streak: an outage would otherwise repeat it every minute.
        if (!sweepFailing) logger?.warn({ err: error }, "could not release abandoned holds; will try again every minute");
        sweepFailing = true;
      },
    );
  }, ABANDONED_SWEEP_MS).unref();
  return {
    stores,
    settlements,
    usage,
    keptKeyIds,
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

async function storesFor(env: Environment, logger: Logger | undefined): Promise<AccountStores> {
  if (!env.REDIS_URL) return createMemoryAccountStores();
  const { createRedisAccountStores } = await import("./redis-store.ts");
  return createRedisAccountStores({ url: env.REDIS_URL, prefix: env.REDIS_PREFIX, logger });
}
