// The Redis task store: shared by every instance (REDIS_URL), so any instance
// answers for a task and exactly one polls it (the lease). Creation with an
// Idempotency-Key and the lease are each one script (atomic); a record
// expires at its expiresAt (relative TTL from the injected clock).
// Availability as for the other stores: a command while Redis is away fails
// at once with StoreUnavailableError (answered 503).
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { defineScript, type CommandParser } from "redis";
import { connectRedisStore } from "../accounts/redis-connect.ts";
import { TaskSchema, type Task } from "../../gen/router/v1/tasks_pb.js";
import { createRedisGuard } from "../accounts/redis-guard.ts";
import { readStoredJson, storedJson } from "../accounts/stored-json.ts";
import { parseUnfinishedMember, taskRedisKeys, unfinishedMember } from "./redis-keys.ts";
import type { TaskStore } from "./store.ts";

export interface RedisTaskStoreOptions {
  url: string;
  prefix?: string;
  now?: () => number;
  logger?: { warn(details: object, message: string): void };
  commandTimeoutMs?: number;
}


// KEYS: idempotency key (or the task's own name when none), task, list,
// unfinished, owner. ARGV: id, task JSON, TTL ms, score, unfinished member, "1" when
// an idempotency key is used, the organisation's task base, the organisation. Answers
// {1, json} when created, {0, earlier json} when the key named a task still kept.
const createScript = defineScript({
  SCRIPT: `
local idem, task, list, unfinished, owner = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, json, ttl, score, member, useIdem, base, org = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]
if useIdem == '1' then
  local earlier = redis.call('GET', idem)
  if earlier then
    local stored = redis.call('GET', base .. earlier)
    if stored then return {0, stored} end
  end
  redis.call('SET', idem, id, 'PX', ttl)
end
redis.call('SET', task, json, 'PX', ttl)
redis.call('SET', owner, org, 'PX', ttl)
redis.call('ZADD', list, score, id)
if redis.call('PTTL', list) < tonumber(ttl) then redis.call('PEXPIRE', list, ttl) end
redis.call('SADD', unfinished, member)
return {1, json}`,
  NUMBER_OF_KEYS: 5,
  parseCommand(parser: CommandParser, keys: string[], args: string[]) {
    for (const key of keys) parser.pushKey(key);
    parser.push(...args);
  },
  transformReply: (reply: unknown) => reply as [number, string],
});

// KEYS[1]: the lease. ARGV: owner, ms. Takes a free or expired lease, renews one's own.
const leaseScript = defineScript({
  SCRIPT: `
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`,
  NUMBER_OF_KEYS: 1,
  parseCommand(parser: CommandParser, key: string, owner: string, ms: number) {
    parser.pushKey(key);
    parser.push(owner, String(Math.max(1, Math.ceil(ms))));
  },
  transformReply: (reply: unknown) => reply as number,
});

const unleaseScript = defineScript({
  SCRIPT: `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end return 1`,
  NUMBER_OF_KEYS: 1,
  parseCommand(parser: CommandParser, key: string, owner: string) {
    parser.pushKey(key);
    parser.push(owner);
  },
  transformReply: (reply: unknown) => reply as number,
});

export async function createRedisTaskStore(options: RedisTaskStoreOptions): Promise<TaskStore> {
  const keys = taskRedisKeys(options.prefix);
  const now = options.now ?? Date.now;
  const client = await connectRedisStore({ url: options.url, store: "task store", scripts: { createTask: createScript, lease: leaseScript, unlease: unleaseScript }, logger: options.logger });
  const guarded = createRedisGuard("task store", options.commandTimeoutMs ?? 2_000);
  const ttlOf = (task: Task) => (task.expiresAt ? timestampMs(task.expiresAt) - now() : 0);
  /** `which` names the record in the error when it cannot be decoded. */
  const parse = (json: string, which: string) => readStoredJson(TaskSchema, json, `task ${which}`);

  return {
    create: (task) =>
      guarded("create", async () => {
        const ttlMs = Math.max(1, ttlOf(task));
        const name = keys.task(task.organizationId, task.id);
        const idem = task.idempotencyKey ? keys.idempotency(task.organizationId, task.idempotencyKey) : name;
        const score = task.createdAt ? timestampMs(task.createdAt) : now();
        const args = [task.id, storedJson(TaskSchema, task), String(ttlMs), String(score), unfinishedMember(task.organizationId, task.id), task.idempotencyKey ? "1" : "0", keys.taskBase(task.organizationId), task.organizationId];
        const [created, json] = (await client.createTask([idem, name, keys.list(task.organizationId), keys.unfinished(), keys.owner(task.id)], args)) as [number, string];
        return created === 1 ? { task, created: true } : { task: parse(String(json), `for Idempotency-Key of ${task.id}`), created: false };
      }),
    save: (task) =>
      guarded("save", async () => {
        const ttlMs = ttlOf(task);
        if (task.expiresAt && ttlMs <= 0) return;
        await client.set(keys.task(task.organizationId, task.id), storedJson(TaskSchema, task), ttlMs > 0 ? { expiration: { type: "PX", value: ttlMs } } : undefined);
      }),
    get: (organizationId, id) =>
      guarded("get", async () => {
        const json = await client.get(keys.task(organizationId, id));
        return json == null ? undefined : parse(json, id);
      }),
    findByIdempotencyKey: (organizationId, idempotencyKey) =>
      guarded("findByIdempotencyKey", async () => {
        const id = await client.get(keys.idempotency(organizationId, idempotencyKey));
        const json = id == null ? null : await client.get(keys.task(organizationId, id));
        return json == null ? undefined : parse(json, id!);
      }),
    ownerOf: (id) =>
      guarded("ownerOf", async () => {
        const organizationId = await client.get(keys.owner(id));
        // The owner key expires with the task; the record is still asked, as a save may have dropped it earlier.
        return organizationId != null && (await client.exists(keys.task(organizationId, id))) === 1 ? organizationId : undefined;
      }),
    list: (organizationId, limit) =>
      guarded("list", async () => {
        if (limit < 1) return [];
        const ids = await client.zRange(keys.list(organizationId), 0, limit - 1, { REV: true } as never);
        if (ids.length === 0) return [];
        const values = await client.mGet(ids.map((id) => keys.task(organizationId, id)));
        return values.flatMap((json, i) => (json == null ? [] : [parse(json, ids[i])]));
      }),
    indexUpstream: (task, upstreamId = task.upstreamJobId) =>
      guarded("indexUpstream", async () => {
        const ttlMs = ttlOf(task);
        if (task.expiresAt && ttlMs <= 0) return;
        await client.set(keys.upstream(task.organizationId, task.provider, upstreamId), task.id, ttlMs > 0 ? { expiration: { type: "PX", value: ttlMs } } : undefined);
      }),
    findByUpstream: (organizationId, provider, upstreamId) =>
      guarded("findByUpstream", async () => (await client.get(keys.upstream(organizationId, provider, upstreamId))) ?? undefined),
    rememberCached: (organizationId, digest, taskId, expiresAtMs) =>
      guarded("rememberCached", async () => {
        const ttlMs = Math.ceil(expiresAtMs - now());
        if (ttlMs <= 0) return;
        await client.set(keys.cached(organizationId, digest), taskId, { expiration: { type: "PX", value: ttlMs } });
      }),
    findCached: (organizationId, digest) => guarded("findCached", async () => (await client.get(keys.cached(organizationId, digest))) ?? undefined),
    unfinished: () => guarded("unfinished", async () => (await client.sMembers(keys.unfinished())).map(parseUnfinishedMember)),
    finish: (ref) => guarded("finish", async () => void (await client.sRem(keys.unfinished(), unfinishedMember(ref.organizationId, ref.id)))),
    lease: (id, owner, leaseMs) => guarded("lease", async () => (await client.lease(keys.lease(id), owner, leaseMs)) === 1),
    unlease: (id, owner) => guarded("unlease", async () => void (await client.unlease(keys.lease(id), owner))),
    close: async () => {
      if (!client.isOpen) return;
      if (client.isReady) await client.close();
      else client.destroy();
    },
  };
}
