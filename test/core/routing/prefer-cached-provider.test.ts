// Prompt-cache stickiness as the core applies it (core/routing/prefer-cached-provider.ts):
// which answers are remembered, how each model's attempts move, what the
// opening is (core/routing/opening.ts), a frozen Redis (no stickiness, no
// error), and the store in memory's limits. No gateway, an injected clock.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import type { Answering } from "../../../core/routing/inference-charge.ts";
import { openingOf } from "../../../core/routing/opening.ts";
import { planAttempts } from "../../../core/routing/plan.ts";
import { preferCachedProvider, rememberCachedProvider, STICKY_RULE } from "../../../core/routing/prefer-cached-provider.ts";
import { createMemoryCacheAffinity } from "../../../core/route-stats/cache-affinity.ts";
import { createRedisCacheAffinity } from "../../../core/route-stats/redis-cache-affinity.ts";
import { GenerateRequestSchema, Role } from "../../../gen/router/v1/inference_pb.js";
import { testConfig } from "../../support/harness.ts";
import { startRedisServer, type RedisServer } from "../../support/redis-server.ts";

const catalogue = createCatalogue(testConfig("http://127.0.0.1:9/v1"), { CHEAP_KEY: "c", DEAR_KEY: "d" });
const text = (role: Role, value: string, cached = false) => ({
  role,
  content: [{ part: { case: "text" as const, value: { text: value } }, ...(cached ? { cacheControl: { type: "ephemeral" } } : {}) }],
});
const OPENING = [text(Role.SYSTEM, "Be brief."), text(Role.USER, "Review this.")];

function request(init: MessageInitShape<typeof GenerateRequestSchema> = {}) {
  return create(GenerateRequestSchema, { model: "test/ok", messages: OPENING, ...init });
}

function answered(providerId: string, tokens: { cachedInputTokens?: number; cacheWriteTokens?: number }, modelId = "test/ok"): Answering {
  const model = catalogue.get(modelId)!;
  const route = model.routes.find((r) => r.provider.id === providerId)!;
  const counts = { inputTokens: 10, outputTokens: 1, reasoningTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, ...tokens };
  return { attempt: { model, route, free: false }, promptBytes: 0, outputCharacters: 0, served: { tokens: counts, cost: 0n } } as Answering;
}

let time = 0;
const affinity = createMemoryCacheAffinity({ ttlMs: 1000, now: () => time });

async function order(init: MessageInitShape<typeof GenerateRequestSchema> = {}, organizationId = "org_a", store = affinity) {
  const planned = request(init);
  const { attempts } = await preferCachedProvider(planAttempts(planned, catalogue).attempts, planned, organizationId, store);
  return attempts.map((attempt) => `${attempt.model.config.id}@${attempt.route.provider.id}${attempt.rule ? `;${attempt.rule}` : ""}`);
}

async function remember(init: MessageInitShape<typeof GenerateRequestSchema>, answering: Answering, organizationId = "org_a", store = affinity) {
  const planned = request(init);
  const { sticky } = await preferCachedProvider(planAttempts(planned, catalogue).attempts, planned, organizationId, store);
  rememberCachedProvider(store, sticky, answering);
}

describe("which answers are remembered, and what moves", () => {
  it("cache reads or cache writes are remembered; an answer without either is not", async () => {
    await remember({}, answered("dear", {}));
    expect(await order()).toEqual(["test/ok@cheap", "test/ok@dear"]);
    await remember({}, answered("dear", { cacheWriteTokens: 100 }));
    expect(await order()).toEqual([`test/ok@dear;${STICKY_RULE}`, "test/ok@cheap"]);
    time += 1000;
    expect(await order()).toEqual(["test/ok@cheap", "test/ok@dear"]);
  });

  it("each model of `models` moves on its own; a one-provider model needs no lookup", async () => {
    await remember({}, answered("dear", { cachedInputTokens: 5 }, "test/fail-503"));
    expect(await order({ model: "test/ok", models: ["test/fail-503", "test/plain"] })).toEqual([
      "test/ok@cheap",
      "test/ok@dear",
      `test/fail-503@dear;${STICKY_RULE}`,
      "test/fail-503@cheap",
      "test/plain@cheap",
    ]);
    let asked = 0;
    const counting = { ...affinity, lookup: (keys: Parameters<typeof affinity.lookup>[0]) => (asked++, affinity.lookup(keys)) };
    await order({ model: "test/plain" }, "org_a", counting);
    expect(asked).toBe(0);
  });

  it("order, only and a conversation's keeper are stronger: nothing moves, and the answer is still remembered", async () => {
    await remember({ provider: { only: ["dear"] } }, answered("dear", { cachedInputTokens: 5 }));
    expect(await order({ provider: { order: ["cheap"] } })).toEqual(["test/ok@cheap", "test/ok@dear"]);
    expect(await order({ provider: { only: ["cheap", "dear"] } })).toEqual(["test/ok@cheap", "test/ok@dear"]);
    expect(await order({ conversation: { upstream: { provider: "cheap", upstreamId: "x" } } })).toEqual(["test/ok@cheap", "test/ok@dear"]);
    expect(await order()).toEqual([`test/ok@dear;${STICKY_RULE}`, "test/ok@cheap"]);
    expect(await order({}, "org_b")).toEqual(["test/ok@cheap", "test/ok@dear"]);
  });
});

describe("the opening", () => {
  const digest = (messages: ReturnType<typeof text>[], init: MessageInitShape<typeof GenerateRequestSchema> = {}) => openingOf(request({ messages, ...init })).digest();

  it("is the tools, the leading system messages and the first message after them; breakpoints do not count", () => {
    const base = digest(OPENING);
    expect(digest([...OPENING, text(Role.ASSISTANT, "Done."), text(Role.USER, "Next.")])).toBe(base);
    expect(digest([OPENING[0], text(Role.USER, "Review this.", true)])).toBe(base);
    expect(digest([text(Role.SYSTEM, "Be brief!"), OPENING[1]])).not.toBe(base);
    expect(digest([OPENING[0], text(Role.USER, "Review that.")])).not.toBe(base);
    expect(digest([text(Role.DEVELOPER, "Be brief."), OPENING[1]])).not.toBe(base);
    expect(digest(OPENING, { tools: [{ name: "lookup", description: "Finds a file." }] })).not.toBe(base);
    // Two parts are not one part with both texts.
    const split = { role: Role.USER, content: [{ part: { case: "text" as const, value: { text: "ab" } } }, { part: { case: "text" as const, value: { text: "c" } } }] };
    const joined = { role: Role.USER, content: [{ part: { case: "text" as const, value: { text: "a" } } }, { part: { case: "text" as const, value: { text: "bc" } } }] };
    expect(digest([split as never])).not.toBe(digest([joined as never]));
  });
});

describe("the stores", () => {
  it("in memory: the least recently remembered entry goes first beyond the limit", () => {
    const small = createMemoryCacheAffinity({ ttlMs: 1000, now: () => 0, maxEntries: 2 });
    const key = (opening: string) => ({ organizationId: "o", modelId: "m", opening });
    small.remember(key("a"), "p1");
    small.remember(key("b"), "p2");
    small.remember(key("a"), "p3");
    small.remember(key("c"), "p4");
    expect(small.lookup([key("a"), key("b"), key("c")])).toEqual(["p3", undefined, "p4"]);
  });

  describe("in Redis", () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedisServer();
    });
    afterAll(async () => {
      await redis?.stop();
    });

    it("a frozen Redis means no stickiness, not a failed or stuck request", async () => {
      const warnings: string[] = [];
      const shared = await createRedisCacheAffinity({ url: redis.url, prefix: "unit:", ttlMs: 60_000, now: () => time, logger: { warn: (_, message) => warnings.push(message) } });
      try {
        await remember({}, answered("dear", { cachedInputTokens: 5 }), "org_r", shared);
        await expect.poll(() => order({}, "org_r", shared)).toEqual([`test/ok@dear;${STICKY_RULE}`, "test/ok@cheap"]);
        redis.freeze();
        expect(await order({}, "org_r", shared)).toEqual(["test/ok@cheap", "test/ok@dear"]);
        expect(warnings).toHaveLength(1);
      } finally {
        redis.thaw();
        await shared.close();
      }
    });
  });
});
