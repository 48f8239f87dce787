// One contract for both task stores (core/tasks/store.ts): in memory and
// Redis on a private server. Time is injected, so retention and leases are
// crossed without waiting (the Redis store sets relative TTLs from the same
// clock; a lease's TTL is Redis's own, so lease expiry is checked with a short
// lease on Redis and the injected clock in memory; a cache key's expiry alike).
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createMemoryTaskStore } from "../../../core/tasks/memory-store.ts";
import { createRedisTaskStore } from "../../../core/tasks/redis-store.ts";
import type { TaskStore } from "../../../core/tasks/store.ts";
import { TaskKind, TaskSchema, TaskStatus, type Task } from "../../../gen/router/v1/tasks_pb.js";
import { startRedisServer, type RedisServer } from "../../support/redis-server.ts";

const T0 = Date.UTC(2026, 10, 3, 12, 0, 0);
const HOUR = 3_600_000;

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

let prefixes = 0;

function task(id: string, fields: Partial<Omit<Task, "$typeName">> = {}): Task {
  return create(TaskSchema, {
    id,
    organizationId: "org a:1",
    keyId: "key_a",
    modelId: "bfl/flux-2-pro",
    provider: "bfl",
    kind: TaskKind.IMAGE,
    status: TaskStatus.QUEUED,
    image: { prompt: `prompt ${id}`, n: 1 },
    createdAt: timestampFromMs(T0),
    expiresAt: timestampFromMs(T0 + HOUR),
    holdNanos: 30_000_000n,
    ...fields,
  });
}

const backends: [string, (now: () => number) => Promise<TaskStore>][] = [
  ["memory", async (now) => createMemoryTaskStore({ now })],
  ["redis", async (now) => createRedisTaskStore({ url: server.url, prefix: `tasks-contract-${++prefixes}:`, now })],
];

describe.each(backends)("task store: %s", (_name, open) => {
  let clock = T0;
  let store: TaskStore;
  beforeAll(async () => {
    store = await open(() => clock);
  });
  afterAll(async () => {
    await store?.close();
  });

  it("creates a task, reads it back whole, and only to its organisation", async () => {
    const created = await store.create(task("t1"));
    expect(created.created).toBe(true);
    expect(await store.get("org a:1", "t1")).toEqual(task("t1"));
    expect(await store.get("org b", "t1")).toBeUndefined();
    expect(await store.get("org a:1", "missing")).toBeUndefined();
  });

  it("answers the first task for an Idempotency-Key the organisation used, and keeps keys apart per organisation", async () => {
    const first = await store.create(task("i1", { idempotencyKey: "same" }));
    const again = await store.create(task("i2", { idempotencyKey: "same" }));
    expect(first.created).toBe(true);
    expect(again).toEqual({ task: task("i1", { idempotencyKey: "same" }), created: false });
    expect(await store.get("org a:1", "i2")).toBeUndefined();
    expect(await store.findByIdempotencyKey("org a:1", "same")).toEqual(task("i1", { idempotencyKey: "same" }));
    expect(await store.findByIdempotencyKey("org b", "same")).toBeUndefined();
    expect(await store.findByIdempotencyKey("org a:1", "unused")).toBeUndefined();
    const elsewhere = await store.create(task("i3", { idempotencyKey: "same", organizationId: "org b" }));
    expect(elsewhere.created).toBe(true);
    expect((await store.findByIdempotencyKey("org b", "same"))?.id).toBe("i3");
  });

  it("makes one task of two racing creates with one key", async () => {
    const results = await Promise.all([store.create(task("r1", { idempotencyKey: "race" })), store.create(task("r2", { idempotencyKey: "race" }))]);
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(results[0].task.id).toBe(results[1].task.id);
  });

  it("saves progress over the record and lists the organisation's tasks newest first", async () => {
    const own = await open(() => clock);
    try {
      await own.create(task("l1", { organizationId: "lister", createdAt: timestampFromMs(T0) }));
      await own.create(task("l2", { organizationId: "lister", createdAt: timestampFromMs(T0 + 1) }));
      await own.create(task("l3", { organizationId: "lister", createdAt: timestampFromMs(T0 + 2) }));
      await own.save(task("l1", { organizationId: "lister", status: TaskStatus.RUNNING, progress: 0.5 }));
      expect((await own.get("lister", "l1"))?.status).toBe(TaskStatus.RUNNING);
      expect((await own.list("lister", 2)).map((t) => t.id)).toEqual(["l3", "l2"]);
      expect((await own.list("lister", 10)).map((t) => t.id)).toEqual(["l3", "l2", "l1"]);
      expect(await own.list("nobody", 10)).toEqual([]);
    } finally {
      await own.close();
    }
  });

  it("keeps unfinished tasks in one shared set until finished", async () => {
    const own = await open(() => clock);
    try {
      await own.create(task("u1", { organizationId: "org:u" }));
      await own.create(task("u2", { organizationId: "org:u" }));
      expect(await own.unfinished()).toEqual(expect.arrayContaining([{ organizationId: "org:u", id: "u1" }, { organizationId: "org:u", id: "u2" }]));
      await own.finish({ organizationId: "org:u", id: "u1" });
      const left = await own.unfinished();
      expect(left).toContainEqual({ organizationId: "org:u", id: "u2" });
      expect(left).not.toContainEqual({ organizationId: "org:u", id: "u1" });
    } finally {
      await own.close();
    }
  });

  it("finds a task by its provider job id, only for its organisation", async () => {
    const indexed = task("p1", { upstreamJobId: "job/42" });
    await store.create(indexed);
    await store.indexUpstream(indexed);
    expect(await store.findByUpstream("org a:1", "bfl", "job/42")).toBe("p1");
    expect(await store.findByUpstream("org b", "bfl", "job/42")).toBeUndefined();
    expect(await store.findByUpstream("org a:1", "pollo", "job/42")).toBeUndefined();
    expect(await store.findByUpstream("org a:1", "bfl", "job/43")).toBeUndefined();
  });

  it("finds a task by another id of its provider job, indexed beside the job id", async () => {
    const indexed = task("p2", { upstreamJobId: "projects/x/operations/77" });
    await store.create(indexed);
    await store.indexUpstream(indexed);
    await store.indexUpstream(indexed, "77");
    expect(await store.findByUpstream("org a:1", "bfl", "projects/x/operations/77")).toBe("p2");
    expect(await store.findByUpstream("org a:1", "bfl", "77")).toBe("p2");
    expect(await store.findByUpstream("org b", "bfl", "77")).toBeUndefined();
  });

  it("finds a task's organisation by its id alone (a signed link names no organisation)", async () => {
    await store.create(task("o1"));
    expect(await store.ownerOf("o1")).toBe("org a:1");
    expect(await store.ownerOf("missing")).toBeUndefined();
    // An Idempotency-Key's replay made no task: the first task's organisation only.
    await store.create(task("o2", { idempotencyKey: "owner-test-key" }));
    await store.create(task("o3", { idempotencyKey: "owner-test-key" }));
    expect([await store.ownerOf("o2"), await store.ownerOf("o3")]).toEqual(["org a:1", undefined]);
  });

  it("forgets a task at its expiry (retention), its organisation by id too", async () => {
    await store.create(task("e1", { expiresAt: timestampFromMs(clock + 1000) }));
    expect(await store.get("org a:1", "e1")).toBeDefined();
    expect(await store.ownerOf("e1")).toBe("org a:1");
    if (_name === "memory") {
      clock += 1001;
      expect(await store.get("org a:1", "e1")).toBeUndefined();
      expect(await store.ownerOf("e1")).toBeUndefined();
      clock = T0;
    } else {
      // Redis expires by its own clock, the TTL relative to ours: 1 s from now.
      await vi.waitFor(async () => expect(await store.get("org a:1", "e1")).toBeUndefined(), { timeout: 5000, interval: 100 });
      expect(await store.ownerOf("e1")).toBeUndefined();
    }
  });

  it("maps an organisation's cache key to a task until the expiry given, and to no other organisation", async () => {
    await store.rememberCached("org a:1", "digest-1", "c1", clock + HOUR);
    expect(await store.findCached("org a:1", "digest-1")).toBe("c1");
    expect(await store.findCached("org b", "digest-1")).toBeUndefined();
    expect(await store.findCached("org a:1", "digest-2")).toBeUndefined();
    // A later success of the same key names the newer task.
    await store.rememberCached("org a:1", "digest-1", "c2", clock + HOUR);
    expect(await store.findCached("org a:1", "digest-1")).toBe("c2");
    // An expiry already passed remembers nothing.
    await store.rememberCached("org a:1", "digest-past", "c3", clock);
    expect(await store.findCached("org a:1", "digest-past")).toBeUndefined();
  });

  it("forgets a cache key at its expiry", async () => {
    await store.rememberCached("org a:1", "digest-e", "c4", clock + 1000);
    expect(await store.findCached("org a:1", "digest-e")).toBe("c4");
    if (_name === "memory") {
      clock += 999;
      expect(await store.findCached("org a:1", "digest-e")).toBe("c4");
      clock += 1;
      expect(await store.findCached("org a:1", "digest-e")).toBeUndefined();
      clock = T0;
    } else {
      // Redis expires by its own clock, the TTL relative to ours: 1 s from now.
      await vi.waitFor(async () => expect(await store.findCached("org a:1", "digest-e")).toBeUndefined(), { timeout: 5000, interval: 100 });
    }
  });

  it("leases a task to one owner at a time, renews it for that owner, and lets another take it once it passed", async () => {
    expect(await store.lease("job", "a", 300)).toBe(true);
    expect(await store.lease("job", "b", 300)).toBe(false);
    expect(await store.lease("job", "a", 300)).toBe(true);
    if (_name === "memory") clock += 301;
    await vi.waitFor(async () => expect(await store.lease("job", "b", 60_000)).toBe(true), { timeout: 5000, interval: 50 });
    expect(await store.lease("job", "a", 300)).toBe(false);
    await store.unlease("job", "a"); // not a's: nothing happens
    expect(await store.lease("job", "a", 300)).toBe(false);
    await store.unlease("job", "b");
    expect(await store.lease("job", "a", 300)).toBe(true);
    clock = T0;
  });
});
