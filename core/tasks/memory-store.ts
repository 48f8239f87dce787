// The in-memory task store: the embedded default (one process). Tasks expire
// at their `expiresAt` by the injected clock, dropped when read; leases too.
import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { Task } from "../../gen/router/v1/tasks_pb.js";
import type { TaskRef, TaskStore } from "./store.ts";

export function createMemoryTaskStore(options: { now?: () => number } = {}): TaskStore {
  const now = options.now ?? Date.now;
  const tasks = new Map<string, Task>();
  const owners = new Map<string, string>();
  const idempotency = new Map<string, string>();
  const unfinished = new Map<string, TaskRef>();
  const leases = new Map<string, { owner: string; until: number }>();
  const upstream = new Map<string, { id: string; expiresAt: number }>();
  const cached = new Map<string, { id: string; expiresAt: number }>();
  const upstreamKey = (organizationId: string, provider: string, upstreamId: string) => [organizationId, provider, upstreamId].join("\u0000");
  const keyOf = (organizationId: string, id: string) => `${organizationId}\u0000${id}`;
  const expired = (task: Task) => task.expiresAt !== undefined && timestampMs(task.expiresAt) <= now();

  const read = (organizationId: string, id: string) => {
    const key = keyOf(organizationId, id);
    const task = tasks.get(key);
    if (task && expired(task)) {
      tasks.delete(key);
      return undefined;
    }
    return task;
  };

  return {
    async create(task) {
      const idempotencyKey = task.idempotencyKey ? keyOf(task.organizationId, task.idempotencyKey) : undefined;
      const existingId = idempotencyKey ? idempotency.get(idempotencyKey) : undefined;
      const existing = existingId ? read(task.organizationId, existingId) : undefined;
      if (existing) return { task: existing, created: false };
      if (idempotencyKey) idempotency.set(idempotencyKey, task.id);
      tasks.set(keyOf(task.organizationId, task.id), task);
      owners.set(task.id, task.organizationId);
      unfinished.set(keyOf(task.organizationId, task.id), { organizationId: task.organizationId, id: task.id });
      return { task, created: true };
    },
    async save(task) {
      if (expired(task)) return;
      tasks.set(keyOf(task.organizationId, task.id), task);
    },
    async findByIdempotencyKey(organizationId, idempotencyKey) {
      const id = idempotency.get(keyOf(organizationId, idempotencyKey));
      return id ? read(organizationId, id) : undefined;
    },
    async get(organizationId, id) {
      return read(organizationId, id);
    },
    async ownerOf(id) {
      const organizationId = owners.get(id);
      if (organizationId !== undefined && read(organizationId, id)) return organizationId;
      owners.delete(id);
      return undefined;
    },
    async list(organizationId, limit) {
      const own = [...tasks.values()].filter((task) => task.organizationId === organizationId && read(organizationId, task.id));
      return own.reverse().slice(0, limit);
    },
    async indexUpstream(task, upstreamId = task.upstreamJobId) {
      upstream.set(upstreamKey(task.organizationId, task.provider, upstreamId), { id: task.id, expiresAt: task.expiresAt ? timestampMs(task.expiresAt) : Infinity });
    },
    async findByUpstream(organizationId, provider, upstreamId) {
      const key = upstreamKey(organizationId, provider, upstreamId);
      const entry = upstream.get(key);
      if (entry && entry.expiresAt <= now()) upstream.delete(key);
      return entry && entry.expiresAt > now() ? entry.id : undefined;
    },
    async rememberCached(organizationId, digest, taskId, expiresAtMs) {
      if (expiresAtMs > now()) cached.set(keyOf(organizationId, digest), { id: taskId, expiresAt: expiresAtMs });
    },
    async findCached(organizationId, digest) {
      const key = keyOf(organizationId, digest);
      const entry = cached.get(key);
      if (entry && entry.expiresAt <= now()) cached.delete(key);
      return entry && entry.expiresAt > now() ? entry.id : undefined;
    },
    async unfinished() {
      return [...unfinished.values()];
    },
    async finish(ref) {
      unfinished.delete(keyOf(ref.organizationId, ref.id));
    },
    async lease(id, owner, leaseMs) {
      const current = leases.get(id);
      if (current && current.owner !== owner && current.until > now()) return false;
      leases.set(id, { owner, until: now() + leaseMs });
      return true;
    },
    async unlease(id, owner) {
      if (leases.get(id)?.owner === owner) leases.delete(id);
    },
    async close() {},
  };
}
