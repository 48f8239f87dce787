// Stored media tasks (gen/router/v1/tasks_pb Task), under their organisation
// and id, kept until their `expiresAt` (tasks.retention_seconds). Two
// implementations, in memory (the embedded default) and Redis (REDIS_URL,
// shared by instances), with one contract test
// (test/core/tasks/store-contract.test.ts). Besides the records, the store
// keeps what the pollers of every instance share: the set of unfinished
// tasks and one lease per task, so that exactly one instance polls a job and
// a job whose instance died is taken over once its lease passes. A backend
// that cannot answer throws StoreUnavailableError (answered with 503).
import type { Task } from "../../gen/router/v1/tasks_pb.js";

export interface TaskRef {
  organizationId: string;
  id: string;
}

export interface TaskStore {
  /**
   * Saves a new task and marks it unfinished. When it carries an
   * idempotency key that its organisation already used for a task still
   * kept, nothing is saved and that task is answered (`created: false`):
   * one atomic step, so two racing creates make one task.
   */
  create(task: Task): Promise<{ task: Task; created: boolean }>;
  /** Replaces the task's record (until its `expiresAt`). */
  save(task: Task): Promise<void>;
  /** The organisation's task still kept that this Idempotency-Key created; undefined when none. */
  findByIdempotencyKey(organizationId: string, idempotencyKey: string): Promise<Task | undefined>;
  /** One task, only to its own organisation; undefined once expired. */
  get(organizationId: string, id: string): Promise<Task | undefined>;
  /**
   * The organisation of a task still kept, found by the id alone (ids are
   * unique); undefined once it expired. Only for a signed asset link, which
   * names the task but no organisation (docs/tasks.md, "Signed links").
   */
  ownerOf(id: string): Promise<string | undefined>;
  /** The organisation's tasks still kept, newest first, at most `limit`. */
  list(organizationId: string, limit: number): Promise<Task[]>;
  /**
   * Remembers that the provider's job `upstreamId` (default: the task's
   * upstreamJobId; else another id the provider gives the same job) is the
   * task's, until the task's expiry, so a provider-prefixed id
   * (`<provider>:<upstream id>`) finds it.
   */
  indexUpstream(task: Task, upstreamId?: string): Promise<void>;
  /** The id of the organisation's task whose provider job this is; undefined when none. */
  findByUpstream(organizationId: string, provider: string, upstreamId: string): Promise<string | undefined>;
  /**
   * Remembers that the organisation's exact cache key `digest` (tasks.ts,
   * cacheDigest) names the succeeded task `taskId`, until `expiresAtMs`
   * (Unix ms): a later create with the same key answers that task.
   */
  rememberCached(organizationId: string, digest: string, taskId: string, expiresAtMs: number): Promise<void>;
  /** The id of the task the organisation's cache key `digest` names; undefined when none, or once it expired. */
  findCached(organizationId: string, digest: string): Promise<string | undefined>;
  /** Every task created and not yet finished, whichever instance created it. */
  unfinished(): Promise<TaskRef[]>;
  /** The task has ended (or is gone): no poller looks at it again. */
  finish(ref: TaskRef): Promise<void>;
  /**
   * Takes the task's lease for `owner` for `leaseMs` from now, or renews it
   * when `owner` holds it already; false while another owner's lease runs.
   */
  lease(id: string, owner: string, leaseMs: number): Promise<boolean>;
  /** Gives up the lease, if `owner` holds it. */
  unlease(id: string, owner: string): Promise<void>;
  close(): Promise<void>;
}
