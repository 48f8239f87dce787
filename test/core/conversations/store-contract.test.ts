// One contract for both conversation stores (core/conversations/store.ts): in
// memory and Redis on a private server. Time is injected, so expiry is crossed
// without waiting (the Redis store sets a relative TTL from the same clock).
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../../core/accounts/store-errors.ts";
import { createMemoryConversationStore, MEMORY_SWEEP_MS } from "../../../core/conversations/memory-store.ts";
import { conversationRedisKeys } from "../../../core/conversations/redis-keys.ts";
import { createRedisConversationStore } from "../../../core/conversations/redis-store.ts";
import type { ConversationStore } from "../../../core/conversations/store.ts";
import { TurnSchema, TurnStatus, type Turn } from "../../../gen/router/v1/conversations_pb.js";
import { Role } from "../../../gen/router/v1/inference_pb.js";
import { outcomeAtTimeout } from "../../support/held-clock.ts";
import { freePort, startRedisServer, type RedisServer } from "../../support/redis-server.ts";

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

function turn(id: string, fields: Partial<Omit<Turn, "$typeName">> = {}): Turn {
  return create(TurnSchema, {
    id,
    organizationId: "org-a",
    modelId: "simulator/echo",
    provider: "simulator",
    status: TurnStatus.COMPLETED,
    input: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: `question ${id}` } } }] }],
    output: [
      {
        role: Role.ASSISTANT,
        content: [
          { part: { case: "reasoning", value: { text: "thinking", signature: "sig-" + id, redactedData: "" } } },
          { part: { case: "toolCall", value: { id: "call_1", name: "lookup", arguments: '{"q":1}' } } },
        ],
      },
    ],
    usage: { inputTokens: 5, outputTokens: 7, cost: "0.0001" },
    metadata: { topic: "tests" },
    createdAt: timestampFromMs(T0),
    expiresAt: timestampFromMs(T0 + HOUR),
    ...fields,
  });
}

const implementations: [string, (now: () => number) => Promise<ConversationStore>][] = [
  ["memory", async (now) => createMemoryConversationStore({ now })],
  ["redis", (now) => createRedisConversationStore({ url: server.url, prefix: `conv-contract-${++prefixes}:`, now })],
];

describe.each(implementations)("conversation store contract: %s", (_name, createStore) => {
  let clock = T0;
  const withStore = async (test: (store: ConversationStore) => Promise<void>) => {
    clock = T0;
    const store = await createStore(() => clock);
    try {
      await test(store);
    } finally {
      await store.close();
    }
  };

  it("gives back a saved turn whole, reasoning signatures and tool calls included", () =>
    withStore(async (store) => {
      const saved = turn("t1");
      await store.save(saved);
      expect(await store.get("org-a", "t1")).toEqual(saved);
    }));

  it("shows a turn only to its own organisation", () =>
    withStore(async (store) => {
      await store.save(turn("t1"));
      expect(await store.get("org-b", "t1")).toBeUndefined();
      expect(await store.chain("org-b", "t1", 10)).toEqual([]);
      expect(await store.delete("org-b", "t1")).toBe(false);
      expect(await store.get("org-a", "t1")).toBeDefined();
    }));

  it("keeps two organisations' turns of the same id apart, even with ':' in their names", () =>
    withStore(async (store) => {
      await store.save(turn("b:c", { organizationId: "a" }));
      await store.save(turn("c", { organizationId: "a:b" }));
      expect((await store.get("a", "b:c"))?.organizationId).toBe("a");
      expect((await store.get("a:b", "c"))?.organizationId).toBe("a:b");
      expect(await store.get("a", "c")).toBeUndefined();
    }));

  it("finds a turn by its provider's own id while the turn is stored, for its own organisation only", () =>
    withStore(async (store) => {
      await store.save(turn("t1", { upstreamId: "v1_upstream-1" }));
      await store.save(turn("t2"));
      expect(await store.idOfUpstream("org-a", "v1_upstream-1")).toBe("t1");
      expect(await store.idOfUpstream("org-b", "v1_upstream-1")).toBeUndefined();
      expect(await store.idOfUpstream("org-a", "t2")).toBeUndefined();
      expect(await store.idOfUpstream("org-a", "")).toBeUndefined();
      await store.delete("org-a", "t1");
      expect(await store.idOfUpstream("org-a", "v1_upstream-1")).toBeUndefined();
    }));

  it("walks a chain newest first, up to the limit", () =>
    withStore(async (store) => {
      await store.save(turn("t1"));
      await store.save(turn("t2", { previousId: "t1" }));
      await store.save(turn("t3", { previousId: "t2" }));
      expect((await store.chain("org-a", "t3", 10)).map((t) => t.id)).toEqual(["t3", "t2", "t1"]);
      expect((await store.chain("org-a", "t3", 2)).map((t) => t.id)).toEqual(["t3", "t2"]);
      expect((await store.chain("org-a", "t2", 10)).map((t) => t.id)).toEqual(["t2", "t1"]);
      expect(await store.chain("org-a", "nope", 10)).toEqual([]);
    }));

  it("stops a chain at the first turn missing", () =>
    withStore(async (store) => {
      await store.save(turn("t1"));
      await store.save(turn("t2", { previousId: "t1" }));
      await store.save(turn("t3", { previousId: "t2" }));
      expect(await store.delete("org-a", "t2")).toBe(true);
      expect((await store.chain("org-a", "t3", 10)).map((t) => t.id)).toEqual(["t3"]);
    }));

  it("renews every turn a chain walks when asked, and only then", () =>
    withStore(async (store) => {
      await store.save(turn("t1"));
      await store.save(turn("t2", { previousId: "t1" }));
      await store.save(turn("t3", { previousId: "t2" }));
      clock = T0 + HOUR / 2;
      expect((await store.chain("org-a", "t2", 10)).map((t) => timestampMs(t.expiresAt!))).toEqual([T0 + HOUR, T0 + HOUR]);
      const renewed = await store.chain("org-a", "t2", 10, { expiresAt: clock + HOUR });
      expect(renewed.map((t) => timestampMs(t.expiresAt!))).toEqual([clock + HOUR, clock + HOUR]);
      for (const id of ["t1", "t2"]) expect(timestampMs((await store.get("org-a", id))!.expiresAt!)).toBe(clock + HOUR);
      // Not walked: unchanged.
      expect(timestampMs((await store.get("org-a", "t3"))!.expiresAt!)).toBe(T0 + HOUR);
    }));

  it("deletes a turn once", () =>
    withStore(async (store) => {
      await store.save(turn("t1"));
      expect(await store.delete("org-a", "t1")).toBe(true);
      expect(await store.get("org-a", "t1")).toBeUndefined();
      expect(await store.delete("org-a", "t1")).toBe(false);
    }));

  it("updates a turn only while it is stored: a deleted or expired one is not brought back", () =>
    withStore(async (store) => {
      expect(await store.update(turn("t1"))).toBe(false);
      expect(await store.get("org-a", "t1")).toBeUndefined();
      await store.save(turn("t1", { background: true, status: TurnStatus.IN_PROGRESS }));
      await store.requestCancel("org-a", "t1");
      expect(await store.update(turn("t1", { background: true, status: TurnStatus.IN_PROGRESS, metadata: { topic: "updated" } }))).toBe(true);
      // The update keeps the cancellation mark, as a save does.
      expect(await store.get("org-a", "t1")).toMatchObject({ status: TurnStatus.CANCELLED, metadata: { topic: "updated" } });
      await store.delete("org-a", "t1");
      expect(await store.update(turn("t1", { background: true, status: TurnStatus.COMPLETED }))).toBe(false);
      expect(await store.get("org-a", "t1")).toBeUndefined();
      await store.save(turn("t2"));
      clock = T0 + HOUR;
      expect(await store.update(turn("t2"))).toBe(false);
    }));

  it("replaces a turn saved again under its id", () =>
    withStore(async (store) => {
      await store.save(turn("t1"));
      await store.save(turn("t1", { metadata: { topic: "second" } }));
      expect((await store.get("org-a", "t1"))?.metadata).toEqual({ topic: "second" });
    }));

  it("reads an active turn whose cancellation was requested as cancelled, through later saves of its run", () =>
    withStore(async (store) => {
      expect(await store.requestCancel("org-a", "t1")).toBe(false);
      await store.save(turn("t1", { background: true, status: TurnStatus.QUEUED, leaseExpiresAt: timestampFromMs(T0 + 1000) }));
      expect(await store.requestCancel("org-b", "t1")).toBe(false);
      expect((await store.get("org-a", "t1"))?.status).toBe(TurnStatus.QUEUED);
      expect(await store.requestCancel("org-a", "t1")).toBe(true);
      expect(await store.get("org-a", "t1")).toMatchObject({ status: TurnStatus.CANCELLED, leaseExpiresAt: undefined });
      // The running instance renews its lease: the request still stands.
      await store.save(turn("t1", { background: true, status: TurnStatus.IN_PROGRESS, leaseExpiresAt: timestampFromMs(T0 + 2000) }));
      expect((await store.get("org-a", "t1"))?.status).toBe(TurnStatus.CANCELLED);
      expect((await store.get("org-b", "t1"))).toBeUndefined();
    }));

  it("reads a turn that finished despite a cancellation request as it finished", () =>
    withStore(async (store) => {
      await store.save(turn("t1", { background: true, status: TurnStatus.IN_PROGRESS }));
      await store.requestCancel("org-a", "t1");
      await store.save(turn("t1", { background: true, status: TurnStatus.COMPLETED }));
      expect((await store.get("org-a", "t1"))?.status).toBe(TurnStatus.COMPLETED);
    }));

  it("is not changed by later changes to the turn it was given", () =>
    withStore(async (store) => {
      const saved = turn("t1");
      await store.save(saved);
      saved.input[0].content = [];
      expect((await store.get("org-a", "t1"))?.input[0].content).toHaveLength(1);
    }));
});

describe("conversation store expiry", () => {
  it("memory: forgets a turn at its expiresAt", async () => {
    let clock = T0;
    const store = createMemoryConversationStore({ now: () => clock });
    await store.save(turn("t1"));
    clock = T0 + HOUR - 1;
    expect(await store.get("org-a", "t1")).toBeDefined();
    clock = T0 + HOUR;
    expect(await store.get("org-a", "t1")).toBeUndefined();
    expect(await store.chain("org-a", "t1", 10)).toEqual([]);
  });

  it("memory: keeps at most maxTurns, dropping the oldest saved", async () => {
    const store = createMemoryConversationStore({ now: () => T0, maxTurns: 2 });
    for (const id of ["t1", "t2", "t3"]) await store.save(turn(id));
    expect(await store.get("org-a", "t1")).toBeUndefined();
    expect(await store.get("org-a", "t3")).toBeDefined();
  });

  it("memory: a renewed turn outlives its first expiry", async () => {
    let clock = T0;
    const store = createMemoryConversationStore({ now: () => clock });
    await store.save(turn("t1"));
    await store.save(turn("t2", { previousId: "t1" }));
    clock = T0 + HOUR - 1;
    await store.chain("org-a", "t2", 10, { expiresAt: clock + HOUR });
    clock = T0 + HOUR + 1;
    expect((await store.chain("org-a", "t2", 10)).map((t) => t.id)).toEqual(["t2", "t1"]);
  });

  it("memory: keeps at most maxBytes of turns (their binary size), dropping the least recently saved or continued", async () => {
    const size = toBinary(TurnSchema, turn("t1")).length;
    const store = createMemoryConversationStore({ now: () => T0, maxBytes: size * 2 + 1 });
    await store.save(turn("t1"));
    await store.save(turn("t2"));
    // t1 is continued, so t2 is now the oldest.
    await store.chain("org-a", "t1", 1, { expiresAt: T0 + HOUR });
    await store.save(turn("t3"));
    expect(await store.get("org-a", "t2")).toBeUndefined();
    expect(await store.get("org-a", "t1")).toBeDefined();
    expect(await store.get("org-a", "t3")).toBeDefined();
  });

  it("memory: a save sweeps out expired turns at most once a minute, without their being read", async () => {
    let clock = T0;
    // Room for two turns: were the expired t1 not swept, saving t3 would evict t2, the oldest.
    const store = createMemoryConversationStore({ now: () => clock, maxTurns: 2 });
    await store.save(turn("t2", { expiresAt: timestampFromMs(T0 + 10 * HOUR) }));
    await store.save(turn("t1", { expiresAt: timestampFromMs(T0 + 1000) }));
    clock = T0 + MEMORY_SWEEP_MS;
    await store.save(turn("t3", { expiresAt: timestampFromMs(T0 + 10 * HOUR) }));
    expect(await store.get("org-a", "t2")).toBeDefined();
    expect(await store.get("org-a", "t3")).toBeDefined();
  });

  it("redis: sets the TTL left by the injected clock on the key named in redis-keys.ts", async () => {
    const prefix = "conv-expiry:";
    const store = await createRedisConversationStore({ url: server.url, prefix, now: () => T0 + HOUR / 2 });
    const redis = createClient({ url: server.url });
    await redis.connect();
    try {
      await store.save(turn("t1", { upstreamId: "v1_up" }));
      const name = conversationRedisKeys(prefix).turn("org-a", "t1");
      expect(name).toBe("conv-expiry:conv:org-a:t1");
      // The provider's id of the turn expires with it.
      const upstreamName = conversationRedisKeys(prefix).upstream("org-a", "v1_up");
      expect(upstreamName).toBe("conv-expiry:conv-upstream:org-a:v1_up");
      for (const key of [name, upstreamName]) {
        const ttl = await redis.pTTL(key);
        expect(ttl).toBeGreaterThan(HOUR / 2 - 60_000);
        expect(ttl).toBeLessThanOrEqual(HOUR / 2);
      }
      // Already expired by the store's clock: not written at all.
      const late = await createRedisConversationStore({ url: server.url, prefix, now: () => T0 + HOUR });
      await late.save(turn("t2"));
      expect(await redis.exists(conversationRedisKeys(prefix).turn("org-a", "t2"))).toBe(0);
      await late.close();
      // A continuation renews the TTL of every turn it walks, in the chain script.
      await store.save(turn("t3", { previousId: "t1" }));
      const later = await createRedisConversationStore({ url: server.url, prefix, now: () => T0 + HOUR - 1000 });
      await later.chain("org-a", "t3", 10, { expiresAt: T0 + 2 * HOUR });
      for (const id of ["t1", "t3"]) expect(await redis.pTTL(conversationRedisKeys(prefix).turn("org-a", id))).toBeGreaterThan(HOUR);
      await later.close();
    } finally {
      await redis.close();
      await store.close();
    }
  });
});

describe("redis conversation store outages", () => {
  it("answers StoreUnavailableError for every call while Redis is down", async () => {
    const faulty = await startRedisServer();
    const store = await createRedisConversationStore({ url: faulty.url, now: () => T0 });
    try {
      await store.save(turn("t1"));
      await faulty.stop();
      for (const call of [() => store.save(turn("t2")), () => store.get("org-a", "t1"), () => store.chain("org-a", "t1", 5), () => store.delete("org-a", "t1"), () => store.requestCancel("org-a", "t1")]) {
        await expect(call()).rejects.toBeInstanceOf(StoreUnavailableError);
      }
    } finally {
      await store.close();
      await faulty.stop();
    }
  });

  it("gives up on a frozen Redis exactly at the command timeout", async () => {
    const frozen = await startRedisServer();
    const commandTimeoutMs = 200;
    const store = await createRedisConversationStore({ url: frozen.url, now: () => T0, commandTimeoutMs });
    try {
      frozen.freeze();
      expect(await outcomeAtTimeout(() => store.chain("org-a", "t1", 5), commandTimeoutMs)).toBeInstanceOf(StoreUnavailableError);
    } finally {
      frozen.thaw();
      await store.close();
      await frozen.stop();
    }
  });

  it("fails to start with StoreUnavailableError when Redis cannot be reached", async () => {
    const port = await freePort();
    await expect(createRedisConversationStore({ url: `redis://127.0.0.1:${port}` })).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
