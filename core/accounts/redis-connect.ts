// How a Redis-backed store (the account stores, the conversation store, the
// task store) connects: commands fail at once while Redis is away (no offline
// queue; the guard turns that into StoreUnavailableError), the client keeps
// reconnecting once it has run, and a wrong URL fails the start after about
// two seconds instead of hanging. Each outage is logged once, when it starts
// and when it ends. Beside redis-guard.ts for the same reason (no import cycle
// with accounts/).
import { createClient, type RedisScripts } from "redis";
import { StoreUnavailableError } from "./store-errors.ts";

/** At startup Redis gets this many attempts (about 2 s) before creation fails. */
const STARTUP_ATTEMPTS = 10;
/** Reconnection delays grow by 50 ms per attempt, up to a second. */
const reconnectDelay = (retries: number) => Math.min(retries * 50, 1000);

export interface RedisStoreConnectOptions<Scripts extends RedisScripts> {
  url: string;
  /** Names the store in logs and errors ("conversation store"). */
  store: string;
  scripts: Scripts;
  logger?: { warn(details: object, message: string): void; info?(details: object, message: string): void };
  /** Called on every (re)connection after the first: a Redis that comes back may have come back empty. */
  onReconnect?: () => void;
}

export async function connectRedisStore<Scripts extends RedisScripts>(options: RedisStoreConnectOptions<Scripts>) {
  const { logger, store } = options;
  let connectedOnce = false;
  let healthy = false;
  const client = createClient({
    url: options.url,
    scripts: options.scripts,
    // A command while disconnected fails at once instead of waiting in a queue.
    disableOfflineQueue: true,
    socket: {
      // Retry forever once running (Redis may come back); give up early at startup,
      // where a wrong URL should fail loudly instead of hanging.
      reconnectStrategy: (retries, cause) =>
        !connectedOnce && retries >= STARTUP_ATTEMPTS ? new Error(`Redis unreachable after ${retries} attempts`, { cause }) : reconnectDelay(retries),
    },
  });
  // An unhandled 'error' event would crash the process; report each outage once.
  client.on("error", (error: unknown) => {
    if (!healthy) return;
    healthy = false;
    logger?.warn({ err: error }, `Redis ${store} unreachable; reconnecting`);
  });
  client.on("ready", () => {
    if (connectedOnce) {
      if (!healthy) logger?.info?.({}, `Redis ${store} reachable again`);
      options.onReconnect?.();
    }
    connectedOnce = true;
    healthy = true;
  });
  try {
    await client.connect();
  } catch (error) {
    throw new StoreUnavailableError(`cannot connect to Redis for the ${store}`, { cause: error });
  }
  return client;
}
