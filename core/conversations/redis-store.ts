// The Redis conversation store: shared by every instance (REDIS_URL), so a
// conversation started on one instance continues on another. A turn is one
// hash (redis-keys.ts) expiring at its `expiresAt`; walking a chain is one
// script, so history costs one round trip however many turns it has.
//
// Availability as for the account stores: a command while Redis is away fails
// at once (no offline queue) with StoreUnavailableError, and the client keeps
// reconnecting in the background.
import { fromJsonString, toJsonString } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { createClient, defineScript, type CommandParser } from "redis";
import { TurnSchema, type Turn } from "../../gen/router/v1/conversations_pb.js";
import { createRedisGuard } from "../accounts/redis-guard.ts";
import { StoreUnavailableError } from "../accounts/store-errors.ts";
import { conversationRedisKeys } from "./redis-keys.ts";
import type { ConversationStore } from "./store.ts";

export interface RedisConversationStoreOptions {
  url: string;
  /** Put before every key name; default "rtr:". */
  prefix?: string;
  /** The clock that `expiresAt` is measured against (Redis's own may differ). */
  now?: () => number;
  logger?: { warn(details: object, message: string): void };
  /** How long a store call waits for Redis before it is unavailable (503); default 2 s. */
  commandTimeoutMs?: number;
}

/** At startup Redis gets this many attempts (about 2 s) before creation fails. */
const STARTUP_ATTEMPTS = 10;

// ARGV: the organisation's base name (turnBase), the first id, the most turns to read.
// Answers the turns' JSON, newest first, stopping at the first one missing.
const CHAIN = `
local base, id, limit = ARGV[1], ARGV[2], tonumber(ARGV[3])
local chain = {}
while id ~= '' and #chain < limit do
  local fields = redis.call('HMGET', base .. id, 'turn', 'previous')
  if not fields[1] then break end
  chain[#chain + 1] = fields[1]
  id = fields[2] or ''
end
return chain
`;

const chainScript = defineScript({
  SCRIPT: CHAIN,
  NUMBER_OF_KEYS: 0,
  parseCommand(parser: CommandParser, base: string, id: string, limit: number) {
    parser.push(base, id, String(limit));
  },
  transformReply: (reply: unknown) => reply as string[],
});

export async function createRedisConversationStore(options: RedisConversationStoreOptions): Promise<ConversationStore> {
  const keys = conversationRedisKeys(options.prefix);
  const now = options.now ?? Date.now;
  let connectedOnce = false;
  let healthy = false;
  const client = createClient({
    url: options.url,
    scripts: { chain: chainScript },
    disableOfflineQueue: true,
    socket: {
      reconnectStrategy: (retries, cause) =>
        !connectedOnce && retries >= STARTUP_ATTEMPTS ? new Error(`Redis unreachable after ${retries} attempts`, { cause }) : Math.min(retries * 50, 1000),
    },
  });
  // An unhandled 'error' event would crash the process; report each outage once.
  client.on("error", (error: unknown) => {
    if (healthy) options.logger?.warn({ err: error }, "Redis conversation store unreachable; reconnecting");
    healthy = false;
  });
  client.on("ready", () => {
    connectedOnce = true;
    healthy = true;
  });
  try {
    await client.connect();
  } catch (error) {
    throw new StoreUnavailableError("cannot connect to Redis for the conversation store", { cause: error });
  }

  const guarded = createRedisGuard("conversation store", options.commandTimeoutMs ?? 2_000);

  const parse = (json: string) => fromJsonString(TurnSchema, json);

  return {
    save: (turn) =>
      guarded("save", async () => {
        const name = keys.turn(turn.organizationId, turn.id);
        // Relative expiry: the injected clock need not agree with Redis's.
        const ttlMs = turn.expiresAt ? timestampMs(turn.expiresAt) - now() : 0;
        if (turn.expiresAt && ttlMs <= 0) return;
        const batch = client.multi().del(name).hSet(name, { turn: toJsonString(TurnSchema, turn), previous: turn.previousId });
        if (turn.expiresAt) batch.pExpire(name, ttlMs);
        await batch.exec();
      }),
    get: (organizationId, id) =>
      guarded("get", async () => {
        const json = await client.hGet(keys.turn(organizationId, id), "turn");
        return json == null ? undefined : parse(json);
      }),
    chain: (organizationId, id, limit) =>
      guarded("chain", async () => {
        if (!id || limit < 1) return [];
        return (await client.chain(keys.turnBase(organizationId), id, limit)).map(parse);
      }),
    delete: (organizationId, id) => guarded("delete", async () => (await client.del(keys.turn(organizationId, id))) === 1),
    close: async () => {
      if (!client.isOpen) return;
      if (client.isReady) await client.close();
      else client.destroy();
    },
  };
}
