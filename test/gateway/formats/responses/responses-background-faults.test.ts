// Background responses (`background: true`) through the openai SDK when things
// go wrong while they run: the stored turn and the charge must agree.
// - An answer that breaks off (upstream cut, shutdown) is stored failed with no
//   output and charged nothing, as the same fault costs a JSON request.
// - A delete sticks: the run stops, on this instance at once, on another at its
//   next save or renewal, and nothing brings the turn back.
// - A turn running longer than its lease stays in progress while it is renewed,
//   and can be cancelled.
// - An answer that finishes while Redis is down is stored as it finished once
//   Redis is back (the final save is retried as settlements are), charged once
//   and recorded once.
// The gated upstream ends each answer when the test says, and the core's clock
// is injected, so no step waits on wall-clock time.
import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createMemoryAccountStores } from "../../../../core/accounts/memory-store.ts";
import { StoreUnavailableError } from "../../../../core/accounts/store-errors.ts";
import { createRedisConversationStore } from "../../../../core/conversations/redis-store.ts";
import type { ConversationStore } from "../../../../core/conversations/store.ts";
import type { RouterConfig } from "../../../../core/config/schema.ts";
import { TurnStatus, type Turn } from "../../../../gen/router/v1/conversations_pb.js";
import { femtosOf, nanosRoundedUp } from "../../../support/exact-money.ts";
import { GATED_FIRST_WORDS, GATED_LAST_WORDS, startGatedUpstream, type GatedUpstream } from "../../../support/gated-upstream.ts";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../../support/harness.ts";
import { startRedisServer, type RedisServer } from "../../../support/redis-server.ts";

const LEASE_SECONDS = 30;
const ORG = "org_test";

function config(upstreamUrl: string): RouterConfig {
  const base = testConfig(upstreamUrl);
  return { ...base, conversations: { ...base.conversations, background_lease_seconds: LEASE_SECONDS } };
}

/** An injected clock, moved by the test. */
function testClock() {
  let at = Date.now();
  return { now: () => new Date(at), advance: (ms: number) => (at += ms) };
}

const sdk = (gateway: Gateway) => new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });

async function statusOf(client: OpenAI, id: string): Promise<string | number> {
  return client.responses.retrieve(id).then(
    (response) => response.status ?? "",
    (error: unknown) => (error instanceof APIError ? (error.status ?? 0) : Promise.reject(error)),
  );
}

async function balance(gateway: Gateway): Promise<bigint> {
  await gateway.core.accounts.idle();
  return gateway.core.accounts.stores.credits.balance(ORG);
}

/** Resolves true once the upstream saw the connection of its next hung answer close. */
function abortSeen(upstream: GatedUpstream) {
  const seen = { value: false };
  void upstream.nextAbort().then(() => (seen.value = true));
  return seen;
}

describe("a background answer that breaks off is stored failed and charged nothing", () => {
  let upstream: GatedUpstream;
  let gateway: Gateway;
  let client: OpenAI;
  beforeAll(async () => {
    upstream = await startGatedUpstream();
    gateway = await startGateway(config(upstream.url));
    client = sdk(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  async function expectFailedAndFree(id: string, before: bigint, code: string) {
    await gateway.core.background.idle();
    const failed = await client.responses.retrieve(id);
    expect(failed).toMatchObject({ status: "failed", output: [], error: { code: "server_error" } });
    expect(await balance(gateway)).toBe(before);
    expect(await gateway.core.accounts.usage.get(ORG, id)).toMatchObject({ outcome: code, cost: "0", promptTokens: 0, completionTokens: 0 });
  }

  it("the simulator's answer cut mid-stream", async () => {
    const before = await balance(gateway);
    const queued = await client.responses.create({ model: "simulator/cut-mid-stream", input: "one two three four five six", background: true });
    await expectFailedAndFree(queued.id, before, "upstream_error");
  });

  it.each([
    ["an upstream connection cut after the first words", "cut"],
    ["malformed data from the upstream after the first words", "garble"],
  ] as const)("%s", async (_name, fault) => {
    const before = await balance(gateway);
    const queued = await client.responses.create({ model: "test/ok", input: `Break me: ${fault}`, background: true });
    const answer = await upstream.nextAnswer();
    await vi.waitFor(async () => expect(await statusOf(client, queued.id)).toBe("in_progress"));
    answer[fault]();
    await expectFailedAndFree(queued.id, before, "upstream_error");
  });

  it("while a cancelled one is charged what the provider had produced (the caller stopped it)", async () => {
    const before = await balance(gateway);
    const queued = await client.responses.create({ model: "test/ok", input: "Stop me", background: true });
    await upstream.nextAnswer();
    await vi.waitFor(async () => expect(await statusOf(client, queued.id)).toBe("in_progress"));
    expect((await client.responses.cancel(queued.id)).status).toBe("cancelled");
    await gateway.core.background.idle();
    const record = await gateway.core.accounts.usage.get(ORG, queued.id);
    expect(record).toMatchObject({ outcome: "client_closed" });
    expect(record!.completionTokens).toBeGreaterThan(0);
    expect(await balance(gateway)).toBe(before - nanosRoundedUp(femtosOf(record!.cost)));
  });
});

describe("a background answer stopped by its instance shutting down", () => {
  it("is stored failed (instance_stopped) and charged nothing", async () => {
    const upstream = await startGatedUpstream();
    // Stores that outlive the gateway, to read what the shutdown left.
    const stores = createMemoryAccountStores();
    const gateway = await startGateway(config(upstream.url), { core: { stores } });
    let closed = false;
    try {
      const client = sdk(gateway);
      const before = await balance(gateway);
      const queued = await client.responses.create({ model: "test/ok", input: "Take your time", background: true });
      await upstream.nextAnswer();
      await vi.waitFor(async () => expect(await statusOf(client, queued.id)).toBe("in_progress"));
      closed = true;
      await gateway.close();
      expect(await gateway.core.conversations.store.get(ORG, queued.id)).toMatchObject({ status: TurnStatus.FAILED, output: [], error: { code: "instance_stopped" } });
      expect(await stores.credits.balance(ORG)).toBe(before);
      expect(await stores.usage.get(ORG, queued.id)).toMatchObject({ cost: "0", completionTokens: 0 });
    } finally {
      if (!closed) await gateway.close();
      await upstream.close();
    }
  });
});

describe("a background answer running longer than its lease", () => {
  const clock = testClock();
  let upstream: GatedUpstream;
  let gateway: Gateway;
  let client: OpenAI;
  beforeAll(async () => {
    upstream = await startGatedUpstream();
    gateway = await startGateway(config(upstream.url), { core: { now: clock.now } });
    client = sdk(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it("is still in progress after its first lease while it is renewed, and can be cancelled", async () => {
    const queued = await client.responses.create({ model: "test/ok", input: "A long one", background: true });
    await upstream.nextAnswer();
    await vi.waitFor(async () => expect(await statusOf(client, queued.id)).toBe("in_progress"));
    // Two renewals, each two thirds of a lease apart: the answer runs past its first two leases.
    for (let renewal = 0; renewal < 2; renewal++) {
      clock.advance(((LEASE_SECONDS * 1000) / 3) * 2);
      await gateway.core.background.renewNow();
    }
    clock.advance(((LEASE_SECONDS * 1000) / 3) * 2);
    expect(await statusOf(client, queued.id)).toBe("in_progress");

    const aborted = abortSeen(upstream);
    expect((await client.responses.cancel(queued.id)).status).toBe("cancelled");
    await vi.waitFor(() => expect(aborted.value).toBe(true));
    await gateway.core.background.idle();
    expect(await statusOf(client, queued.id)).toBe("cancelled");
  });

  it("reads as failed once its lease passes unrenewed (the instance stopped renewing)", async () => {
    const queued = await client.responses.create({ model: "test/ok", input: "Orphaned", background: true });
    const answer = await upstream.nextAnswer();
    await vi.waitFor(async () => expect(await statusOf(client, queued.id)).toBe("in_progress"));
    clock.advance(LEASE_SECONDS * 1000);
    expect(await statusOf(client, queued.id)).toBe("failed");
    answer.finish();
    await gateway.core.background.idle();
  });
});

describe("deleting a running background response (one instance)", () => {
  let upstream: GatedUpstream;
  let gateway: Gateway;
  let client: OpenAI;
  beforeAll(async () => {
    upstream = await startGatedUpstream();
    gateway = await startGateway(config(upstream.url));
    client = sdk(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it("stops its upstream call at once, and it stays deleted", async () => {
    const queued = await client.responses.create({ model: "test/ok", input: "Delete me while I run", background: true });
    const answer = await upstream.nextAnswer();
    await vi.waitFor(async () => expect(await statusOf(client, queued.id)).toBe("in_progress"));
    const aborted = abortSeen(upstream);
    expect(await client.responses.delete(queued.id)).toMatchObject({ id: queued.id, deleted: true });
    await vi.waitFor(() => expect(aborted.value).toBe(true));
    answer.finish();
    await gateway.core.background.idle();
    expect(await statusOf(client, queued.id)).toBe(404);
    expect(await gateway.core.conversations.store.get(ORG, queued.id)).toBeUndefined();
    // Stopped by its caller: recorded (and charged) as a cancelled answer is.
    expect(await gateway.core.accounts.usage.get(ORG, queued.id)).toMatchObject({ outcome: "client_closed" });
  });
});

describe("deleting a background response running on another instance (shared Redis)", { timeout: 30_000 }, () => {
  let redis: RedisServer;
  let upstream: GatedUpstream;
  let first: Gateway;
  let second: Gateway;
  let onFirst: OpenAI;
  let onSecond: OpenAI;
  beforeAll(async () => {
    redis = await startRedisServer();
    upstream = await startGatedUpstream();
    const env = { REDIS_URL: redis.url, REDIS_PREFIX: "background-delete:" };
    first = await startGateway(config(upstream.url), { env });
    second = await startGateway(config(upstream.url), { env, split: true });
    onFirst = sdk(first);
    onSecond = sdk(second);
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await upstream?.close();
    await redis?.stop();
  });

  it("is noticed by the running instance at its next renewal, which stops the run", async () => {
    const queued = await onFirst.responses.create({ model: "test/ok", input: "Delete me elsewhere", background: true });
    await upstream.nextAnswer();
    await vi.waitFor(async () => expect(await statusOf(onSecond, queued.id)).toBe("in_progress"));
    await onSecond.responses.delete(queued.id);
    const aborted = abortSeen(upstream);
    await first.core.background.renewNow();
    await vi.waitFor(() => expect(aborted.value).toBe(true));
    await first.core.background.idle();
    expect(await statusOf(onFirst, queued.id)).toBe(404);
    expect(await statusOf(onSecond, queued.id)).toBe(404);
  });

  it("is not brought back by the run's final save when the answer ends first", async () => {
    const queued = await onFirst.responses.create({ model: "test/ok", input: "Delete me, then finish", background: true });
    const answer = await upstream.nextAnswer();
    await vi.waitFor(async () => expect(await statusOf(onSecond, queued.id)).toBe("in_progress"));
    await onSecond.responses.delete(queued.id);
    answer.finish();
    await first.core.background.idle();
    expect(await statusOf(onFirst, queued.id)).toBe(404);
    expect(await statusOf(onSecond, queued.id)).toBe(404);
  });
});

describe("a background answer that finishes while Redis is down", { timeout: 30_000 }, () => {
  const clock = testClock();
  let redis: RedisServer;
  let upstream: GatedUpstream;
  let gateway: Gateway;
  let client: OpenAI;
  /** The statuses of the final saves tried, and whether each failed. */
  const finalSaves: { status: TurnStatus; failed: boolean }[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    upstream = await startGatedUpstream();
    const store = await createRedisConversationStore({ url: redis.url, prefix: "background-outage:", now: () => clock.now().getTime() });
    const watched: ConversationStore = {
      ...store,
      update: (turn: Turn) => watch(turn, store.update(turn)),
      save: (turn: Turn) => watch(turn, store.save(turn)),
    };
    const watch = <T,>(turn: Turn, saving: Promise<T>) => {
      if (turn.status !== TurnStatus.COMPLETED) return saving;
      return saving.then(
        (result) => (finalSaves.push({ status: turn.status, failed: false }), result),
        (error: unknown) => (finalSaves.push({ status: turn.status, failed: true }), Promise.reject(error)),
      );
    };
    gateway = await startGateway(config(upstream.url), {
      core: { now: clock.now, conversationStore: watched },
      env: { REDIS_URL: redis.url, REDIS_PREFIX: "background-outage:" },
    });
    client = sdk(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await redis?.stop();
  });

  it("is stored completed once Redis is back, and charged and recorded once, at the answer's cost", async () => {
    const before = await balance(gateway);
    const queued = await client.responses.create({ model: "test/ok", input: "Finish during the outage", background: true });
    const answer = await upstream.nextAnswer();
    await vi.waitFor(async () => expect(await statusOf(client, queued.id)).toBe("in_progress"));

    await redis.stop({ keepData: true });
    // Wait until the store refuses to send (a command written to the dying socket may still have run).
    await vi.waitFor(async () => {
      const failure = await gateway.core.accounts.stores.credits.balance(ORG).catch((error: unknown) => error);
      expect((failure as StoreUnavailableError).mayHaveRun).toBe(false);
    });
    answer.finish();
    await vi.waitFor(() => expect(finalSaves).toContainEqual({ status: TurnStatus.COMPLETED, failed: true }));

    await redis.start();
    // The stores reconnect by themselves; the final save lands at its next retry.
    await vi.waitFor(() => gateway.core.accounts.stores.credits.balance(ORG), { timeout: 10_000, interval: 50 });
    await gateway.core.background.idle();
    // Read well after the lease the answer had when Redis went away.
    clock.advance(10 * LEASE_SECONDS * 1000);
    const done = await client.responses.retrieve(queued.id);
    expect(done).toMatchObject({ status: "completed", output_text: GATED_FIRST_WORDS + GATED_LAST_WORDS });

    const records = (await gateway.core.accounts.usage.list(ORG, 100)).filter((record) => record.id === queued.id);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ outcome: "ok", promptTokens: 12, completionTokens: 4 });
    expect(done.usage).toMatchObject({ input_tokens: 12, output_tokens: 4 });
    expect(await balance(gateway)).toBe(before - nanosRoundedUp(femtosOf(records[0].cost)));
  });
});
