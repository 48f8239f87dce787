// The batched usage log loses nothing: records that arrive while a batch is
// being written wait for the next batch, and a failed write is retried.
import { describe, expect, it } from "vitest";
import { createMemoryAccountStores } from "../../../core/accounts/memory-store.ts";
import type { UsageRecord, UsageStore } from "../../../core/accounts/store.ts";
import { StoreUnavailableError } from "../../../core/accounts/store-errors.ts";
import { createUsageLog } from "../../../core/accounts/usage-log.ts";

const record = (id: string): UsageRecord => ({
  id,
  organizationId: "org",
  keyId: "key",
  model: "a/b",
  provider: "p",
  promptTokens: 1,
  completionTokens: 1,
  reasoningTokens: 0,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  cost: "0",
  requestTags: [],
  latencyMs: 1,
  outcome: "ok",
  free: false,
  streamed: false,
  createdAt: 0,
});

/** A store whose writes wait until released, so records can arrive mid-write. */
function gatedStore() {
  const inner = createMemoryAccountStores().usage;
  const releases: (() => void)[] = [];
  let notifyWriteStarted: (() => void) | undefined;
  let failNext = false;
  const store: UsageStore = {
    ...inner,
    append: async (records) => {
      await new Promise<void>((resolve) => {
        releases.push(resolve);
        notifyWriteStarted?.();
      });
      if (failNext) {
        failNext = false;
        throw new StoreUnavailableError("down");
      }
      await inner.append(records);
    },
  };
  /** Resolves once a write is waiting to be released (at once if one already is). */
  const writeStarted = () =>
    new Promise<void>((resolve) => {
      notifyWriteStarted = resolve;
      if (releases.length > 0) resolve();
    });
  return { store, inner, writeStarted, release: () => releases.shift()!(), failNextWrite: () => (failNext = true) };
}

describe("usage log", () => {
  it("keeps the records that arrive while a batch is written for the next batch", async () => {
    const { store, inner, writeStarted, release } = gatedStore();
    const log = createUsageLog(store, { maxBatch: 2, flushMs: 60_000 });
    log.record(record("a"));
    log.record(record("b")); // a full batch: its write starts
    await writeStarted();
    log.record(record("c"));
    release();
    const flushed = log.flush();
    await writeStarted();
    release();
    await flushed;
    expect((await inner.list("org", 10)).map((r) => r.id)).toEqual(["c", "b", "a"]);
    await log.close();
  });

  it("serves waiting records at once, and retries a failed write", async () => {
    const { store, inner, writeStarted, release, failNextWrite } = gatedStore();
    const log = createUsageLog(store, { maxBatch: 1, flushMs: 1 });
    failNextWrite();
    log.record(record("a"));
    expect(await log.get("org", "a")).toMatchObject({ id: "a" });
    expect(await log.get("other-org", "a")).toBeUndefined();
    await writeStarted();
    release(); // fails: kept
    await writeStarted();
    release(); // the retry
    await log.flush();
    expect(await inner.get("org", "a")).toMatchObject({ id: "a" });
    await log.close();
  });
});
