// Background responses on two instances sharing one Redis (REDIS_URL), as a
// deployment runs them: created on one, polled and cancelled on the other.
// A cancellation asked of the other instance is seen at the running one's next
// renewal; the test runs that renewal itself (renewNow), so nothing waits on
// the lease's timer (30 s, far longer than the test).
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFakeUpstream, type FakeUpstream } from "../../../support/fake-openai-upstream.ts";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../../support/harness.ts";
import { startRedisServer, type RedisServer } from "../../../support/redis-server.ts";

describe("background responses across two instances on one Redis", () => {
  let redis: RedisServer;
  let upstream: FakeUpstream;
  let first: Gateway;
  let second: Gateway;
  let onFirst: OpenAI;
  let onSecond: OpenAI;

  beforeAll(async () => {
    redis = await startRedisServer();
    upstream = await startFakeUpstream();
    const config = testConfig(upstream.url);
    const env = { REDIS_URL: redis.url, REDIS_PREFIX: "background-shared:" };
    first = await startGateway(config, { env });
    second = await startGateway(config, { env, split: true });
    onFirst = new OpenAI({ apiKey: TEST_KEY, baseURL: first.apiUrl, maxRetries: 0 });
    onSecond = new OpenAI({ apiKey: TEST_KEY, baseURL: second.apiUrl, maxRetries: 0 });
  });

  afterAll(async () => {
    await first?.close();
    await second?.close();
    await upstream?.close();
    await redis?.stop();
  });

  it("runs on the instance that took it and shows its progress on the other", async () => {
    const queued = await onFirst.responses.create({ model: "simulator/echo", input: "Shared work", background: true });
    await vi.waitFor(async () => expect((await onSecond.responses.retrieve(queued.id)).status).toBe("completed"));
    const done = await onSecond.responses.retrieve(queued.id);
    expect(done).toMatchObject({ id: queued.id, background: true, output_text: "You said: Shared work" });
    await first.core.background.idle();
    expect(await onFirst.responses.retrieve(queued.id)).toEqual(done);
  });

  it("stops the upstream call on the running instance when the other one is asked to cancel", async () => {
    const queued = await onFirst.responses.create({ model: "test/hang", input: "Long work", background: true });
    await vi.waitFor(async () => expect((await onSecond.responses.retrieve(queued.id)).status).toBe("in_progress"));
    const aborted = upstream.nextAbort();
    const cancelled = await onSecond.responses.cancel(queued.id);
    expect(cancelled.status).toBe("cancelled");
    // The first instance sees the mark at its next renewal and cuts the upstream request.
    await first.core.background.renewNow();
    await aborted;
    await first.core.background.idle();
    expect((await onFirst.responses.retrieve(queued.id)).status).toBe("cancelled");
    expect((await onSecond.responses.retrieve(queued.id)).status).toBe("cancelled");
  });
});
