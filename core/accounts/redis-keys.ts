// Every Redis key name of the account stores, in one place (docs rule 2).
//
// Each name is a template below, after a configurable prefix. The TypeScript
// builders and the Lua builders (for scripts that derive names from what they
// read, e.g. the organisation of a key record) are both generated from these
// templates, so the two sides cannot drift apart.
//
// Scripts build names at run time, so they are single-instance scripts: Redis
// Cluster would need every name passed in KEYS and sharing a hash slot.

export const DEFAULT_REDIS_PREFIX = "rtr:";

const TEMPLATES = {
  /** Hash: the key record (KeyRecord fields, allowedModels as JSON, disabled as 0/1). */
  keyRecord: "key:<digest>",
  /** String: the digest of a key id (key ids are unique; the record lives under its digest). */
  keyDigest: "key-id:<keyId>",
  /** Set: the key ids of an organisation. */
  organizationKeys: "org:<organizationId>:keys",
  /** Hash: the organisation's rpm/tpm (absent field: no limit). */
  organizationLimits: "org:<organizationId>:limits",
  /** Hash: every known organisation's id to its configured name ("" for one made by a top-up or a new key). */
  organizations: "organizations",
  /** String: integer nano-dollars, spendable (holds already taken off). */
  balance: "balance:<organizationId>",
  /** String: integer nano-dollars settlements have charged to the organisation. */
  organizationSpent: "spent:org:<organizationId>",
  /** String: integer nano-dollars settlements have charged to the key. */
  keySpent: "spent:key:<keyId>",
  /**
   * String: integer nano-dollars settlements have charged to the key in one UTC period (windows.ts
   * spendingPeriod: `day:2026-11-03`), kept a day past its end. The period comes first: a key id
   * is any string, and could otherwise end like another key's period.
   */
  keySpentIn: "spent:<period>:key:<keyId>",
  /** Hash: an admitted request awaiting settlement (organisation, key, hold, free counter). */
  admittedRequest: "req:<requestId>",
  /** Sorted set: admitted request ids by the time their hold is given up as abandoned. */
  admittedDeadlines: "req-deadlines",
  /** Hash {requests, tokens}: a key's fixed UTC-minute window. */
  keyWindow: "rl:key:<keyId>:<minuteStart>",
  /** Hash {requests, tokens}: an organisation's fixed UTC-minute window. */
  organizationWindow: "rl:org:<organizationId>:<minuteStart>",
  /** String: free requests of a model used today (UTC day YYYY-MM-DD). */
  freeCounter: "free:<organizationId>:<modelId>:<day>",
  /** String: one usage record as JSON. */
  usageRecord: "usage:<id>",
  /** List: usage record ids of an organisation, newest first. */
  usageList: "usage-list:<organizationId>",
  /** String: written last by a seed; its absence means Redis lost what was seeded (restarted empty, flushed). */
  seedMarker: "seeded",
} as const;

type Template = keyof typeof TEMPLATES;
const PARAMETER = /<(\w+)>/g;

export interface RedisKeys {
  prefix: string;
  keyRecord(digest: string): string;
  keyDigest(keyId: string): string;
  organizationKeys(organizationId: string): string;
  organizationLimits(organizationId: string): string;
  organizations(): string;
  balance(organizationId: string): string;
  organizationSpent(organizationId: string): string;
  keySpent(keyId: string): string;
  keySpentIn(period: string, keyId: string): string;
  admittedRequest(requestId: string): string;
  admittedDeadlines(): string;
  keyWindow(keyId: string, minuteStart: number): string;
  organizationWindow(organizationId: string, minuteStart: number): string;
  freeCounter(organizationId: string, modelId: string, day: string): string;
  usageRecord(id: string): string;
  usageList(organizationId: string): string;
  seedMarker(): string;
}

export function redisKeys(prefix: string = DEFAULT_REDIS_PREFIX): RedisKeys {
  // Arguments fill the template's parameters in order.
  const build =
    (template: Template) =>
    (...values: (string | number)[]) => {
      let index = 0;
      return prefix + TEMPLATES[template].replace(PARAMETER, () => String(values[index++]));
    };
  return {
    prefix,
    keyRecord: build("keyRecord"),
    keyDigest: build("keyDigest"),
    organizationKeys: build("organizationKeys"),
    organizationLimits: build("organizationLimits"),
    organizations: build("organizations"),
    balance: build("balance"),
    organizationSpent: build("organizationSpent"),
    keySpent: build("keySpent"),
    keySpentIn: build("keySpentIn"),
    admittedRequest: build("admittedRequest"),
    admittedDeadlines: build("admittedDeadlines"),
    keyWindow: build("keyWindow"),
    organizationWindow: build("organizationWindow"),
    freeCounter: build("freeCounter"),
    usageRecord: build("usageRecord"),
    usageList: build("usageList"),
    seedMarker: build("seedMarker"),
  };
}

/**
 * Lua source defining one local function per template, same name and
 * parameters (e.g. `keyWindow(keyId, minuteStart)`), prefixed with the Lua
 * variable `PREFIX`, which the script must define first. Parameters must be
 * strings: Lua would print a large number as 1.7e+12.
 */
export function luaKeyBuilders(): string {
  return Object.entries(TEMPLATES)
    .map(([name, template]) => {
      const parameters = [...template.matchAll(PARAMETER)].map((match) => match[1]);
      const parts = template
        .split(/(<\w+>)/)
        .filter((part) => part !== "")
        .map((part) => (part.startsWith("<") ? part.slice(1, -1) : `'${part}'`));
      return `local function ${name}(${parameters.join(", ")}) return PREFIX .. ${parts.join(" .. ")} end`;
    })
    .join("\n");
}
