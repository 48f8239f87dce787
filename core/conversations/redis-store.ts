// The Redis conversation store: shared by every instance (REDIS_URL), so a
// conversation started on one instance continues on another. A turn is one
// hash (redis-keys.ts) expiring at its `expiresAt`; walking a chain is one
// script, so history costs one round trip however many turns it has, and
// renews the turns it walks in that same trip.
//
// Availability as for the account stores: a command while Redis is away fails
// at once (no offline queue) with StoreUnavailableError, and the client keeps
// reconnecting in the background.
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { defineScript, type CommandParser } from "redis";
import { connectRedisStore } from "../accounts/redis-connect.ts";
import { TurnSchema, type Turn } from "../../gen/router/v1/conversations_pb.js";
import { createRedisGuard } from "../accounts/redis-guard.ts";
import { readStoredJson, storedJson } from "../accounts/stored-json.ts";
import { conversationRedisKeys } from "./redis-keys.ts";
import { withCancelRequested } from "./turn-status.ts";
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

// ARGV: the organisation's base name (turnBase), the first id, the most turns
// to read, and to renew them (when the TTL is above 0) the TTL in ms and the
// expiry it gives (ms since the epoch, by the store's clock: the hash's
// `expires`). Answers the turns' JSON, newest first, stopping at the first one
// missing; each turn walked is renewed in the same script (one round trip).
const CHAIN = `
local base, id, limit, ttl, expires = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local chain = {}
while id ~= '' and #chain < limit do
  local name = base .. id
  local fields = redis.call('HMGET', name, 'turn', 'previous')
  if not fields[1] then break end
  if ttl > 0 then
    redis.call('HSET', name, 'expires', expires)
    redis.call('PEXPIRE', name, ttl)
  end
  chain[#chain + 1] = fields[1]
  id = fields[2] or ''
end
return chain
`;

const chainScript = defineScript({
  SCRIPT: CHAIN,
  NUMBER_OF_KEYS: 0,
  parseCommand(parser: CommandParser, base: string, id: string, limit: number, ttlMs: number, expiresAt: number) {
    parser.push(base, id, String(limit), String(ttlMs), String(expiresAt));
  },
  transformReply: (reply: unknown) => reply as string[],
});

// KEYS[1]: the turn's hash. Marks it `cancel` only while it exists (1), else 0.
const requestCancelScript = defineScript({
  SCRIPT: `if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end redis.call('HSET', KEYS[1], 'cancel', '1') return 1`,
  NUMBER_OF_KEYS: 1,
  parseCommand(parser: CommandParser, name: string) {
    parser.pushKey(name);
  },
  transformReply: (reply: unknown) => reply as number,
});

// KEYS[1]: the turn's hash; ARGV: the turn's JSON, the previous turn's id, the
// TTL in ms ('0': none), and '1' to write only while the hash exists (update:
// a deleted turn is not brought back by a later save). 1 when written, else 0.
// Not a DEL: a requested cancellation (`cancel`) outlives the saves of the run it stops.
const saveScript = defineScript({
  SCRIPT: `if ARGV[4] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[1], 'expires')
redis.call('HSET', KEYS[1], 'turn', ARGV[1], 'previous', ARGV[2])
if ARGV[3] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1`,
  NUMBER_OF_KEYS: 1,
  parseCommand(parser: CommandParser, name: string, json: string, previous: string, ttlMs: number, onlyStored: boolean) {
    parser.pushKey(name);
    parser.push(json, previous, String(ttlMs), onlyStored ? "1" : "0");
  },
  transformReply: (reply: unknown) => reply as number,
});

export async function createRedisConversationStore(options: RedisConversationStoreOptions): Promise<ConversationStore> {
  const keys = conversationRedisKeys(options.prefix);
  const now = options.now ?? Date.now;
  const client = await connectRedisStore({ url: options.url, store: "conversation store", scripts: { chain: chainScript, requestCancel: requestCancelScript, saveTurn: saveScript }, logger: options.logger });

  const guarded = createRedisGuard("conversation store", options.commandTimeoutMs ?? 2_000);

  /** The stored turn, with the expiry a continuation renewed it to (the hash's `expires`) when it was. */
  const parse = (json: string, which: string, expires?: number | string | null) => {
    const turn = readStoredJson(TurnSchema, json, `response ${which}`);
    if (expires != null) turn.expiresAt = timestampFromMs(Number(expires));
    return turn;
  };

  /** Writes the turn (only while it is stored, for `onlyStored`); true when written. */
  const saveTurn = async (turn: Turn, onlyStored: boolean) => {
    // Relative expiry: the injected clock need not agree with Redis's.
    const ttlMs = turn.expiresAt ? timestampMs(turn.expiresAt) - now() : 0;
    if (turn.expiresAt && ttlMs <= 0) return false;
    const written = (await client.saveTurn(keys.turn(turn.organizationId, turn.id), storedJson(TurnSchema, turn), turn.previousId, ttlMs, onlyStored)) === 1;
    // The provider's own id finds the turn while it is stored (a lookup checks that it still is).
    if (written && turn.upstreamId) await client.set(keys.upstream(turn.organizationId, turn.upstreamId), turn.id, ttlMs > 0 ? { PX: ttlMs } : {});
    return written;
  };

  return {
    save: (turn) => guarded("save", async () => void (await saveTurn(turn, false))),
    update: (turn) => guarded("update", () => saveTurn(turn, true)),
    get: (organizationId, id) =>
      guarded("get", async () => {
        const [json, expires, cancel] = await client.hmGet(keys.turn(organizationId, id), ["turn", "expires", "cancel"]);
        if (json == null) return undefined;
        const turn = parse(json, id, expires);
        return cancel == null ? turn : withCancelRequested(turn);
      }),
    requestCancel: (organizationId, id) =>
      guarded("requestCancel", async () => (await client.requestCancel(keys.turn(organizationId, id))) === 1),
    chain: (organizationId, id, limit, chainOptions) =>
      guarded("chain", async () => {
        if (!id || limit < 1) return [];
        const expiresAt = chainOptions?.expiresAt;
        // Relative expiry, as for save; a renewal already past is none.
        const ttlMs = expiresAt === undefined ? 0 : Math.max(0, expiresAt - now());
        const chain = await client.chain(keys.turnBase(organizationId), id, limit, ttlMs, expiresAt ?? 0);
        return chain.map((json) => parse(json, `in the chain of ${id}`, ttlMs > 0 ? expiresAt : undefined));
      }),
    delete: (organizationId, id) => guarded("delete", async () => (await client.del(keys.turn(organizationId, id))) === 1),
    idOfUpstream: (organizationId, upstreamId) =>
      guarded("idOfUpstream", async () => {
        const id = await client.get(keys.upstream(organizationId, upstreamId));
        return id !== null && (await client.exists(keys.turn(organizationId, id))) === 1 ? id : undefined;
      }),
    close: async () => {
      if (!client.isOpen) return;
      if (client.isReady) await client.close();
      else client.destroy();
    },
  };
}
