// Every Redis key name of the task store, in one place (docs rule 2). The
// organisation is URI-encoded, so it holds no ':' and two (organisation, id)
// pairs never share a name.

export const DEFAULT_REDIS_PREFIX = "rtr:";

export interface TaskRedisKeys {
  /** String: the Task as JSON, expiring at its expiresAt. */
  task(organizationId: string, id: string): string;
  /** `task(o, id) === taskBase(o) + id` (the create script reads an earlier task by id). */
  taskBase(organizationId: string): string;
  /** String: the id of the task an Idempotency-Key created. */
  idempotency(organizationId: string, key: string): string;
  /** String: the id of the task whose provider job this is. */
  upstream(organizationId: string, provider: string, upstreamId: string): string;
  /** String: the organisation of the task with this id (a signed link names no organisation), expiring with the task. */
  owner(id: string): string;
  /** String: the id of the succeeded task an exact cache key (its SHA-256 hex) names, expiring with the task's assets. */
  cached(organizationId: string, digest: string): string;
  /** Sorted set of the organisation's task ids, scored by creation time (ms). */
  list(organizationId: string): string;
  /** Set of `<organisation>:<id>` of the unfinished tasks of every instance. */
  unfinished(): string;
  /** String: the instance polling the task, expiring with its lease. */
  lease(id: string): string;
}

export function taskRedisKeys(prefix: string = DEFAULT_REDIS_PREFIX): TaskRedisKeys {
  const org = encodeURIComponent;
  const taskBase = (organizationId: string) => `${prefix}task:${org(organizationId)}:`;
  return {
    task: (organizationId, id) => taskBase(organizationId) + id,
    taskBase,
    idempotency: (organizationId, key) => `${prefix}task-idem:${org(organizationId)}:${encodeURIComponent(key)}`,
    upstream: (organizationId, provider, upstreamId) => `${prefix}task-upstream:${org(organizationId)}:${provider}:${encodeURIComponent(upstreamId)}`,
    cached: (organizationId, digest) => `${prefix}task-cache:${org(organizationId)}:${digest}`,
    owner: (id) => `${prefix}task-owner:${id}`,
    list: (organizationId) => `${prefix}task-list:${org(organizationId)}`,
    unfinished: () => `${prefix}task-unfinished`,
    lease: (id) => `${prefix}task-lease:${id}`,
  };
}

/** The member of the unfinished set for a task, and back. */
export const unfinishedMember = (organizationId: string, id: string) => `${encodeURIComponent(organizationId)}:${id}`;
export function parseUnfinishedMember(member: string): { organizationId: string; id: string } {
  const at = member.indexOf(":");
  return { organizationId: decodeURIComponent(member.slice(0, at)), id: member.slice(at + 1) };
}
