// The settlement queue during a store outage (fake timers, a store double):
// retries back off exponentially to a cap and start over after a success,
// requests arriving meanwhile only join the queue, the queue stays bounded
// (the oldest are dropped and reported once), one outage makes exactly two
// log lines, and everything still queued settles once the store is back.
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAccounts } from "../../../core/accounts/accounts.ts";
import { createMemoryAccountStores } from "../../../core/accounts/memory-store.ts";
import { createSettlementQueue } from "../../../core/accounts/settlement-queue.ts";
import { StoreUnavailableError } from "../../../core/accounts/store-errors.ts";
import type { AccountStores, AdmissionStore, Settlement } from "../../../core/accounts/store.ts";

const settlement = (requestId: string): Settlement => ({ requestId, chargeNanos: 0n, tokens: 0, refundFreeQuota: false, now: 0 });

/** An admission store whose settleAll fails while `away`, recording when it was tried and what it took. */
function flakyStore() {
  const state = { away: true, attempts: [] as number[], settled: [] as string[] };
  const store: AdmissionStore = {
    admit: () => Promise.reject(new Error("unused")),
    settle: () => Promise.reject(new Error("the queue settles in batches")),
    releaseAbandoned: async () => 0,
    freeUsed: async () => [],
    settleAll: async (settlements) => {
      state.attempts.push(Date.now());
      if (state.away) throw new StoreUnavailableError("Redis account store: settle failed", { mayHaveRun: false });
      state.settled.push(...settlements.map((s) => s.requestId));
    },
  };
  return { store, state };
}

const gaps = (times: number[]) => times.slice(1).map((time, index) => time - times[index]);

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("settlement queue while the store is away", () => {
  it("backs off from 100 ms doubling to a 30 s cap (jitter fixed at 3/4), does not retry per request, and starts over after a success", async () => {
    const { store, state } = flakyStore();
    const queue = createSettlementQueue(store, { random: () => 0.5 });
    queue.push(settlement("r-0"));
    await vi.advanceTimersByTimeAsync(5); // the batching delay: the first attempt fails
    expect(state.attempts).toEqual([5]);

    // Requests refused meanwhile (and answers settling) only join the queue.
    for (let i = 1; i <= 1_000; i++) queue.push(settlement(`r-${i}`));
    expect(state.attempts).toHaveLength(1);

    await vi.advanceTimersByTimeAsync(5 * 60_000);
    // 100 ms x 2^n, times 3/4 for the fixed jitter, capped at 30 s (x 3/4).
    const expected = [75, 150, 300, 600, 1_200, 2_400, 4_800, 9_600, 19_200];
    const waits = gaps(state.attempts);
    expect(waits.slice(0, expected.length)).toEqual(expected);
    expect(new Set(waits.slice(expected.length))).toEqual(new Set([22_500]));
    // About 20 tries in five minutes, where a fixed 500 ms retry would make 600.
    expect(state.attempts.length).toBeLessThan(25);
    expect(queue.pending).toBe(1_001);

    state.away = false;
    await vi.advanceTimersByTimeAsync(22_500);
    expect(queue.pending).toBe(0);
    expect(new Set(state.settled)).toEqual(new Set(Array.from({ length: 1_001 }, (_, i) => `r-${i}`)));

    // A new outage waits the first wait again.
    state.away = true;
    state.attempts = [];
    queue.push(settlement("r-late"));
    await vi.advanceTimersByTimeAsync(5 + 75 + 150);
    expect(gaps(state.attempts)).toEqual([75, 150]);
    queue.close();
  });

  it("keeps each wait within half and all of its nominal value with real jitter", async () => {
    const { store, state } = flakyStore();
    const queue = createSettlementQueue(store);
    queue.push(settlement("r-0"));
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    gaps(state.attempts).forEach((wait, n) => {
      const nominal = Math.min(30_000, 100 * 2 ** n);
      expect(wait).toBeGreaterThanOrEqual(nominal / 2);
      expect(wait).toBeLessThanOrEqual(nominal);
    });
    queue.close();
  });

  it("stays bounded: beyond maxPending the oldest are dropped, reported once, and the rest settle when the store is back", async () => {
    const { store, state } = flakyStore();
    const dropped: number[] = [];
    const queue = createSettlementQueue(store, { maxPending: 100, onDropped: (count) => dropped.push(count) });
    for (let i = 1; i <= 250; i++) queue.push(settlement(`r-${i}`));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(queue.pending).toBe(100);
    expect(dropped).toEqual([]); // reported once, when it is known how many

    state.away = false;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(queue.pending).toBe(0);
    expect(state.settled.sort()).toEqual(Array.from({ length: 100 }, (_, i) => `r-${151 + i}`).sort());
    expect(dropped).toEqual([150]);
    queue.close();
  });
});

describe("an outage in the log", () => {
  /** Accounts over memory stores whose settlements fail while `away`, logging to `lines`. */
  async function accountsWithFlakySettlements() {
    const memory = createMemoryAccountStores();
    const { store, state } = flakyStore();
    const stores: AccountStores = { ...memory, admission: { ...memory.admission, settleAll: store.settleAll } };
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
        done();
      },
    });
    const accounts = await createAccounts({ organizations: [], env: {}, stores, logger: pino({ level: "info" }, sink) });
    return { accounts, state, lines };
  }

  it("writes exactly two lines for one outage, however many settlements and retries it sees", async () => {
    const { accounts, state, lines } = await accountsWithFlakySettlements();
    for (let i = 0; i < 500; i++) {
      accounts.settlements.push(settlement(`r-${i}`));
      await vi.advanceTimersByTimeAsync(100);
    }
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(state.attempts.length).toBeGreaterThan(10);
    state.away = false;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(accounts.settlements.pending).toBe(0);
    expect(lines.map(({ level, msg }) => [level, msg])).toEqual([
      [40, "account store unavailable: settlements wait in memory and are retried with backoff"],
      [30, "account store available again: settlements are written"],
    ]);
    await accounts.close();
  });
});
