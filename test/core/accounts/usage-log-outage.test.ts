// The usage log while its store is away (fake timers, a store double): writes
// back off instead of being tried per record or every 50 ms, the records kept
// are bounded, the outage is reported once when it starts and once when it
// ends (with what was dropped), and what waits is written once it is back.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createMemoryAccountStores } from "../../../core/accounts/memory-store.ts";
import { StoreUnavailableError } from "../../../core/accounts/store-errors.ts";
import type { UsageRecord, UsageStore } from "../../../core/accounts/store.ts";
import { createUsageLog } from "../../../core/accounts/usage-log.ts";

const record = (id: string): UsageRecord => ({
  id, organizationId: "org", keyId: "key", model: "a/b", provider: "p", promptTokens: 1, completionTokens: 1, reasoningTokens: 0,
  cachedTokens: 0, cacheWriteTokens: 0, cost: "0", requestTags: [], latencyMs: 1, outcome: "ok", free: false, streamed: false, createdAt: 0,
});

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("usage log while the store is away", () => {
  it("backs off, keeps at most maxPending records, reports the outage twice and writes what waits once the store is back", async () => {
    const inner = createMemoryAccountStores().usage;
    let away = true;
    const attempts: number[] = [];
    const store: UsageStore = {
      ...inner,
      append: async (records) => {
        attempts.push(Date.now());
        if (away) throw new StoreUnavailableError("down", { mayHaveRun: false });
        await inner.append(records);
      },
    };
    const events: string[] = [];
    const log = createUsageLog(store, {
      maxBatch: 10,
      maxPending: 50,
      random: () => 0.5,
      onOutage: () => events.push("outage"),
      onRecovery: (dropped) => events.push(`recovered, ${dropped} dropped`),
    });
    // A record every 100 ms for 100 s: 1,000 records, 10 per full batch.
    for (let i = 1; i <= 1_000; i++) {
      log.record(record(`u-${i}`));
      await vi.advanceTimersByTimeAsync(100);
    }
    // 75 ms doubling to 22.5 s: a dozen tries, not one per batch or per 50 ms.
    expect(attempts.length).toBeLessThan(15);
    expect(events).toEqual(["outage"]);

    away = false;
    await vi.advanceTimersByTimeAsync(30_000);
    await log.flush();
    expect(events).toEqual(["outage", "recovered, 950 dropped"]);
    const written = await inner.list("org", 10_000);
    expect(written.map((r) => r.id)).toEqual(Array.from({ length: 50 }, (_, i) => `u-${1_000 - i}`));
    await log.close();
  });
});
