// The Lua scripts of the Redis account stores. Whatever must be exact under
// concurrency (admission, settlement, key creation and seeding) is one script:
// Redis runs a script to completion before any other command, so nothing can
// interleave between its reads and its writes.
//
// Every script takes the key prefix (ARGV[1]) and one JSON payload (ARGV[2]),
// and answers JSON (or nil). Key names come from redis-keys.ts's Lua builders.
//
// Money stays in integer strings: Lua numbers are doubles, so a balance is
// compared digit by digit (lessThan) and changed with INCRBY/DECRBY, which
// Redis computes in 64-bit integers. Counts (requests, tokens, free units) are
// small and safe as Lua numbers.
import { defineScript, type CommandParser } from "redis";
import { luaKeyBuilders } from "./redis-keys.ts";

const PRELUDE = `
local PREFIX = ARGV[1]
${luaKeyBuilders()}

-- a < b for canonical integer strings (no '+', no leading zeros), exactly.
local function lessThan(a, b)
  local aNegative, bNegative = a:sub(1, 1) == '-', b:sub(1, 1) == '-'
  if aNegative ~= bNegative then return aNegative end
  if aNegative then a, b = b:sub(2), a:sub(2) end
  if #a ~= #b then return #a < #b end
  for i = 1, #a do
    local x, y = a:byte(i), b:byte(i)
    if x ~= y then return x < y end
  end
  return false
end

-- HGETALL's flat reply as a table.
local function hashOf(fields)
  local hash = {}
  for i = 1, #fields, 2 do hash[fields[i]] = fields[i + 1] end
  return hash
end
`;

// The checks run in memory-store.ts's order; nothing is written before the
// last check has passed.
const ADMIT = `${PRELUDE}
local request = cjson.decode(ARGV[2])
local function refuse(refusal)
  return cjson.encode({ admitted = false, refusal = refusal })
end

-- 1. The key exists and is enabled. Unknown with no seed marker: Redis lost
-- its data, and the caller seeds it again before saying the key is invalid.
local fields = redis.call('HGETALL', keyRecord(request.digest))
if #fields == 0 then
  if redis.call('EXISTS', seedMarker()) == 0 then return refuse({ reason = 'not_seeded' }) end
  return refuse({ reason = 'invalid_api_key' })
end
local key = hashOf(fields)
if key.disabled == '1' then return refuse({ reason = 'key_disabled' }) end

-- 2. Every model named is on the key's allow-list (an empty list allows all;
-- most keys have none, so there is nothing to decode).
local allowedSet
if key.allowedModels ~= '[]' then
  allowedSet = {}
  for _, modelId in ipairs(cjson.decode(key.allowedModels)) do allowedSet[modelId] = true end
end
local function allowed(modelId)
  return allowedSet == nil or allowedSet[modelId] == true
end
for _, modelId in ipairs(request.modelIds) do
  if not allowed(modelId) then return refuse({ reason = 'model_not_allowed', modelId = modelId }) end
end

-- 3. The request id is not already in flight.
local requestName = admittedRequest(request.requestId)
if redis.call('EXISTS', requestName) == 1 then return refuse({ reason = 'duplicate_request' }) end

-- 4. Rate windows: the key's, then the organisation's; requests, then tokens.
local organizationId = key.organizationId
local organization = redis.call('HMGET', organizationLimits(organizationId), 'rpm', 'tpm')
local scopes = {
  { scope = 'key', name = keyWindow(key.keyId, request.minuteStart), rpm = tonumber(key.rpm), tpm = tonumber(key.tpm) },
  { scope = 'organization', name = organizationWindow(organizationId, request.minuteStart),
    rpm = tonumber(organization[1]), tpm = tonumber(organization[2]) },
}
for _, s in ipairs(scopes) do
  local counts = redis.call('HMGET', s.name, 'requests', 'tokens')
  s.requests = tonumber(counts[1]) or 0
  s.tokens = tonumber(counts[2]) or 0
  if s.rpm and s.requests >= s.rpm then
    return refuse({ reason = 'rate_limited', scope = s.scope, unit = 'requests', limit = s.rpm })
  end
  if s.tpm and s.tokens >= s.tpm then
    return refuse({ reason = 'rate_limited', scope = s.scope, unit = 'tokens', limit = s.tpm })
  end
end

-- 5. The charge: a credit hold, or one unit of a free model's daily quota.
local record = { 'organizationId', organizationId, 'keyId', key.keyId, 'holdNanos', '0' }
local free
local charge = request.charge
if charge.kind == 'credits' then
  local balanceName = balance(organizationId)
  local current = redis.call('GET', balanceName) or '0'
  if lessThan(current, charge.holdNanos) then
    return refuse({ reason = 'insufficient_credits', balanceNanos = current, neededNanos = charge.holdNanos })
  end
  redis.call('DECRBY', balanceName, charge.holdNanos)
  record[6] = charge.holdNanos
else
  local counted, eligible = {}, {}
  for _, candidate in ipairs(charge.candidates) do
    if allowed(candidate.modelId) then
      local name = freeCounter(organizationId, candidate.modelId, request.day)
      local entry = { modelId = candidate.modelId, limit = candidate.dailyQuota, name = name,
                      used = tonumber(redis.call('GET', name)) or 0 }
      table.insert(counted, entry)
      if entry.used < entry.limit then table.insert(eligible, entry) end
    end
  end
  if #eligible == 0 then
    -- Whose quota ran out: the first candidate counted (the core turns it into
    -- no_free_model_available for router/free); none counted: none may be used.
    if #counted > 0 then
      return refuse({ reason = 'free_quota_exhausted', modelId = counted[1].modelId,
                      limit = counted[1].limit, used = counted[1].used })
    end
    return refuse({ reason = 'no_free_model_available' })
  end
  local chosen = eligible[math.min(#eligible - 1, math.floor(charge.pick * #eligible)) + 1]
  -- Relative expiry (the caller's clock may differ from Redis's), set once, by the counter's first unit.
  if redis.call('INCR', chosen.name) == 1 then redis.call('PEXPIRE', chosen.name, request.freeTtlMs) end
  table.insert(record, 'freeCounter')
  table.insert(record, chosen.name)
  free = { modelId = chosen.modelId, limit = chosen.limit, used = chosen.used + 1 }
end

-- Admitted: count the request in both windows and keep it for its settlement.
for _, s in ipairs(scopes) do
  s.requests = redis.call('HINCRBY', s.name, 'requests', 1)
  -- The window's first request sets its expiry (a settlement may have set it before).
  if s.requests == 1 then redis.call('PEXPIRE', s.name, request.windowTtlMs) end
end
redis.call('HSET', requestName, unpack(record))
redis.call('PEXPIRE', requestName, request.requestTtlMs)
-- Released as abandoned if still unsettled by then (its instance died).
redis.call('ZADD', admittedDeadlines(), request.abandonAt, request.requestId)

local windows = {}
for i, s in ipairs(scopes) do
  windows[i] = { requests = s.requests, tokens = s.tokens, rpm = s.rpm, tpm = s.tpm }
end
-- Only what the core needs back: whose request it is, its windows, its free unit.
return cjson.encode({ admitted = true, keyId = key.keyId, organizationId = organizationId, windows = windows, free = free })
`;

// Settling one request, shared by the settlement and the abandoned-hold scripts.
const SETTLE_FUNCTION = `
local function settle(settlement)
  local requestName = admittedRequest(settlement.requestId)
  local admitted = hashOf(redis.call('HGETALL', requestName))
  redis.call('ZREM', admittedDeadlines(), settlement.requestId)
  -- Unknown, expired or already settled: nothing to do (idempotent).
  if not admitted.organizationId then return end
  redis.call('DEL', requestName)

  local balanceName = balance(admitted.organizationId)
  local hold, charge = admitted.holdNanos, settlement.chargeNanos
  local taken = charge
  if not lessThan(hold, charge) then
    -- Within the hold: what was not spent goes back.
    redis.call('INCRBY', balanceName, hold)
    redis.call('DECRBY', balanceName, charge)
  else
    -- Beyond the hold only what the balance has is taken: never below zero.
    local before = redis.call('GET', balanceName) or '0'
    redis.call('INCRBY', balanceName, hold)
    local available = redis.call('GET', balanceName)
    if lessThan(charge, available) then
      redis.call('DECRBY', balanceName, charge)
    elseif lessThan('0', before) then
      redis.call('SET', balanceName, '0')
      taken = available
    else
      redis.call('SET', balanceName, before)
      taken = hold
    end
  end
  -- What was charged, for GET /api/v1/key and /credits.
  if lessThan('0', taken) then
    redis.call('INCRBY', organizationSpent(admitted.organizationId), taken)
    redis.call('INCRBY', keySpent(admitted.keyId), taken)
    for _, period in ipairs(settlement.spendingPeriods or {}) do
      local name = keySpentIn(period.name, admitted.keyId)
      -- The period's first charge sets its expiry.
      local fresh = redis.call('EXISTS', name) == 0
      redis.call('INCRBY', name, taken)
      if fresh then redis.call('PEXPIRE', name, period.ttlMs) end
    end
  end

  -- A failed free request gives its unit back, to the day it was taken from.
  if settlement.refundFreeQuota and admitted.freeCounter then
    local used = tonumber(redis.call('GET', admitted.freeCounter)) or 0
    if used > 0 then redis.call('DECR', admitted.freeCounter) end
  end

  if settlement.tokens ~= '0' then
    local names = { keyWindow(admitted.keyId, settlement.minuteStart),
                    organizationWindow(admitted.organizationId, settlement.minuteStart) }
    for _, name in ipairs(names) do
      -- The window's first write sets its expiry (an admission may have set it before).
      if redis.call('HINCRBY', name, 'tokens', settlement.tokens) == tonumber(settlement.tokens) then
        redis.call('PEXPIRE', name, settlement.windowTtlMs)
      end
    end
  end
end
`;

// Settles a batch of requests, each on its own (one script call for many
// keeps the background work light under load).
const SETTLE = `${PRELUDE}${SETTLE_FUNCTION}
for _, settlement in ipairs(cjson.decode(ARGV[2])) do settle(settlement) end
return 1
`;

// Releases requests whose deadline has passed unsettled: the hold goes back,
// the free unit too, nothing is charged. A batch at a time.
const RELEASE_ABANDONED = `${PRELUDE}${SETTLE_FUNCTION}
local payload = cjson.decode(ARGV[2])
local ids = redis.call('ZRANGEBYSCORE', admittedDeadlines(), '-inf', payload.now, 'LIMIT', 0, payload.limit)
for _, requestId in ipairs(ids) do
  settle({ requestId = requestId, chargeNanos = '0', tokens = '0', refundFreeQuota = true })
end
return #ids
`;

// create refuses a taken key id; seed updates it, keeping the creation time
// and an operator's disable (configuration can disable, never re-enable), and
// moves it when its digest or organisation changed, except that a key made up
// at start (keep) never replaces a digest the id has. Answers the digest the
// key id has now (0: create found it taken). The organisation becomes known.
const PUT_KEY = `${PRELUDE}
local key = cjson.decode(ARGV[2])
local digestName = keyDigest(key.keyId)
local oldDigest = redis.call('GET', digestName)
local disabled, createdAt = key.disabled, key.createdAt
if oldDigest then
  if key.mode == 'create' then return 0 end
  if key.keep then key.digest = oldDigest end
  local oldName = keyRecord(oldDigest)
  local kept = redis.call('HMGET', oldName, 'disabled', 'createdAt', 'organizationId')
  if kept[1] == '1' then disabled = '1' end
  createdAt = kept[2] or createdAt
  if kept[3] then redis.call('SREM', organizationKeys(kept[3]), key.keyId) end
  redis.call('DEL', oldName)
end
local name = keyRecord(key.digest)
redis.call('DEL', name)
redis.call('HSET', name, 'disabled', disabled, 'createdAt', createdAt, unpack(key.fields))
redis.call('SET', digestName, key.digest)
redis.call('SADD', organizationKeys(key.organizationId), key.keyId)
redis.call('HSETNX', organizations(), key.organizationId, '')
return key.digest
`;

const SET_DISABLED = `${PRELUDE}
local request = cjson.decode(ARGV[2])
local digest = redis.call('GET', keyDigest(request.keyId))
if not digest then return false end
local name = keyRecord(digest)
if redis.call('EXISTS', name) == 0 then return false end
redis.call('HSET', name, 'disabled', request.disabled)
return cjson.encode(redis.call('HGETALL', name))
`;

// Appends usage records, each once: a record id already stored is skipped, so
// a batch retried after a reply was lost (Redis frozen past the command
// timeout, the first write ran later) adds nothing twice. Each new id goes on
// its organisation's list, and the lists touched are trimmed to \`kept\`.
const APPEND_USAGE = `${PRELUDE}
local payload = cjson.decode(ARGV[2])
local touched = {}
for _, record in ipairs(payload.records) do
  if redis.call('SET', usageRecord(record.id), record.json, 'EX', payload.ttlSeconds, 'NX') then
    redis.call('LPUSH', usageList(record.organizationId), record.id)
    touched[record.organizationId] = true
  end
end
for organizationId in pairs(touched) do redis.call('LTRIM', usageList(organizationId), 0, payload.kept - 1) end
return 1
`;

// INCRBY answers a Redis integer, which the client would turn into a JS
// number (a double): answer the exact string instead. The organisation
// (ARGV[2]) becomes known in the KEYS[2] hash.
const TOP_UP = `
redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('HSETNX', KEYS[2], ARGV[2], '')
return redis.call('GET', KEYS[1])
`;

export interface AdmitPayload {
  digest: string;
  requestId: string;
  modelIds: string[];
  /** Numbers that end up in key names or TTLs travel as strings (see luaKeyBuilders). */
  minuteStart: string;
  day: string;
  windowTtlMs: string;
  freeTtlMs: string;
  requestTtlMs: string;
  /** Unix ms after which the request, unsettled, is released as abandoned. */
  abandonAt: string;
  charge: { kind: "credits"; holdNanos: string } | { kind: "free"; candidates: { modelId: string; dailyQuota: number }[]; pick: number };
}

/** A refusal as Lua reports it: resetAt is added by the caller, money is in strings. */
export type ScriptRefusal =
  | { reason: "invalid_api_key" | "key_disabled" | "duplicate_request" | "no_free_model_available" }
  /** The key is unknown and so is the seed marker: the caller re-seeds, then asks again. */
  | { reason: "not_seeded" }
  | { reason: "model_not_allowed"; modelId: string }
  | { reason: "rate_limited"; scope: "key" | "organization"; unit: "requests" | "tokens"; limit: number }
  | { reason: "insufficient_credits"; balanceNanos: string; neededNanos: string }
  | { reason: "free_quota_exhausted"; modelId: string; limit: number; used: number };

export interface ScriptWindow {
  /** Requests counted in this minute, this one included; tokens settled in it. */
  requests: number;
  tokens: number;
  rpm?: number;
  tpm?: number;
}

export type AdmitReply =
  | { admitted: false; refusal: ScriptRefusal }
  | {
      admitted: true;
      keyId: string;
      organizationId: string;
      /** The key's window, then the organisation's. */
      windows: ScriptWindow[];
      free?: { modelId: string; limit: number; used: number };
    };

export interface SettlePayload {
  requestId: string;
  chargeNanos: string;
  tokens: string;
  refundFreeQuota: boolean;
  minuteStart: string;
  windowTtlMs: string;
}

export interface AppendUsagePayload {
  /** Each record's id, organisation and JSON. */
  records: { id: string; organizationId: string; json: string }[];
  ttlSeconds: number;
  /** The most record ids an organisation's list keeps. */
  kept: number;
}

export interface PutKeyPayload {
  mode: "create" | "seed";
  /** Seed only: a digest the key id already has is kept (a key made up at start). */
  keep?: boolean;
  digest: string;
  keyId: string;
  organizationId: string;
  /** For a new key; an existing one stays disabled when it was. */
  disabled: "0" | "1";
  createdAt: string;
  /** Field/value list of the record, without disabled and createdAt. */
  fields: string[];
}

export interface SetDisabledPayload {
  keyId: string;
  disabled: "0" | "1";
}

const jsonScript = <Payload, Reply>(script: string, parseReply: (reply: unknown) => Reply) =>
  defineScript({
    SCRIPT: script,
    NUMBER_OF_KEYS: 0,
    parseCommand(parser: CommandParser, prefix: string, payload: Payload) {
      parser.push(prefix, JSON.stringify(payload));
    },
    transformReply: parseReply,
  });

const parseJson =
  <T>() =>
  (reply: unknown): T =>
    JSON.parse(String(reply)) as T;

/** The scripts, for createClient({ scripts }): each call is one EVALSHA. */
export const accountScripts = {
  admit: jsonScript<AdmitPayload, AdmitReply>(ADMIT, parseJson<AdmitReply>()),
  settle: jsonScript<SettlePayload[], void>(SETTLE, () => undefined),
  /** How many abandoned requests were released (at most `limit`). */
  releaseAbandoned: jsonScript<{ now: string; limit: number }, number>(RELEASE_ABANDONED, (reply) => Number(reply)),
  appendUsage: jsonScript<AppendUsagePayload, void>(APPEND_USAGE, () => undefined),
  /** The digest the key id has now, or undefined when create found the id taken. */
  putKey: jsonScript<PutKeyPayload, string | undefined>(PUT_KEY, (reply) => (typeof reply === "string" ? reply : undefined)),
  /** The updated record's flat field/value list, or null without such a key. */
  setDisabled: jsonScript<SetDisabledPayload, string[] | null>(SET_DISABLED, (reply) => (reply === null ? null : parseJson<string[]>()(reply))),
  /** Adds nanos (an integer string) to a balance, answering the new balance as a string. */
  topUp: defineScript({
    SCRIPT: TOP_UP,
    NUMBER_OF_KEYS: 2,
    parseCommand(parser: CommandParser, balanceKey: string, organizationsKey: string, nanos: string, organizationId: string) {
      parser.pushKey(balanceKey);
      parser.pushKey(organizationsKey);
      parser.push(nanos, organizationId);
    },
    transformReply: (reply: unknown) => String(reply),
  }),
};
