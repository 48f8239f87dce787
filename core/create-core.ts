// Builds the core's services from their dependencies. Nothing here is global:
// tests and the two deployments each create their own core.
import type { ServiceImpl } from "@connectrpc/connect";
import type { Logger } from "pino";
import type { AccountService } from "../gen/router/v1/accounts_pb.js";
import type { CatalogueService } from "../gen/router/v1/catalogue_pb.js";
import type { SelectionService } from "../gen/router/v1/selection_pb.js";
import type { ConversationService } from "../gen/router/v1/conversations_pb.js";
import type { InferenceService } from "../gen/router/v1/inference_pb.js";
import type { TaskService } from "../gen/router/v1/tasks_pb.js";
import { createAccounts, type Accounts } from "./accounts/accounts.ts";
import type { AccountStores } from "./accounts/store.ts";
import { createCatalogue, type Catalogue, type Environment } from "./catalogue/catalogue.ts";
import type { RouterConfig } from "./config/schema.ts";
import { createBackgroundAnswers, type BackgroundAnswers } from "./background/background-answers.ts";
import { createConversations, type Conversations } from "./conversations/conversations.ts";
import { openConversationStore } from "./conversations/open-store.ts";
import type { ConversationStore } from "./conversations/store.ts";
import { createHttpClient, type HttpClient } from "./providers/http-client.ts";
import { capabilitiesOf, createChatAdapters, createMediaAdapters } from "./providers/registry.ts";
import { createAccountService } from "./services/accounts.ts";
import { createCatalogueService } from "./services/catalogue.ts";
import type { SemanticCache } from "./cache/semantic-cache.ts";
import { openSemanticCache } from "./cache/open-semantic-cache.ts";
import { createSelectionService } from "./services/selection.ts";
import { createConversationService } from "./services/conversations.ts";
import { createInferenceService } from "./services/inference.ts";
import { createTaskService } from "./services/tasks.ts";
import type { AssetStore } from "./tasks/asset-store.ts";
import { openAssetStore } from "./tasks/open-asset-store.ts";
import { openTaskStore } from "./tasks/open-store.ts";
import type { TaskStore } from "./tasks/store.ts";
import { createTasks, type Tasks } from "./tasks/tasks.ts";
import { createWebhooks, webhookKeyOf } from "./tasks/webhooks.ts";
import { createAssetLinks, linkKeyOf, type AssetLinks } from "./tasks/asset-links.ts";
import { openCacheAffinity, openMeasurements } from "./route-stats/open-store.ts";
import type { CacheAffinity } from "./route-stats/cache-affinity.ts";
import type { RouteMeasurements } from "./route-stats/measurements.ts";

export interface CoreDeps {
  config: RouterConfig;
  /** Where provider API keys, development keys, REDIS_URL and ROUTER_ADMIN_TOKEN are read from. */
  env: Environment;
  /** Variables of `env` whose keys startup made up (ROUTER_DEV_KEY unset): they never replace a stored key. */
  generatedKeys?: readonly string[];
  now?: () => Date;
  random?: () => number;
  http?: HttpClient;
  /** Account stores; by default Redis when REDIS_URL is set, else in memory. */
  stores?: AccountStores;
  /** Stored conversations; by default Redis when REDIS_URL is set, else in memory. */
  conversationStore?: ConversationStore;
  /** Media tasks; by default Redis when REDIS_URL is set, else in memory. */
  taskStore?: TaskStore;
  /** Routes' measured latency and throughput; by default shared through Redis when REDIS_URL is set, else in memory. */
  measurements?: RouteMeasurements;
  /** Hosted copies of task outputs; by default the store tasks.asset_storage names (the caller closes one it gives). */
  assetStore?: AssetStore;
  logger?: Logger;
}

export interface Core {
  catalogue: Catalogue;
  accounts: Accounts;
  conversations: Conversations;
  background: BackgroundAnswers;
  tasks: Tasks;
  measurements: RouteMeasurements;
  /** The semantic cache (docs/cache.md). */
  semanticCache: SemanticCache;
  services: {
    inference: ServiceImpl<typeof InferenceService>;
    catalogue: ServiceImpl<typeof CatalogueService>;
    selection: ServiceImpl<typeof SelectionService>;
    accounts: ServiceImpl<typeof AccountService>;
    conversations: ServiceImpl<typeof ConversationService>;
    tasks: ServiceImpl<typeof TaskService>;
  };
  close(): Promise<void>;
}

export async function createCore(deps: CoreDeps): Promise<Core> {
  const catalogue = createCatalogue(deps.config, deps.env, capabilitiesOf);
  const now = deps.now ?? (() => new Date());
  // First: a misconfigured store fails the start before anything is opened.
  checkSharedAssets(deps);
  const assets = deps.assetStore ?? (await openAssetStore(deps.config.tasks, deps.env));
  const accounts = await createAccounts({ organizations: deps.config.organizations, env: deps.env, generatedKeys: deps.generatedKeys, stores: deps.stores, logger: deps.logger, now });
  let conversationStore: ConversationStore;
  let taskStore: TaskStore;
  try {
    conversationStore = deps.conversationStore ?? (await openConversationStore(deps.env, { now: () => now().getTime(), logger: deps.logger }));
  } catch (error) {
    // A start that fails leaves nothing open (the account stores' Redis client).
    await accounts.close();
    throw error;
  }
  try {
    taskStore = deps.taskStore ?? (await openTaskStore(deps.env, { now: () => now().getTime(), logger: deps.logger }));
  } catch (error) {
    await accounts.close();
    await conversationStore.close();
    throw error;
  }
  let measurements: RouteMeasurements;
  try {
    const { measurement_weight: weight, measurement_sync_ms: syncMs } = deps.config.routing;
    measurements = deps.measurements ?? (await openMeasurements(deps.env, { weight, syncMs, logger: deps.logger }));
  } catch (error) {
    await accounts.close();
    await conversationStore.close();
    await taskStore.close();
    throw error;
  }
  let cacheAffinity: CacheAffinity | undefined;
  try {
    const ttlMs = deps.config.routing.cache_stickiness_seconds * 1000;
    // 0 turns prompt-cache stickiness off: nothing is looked up or remembered.
    cacheAffinity = ttlMs > 0 ? await openCacheAffinity(deps.env, { ttlMs, now: () => now().getTime(), logger: deps.logger }) : undefined;
  } catch (error) {
    await accounts.close();
    await conversationStore.close();
    await taskStore.close();
    if (!deps.measurements) await measurements.close();
    throw error;
  }
  const maxConnections = Object.fromEntries(deps.config.providers.map((provider) => [provider.id, provider.max_connections]));
  const http = deps.http ?? createHttpClient({ maxConnections });
  let semanticCache: Awaited<ReturnType<typeof openSemanticCache>>;
  try {
    semanticCache = await openSemanticCache({ config: deps.config.cache, env: deps.env, now, http, usage: accounts.usage, logger: deps.logger });
  } catch (error) {
    await accounts.close();
    await conversationStore.close();
    await taskStore.close();
    if (!deps.measurements) await measurements.close();
    await cacheAffinity?.close();
    await http.close();
    throw error;
  }
  const adapters = createChatAdapters(http);
  const conversations = createConversations({ store: conversationStore, ttlSeconds: deps.config.conversations.ttl_seconds, now, logger: deps.logger });
  const inferenceDeps = { catalogue, accounts, conversations, adapters, now, random: deps.random ?? Math.random, measurements, cacheAffinity, semanticCache: semanticCache.cache };
  const mediaAdapters = createMediaAdapters();
  const webhookKey = webhookKeyOf(deps.env[deps.config.tasks.webhook_secret_env]);
  const links = assetLinksOf(deps, taskStore, assets, now);
  const { webhook_retry_ms: retryMs, webhook_attempts: attempts, fetch_private_urls: allowPrivateAddresses } = deps.config.tasks;
  const tasks = createTasks({
    webhooks: webhookKey && createWebhooks({ key: webhookKey, retryMs, attempts, allowPrivateAddresses, now, logger: deps.logger, present: links.present }),
    catalogue,
    accounts,
    store: taskStore,
    assets,
    adapters: mediaAdapters,
    config: deps.config.tasks,
    now,
    random: deps.random ?? Math.random,
    logger: deps.logger,
    idPrefix: deps.config.id_prefix,
  });
  // A deleted turn that its provider keeps on its side too is forgotten there, in the background:
  // the caller's delete neither waits for it nor fails with it.
  const forgetUpstream = (providerId: string, upstreamId: string) => {
    const provider = catalogue.provider(providerId);
    const forget = provider && adapters[provider.protocol]?.forgetStored;
    if (!forget) return;
    const apiKey = provider.api_key_env ? (deps.env[provider.api_key_env] ?? "") : "";
    forget({ provider, apiKey }, upstreamId).catch((error: unknown) => deps.logger?.warn({ err: error, provider: providerId, upstreamId }, "the provider did not delete its copy of a deleted turn"));
  };
  const background = createBackgroundAnswers({ inference: inferenceDeps, leaseMs: deps.config.conversations.background_lease_seconds * 1000, logger: deps.logger });
  return {
    catalogue,
    accounts,
    conversations,
    tasks,
    services: {
      inference: createInferenceService(inferenceDeps),
      catalogue: createCatalogueService(catalogue, mediaAdapters, measurements),
      selection: createSelectionService(catalogue, accounts),
      accounts: createAccountService({ stores: accounts.stores, adminToken: deps.env.ROUTER_ADMIN_TOKEN, now, modelIds: catalogue.models.map((model) => model.config.id) }),
      conversations: createConversationService({ accounts, conversations, background, now, forgetUpstream }),
      tasks: createTaskService(tasks, links),
    },
    background,
    measurements,
    semanticCache: semanticCache.cache,
    async close() {
      // Background answers first: each is stored as failed while the store is still open.
      await background.close();
      // Task runs stop and give up their leases: another instance goes on with them.
      await tasks.close();
      await http.close();
      await accounts.close();
      await conversations.close();
      if (!deps.measurements) await measurements.close();
      await cacheAffinity?.close();
      await semanticCache.close();
      if (!deps.assetStore) await assets.close?.();
    },
  };
}

/**
 * A bucket is shared by instances, but a task store in memory knows only its
 * own instance's tasks: each instance's asset sweep would remove the others'
 * live assets. So assets in a bucket need the tasks in Redis.
 */
function checkSharedAssets(deps: CoreDeps) {
  if (deps.config.tasks.asset_storage === "s3" && !deps.assetStore && !deps.taskStore && !deps.env.REDIS_URL) {
    throw new Error("tasks.asset_storage s3 needs REDIS_URL: the asset sweep removes the assets of tasks its task store does not know, and a store in memory knows only this instance's tasks");
  }
}

/**
 * The signed asset links (tasks.link_secret_env's key; made up at start when
 * the variable is unset: links then work on this instance only, until it stops).
 */
function assetLinksOf(deps: CoreDeps, store: TaskStore, assets: AssetStore, now: () => Date): AssetLinks {
  const variable = deps.config.tasks.link_secret_env;
  const { key, generated } = linkKeyOf(deps.env[variable], variable);
  if (generated) deps.logger?.warn(`${variable} is not set: hosted asset links are signed with a key made at start, so they stop working when this instance stops and no other instance takes them. Set it (the same on every instance).`);
  const presignedUrls = deps.config.tasks.asset_storage === "s3" ? deps.config.tasks.s3?.presigned_urls : undefined;
  return createAssetLinks({ key, ttlSeconds: deps.config.tasks.link_ttl_seconds, now, store, assets, presignedUrls });
}
