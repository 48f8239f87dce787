// What a request is charged and recorded as, by how it ended (docs/accounts.md,
// "Credits"): runInference against a scripted provider and real in-memory
// account stores, then the balance, the free quota and the usage record.
import { create } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAccounts, type Accounts } from "../../../core/accounts/accounts.ts";
import { createMemoryAccountStores } from "../../../core/accounts/memory-store.ts";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { parseConfig } from "../../../core/config/load.ts";
import { simulatorCapabilities } from "../../../core/providers/simulator/adapter.ts";
import { BlockWriter } from "../../../core/providers/block-writer.ts";
import { UpstreamError, type ProviderAdapter, type UpstreamCall } from "../../../core/providers/types.ts";
import { planAttempts } from "../../../core/routing/plan.ts";
import { runInference } from "../../../core/routing/run-inference.ts";
import { BlockType, FinishReason, GenerateRequestSchema, Role, type GenerateRequest, type GenerateResponse } from "../../../gen/router/v1/inference_pb.js";
import { testTextModel } from "../../support/test-model.ts";

const API_KEY = "sk-settle-outcomes";
const ORG = "org_settle";
const START_BALANCE = 10_000_000_000n; // 10 USD in nano-dollars

/**
 * Prices: prompt 1e-6, completion 2e-6, a request fee of 1e-5 (all whole
 * nano-dollars, so estimates and holds compare exactly).
 */
const config = parseConfig(
  JSON.stringify({
    providers: [{ id: "scripted", label: "Scripted", protocol: "simulator" }],
    models: ["paid", "free"].map((id) =>
      testTextModel(id, {
        supported_parameters: ["max_tokens"],
        providers: [
          {
            provider: "scripted",
            provider_model_id: id,
            pricing: { prompt: "0.000001", completion: "0.000002", request: "0.00001" },
            ...(id === "free" ? { free: { enabled: true, daily_quota: 1 } } : {}),
          },
        ],
      }),
    ),
    organizations: [{ id: ORG, name: "Settle", credits: "10", keys: [{ id: "key_settle", env: "SETTLE_KEY" }] }],
  }),
);

/** How the scripted provider answers: relays `text` in one delta, then finishes, breaks, or waits for the caller to leave. */
interface Script {
  text: string;
  end: "complete" | "break" | "wait-for-abort";
}

/** The scripted provider's request: whether it has answered its first event, and whether it has ended (its generator closed). */
const upstream = { answering: false, ended: false };

function scriptedAdapter(script: () => Script): ProviderAdapter {
  return {
    capabilities: simulatorCapabilities,
    async *stream(call: UpstreamCall): AsyncGenerator<GenerateResponse> {
      upstream.answering = upstream.ended = false;
      try {
        const { text, end } = script();
        const blocks = new BlockWriter();
        blocks.text(blocks.continueBlock(BlockType.TEXT), text);
        upstream.answering = true;
        yield* blocks.take();
        if (end === "break") throw new UpstreamError("connection cut", { retryable: true, reason: "connection_reset" });
        if (end === "wait-for-abort") {
          if (!call.signal.aborted) await new Promise((resolve) => call.signal.addEventListener("abort", resolve, { once: true }));
          throw call.signal.reason;
        }
        blocks.end({ inputTokens: 7, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 3, reasoningTokens: 0 }, { reason: FinishReason.STOP, rawReason: "stop" });
        yield* blocks.take();
      } finally {
        upstream.ended = true;
      }
    },
  };
}

/**
 * A 40-character prompt: its bound is 50 bytes (40, 8 for the message, 2 for
 * the empty tool list), so the estimate counts ceil(50 / 4) = 13 prompt tokens.
 */
const PROMPT = "x".repeat(40);
const TODAY = new Date(Date.UTC(2026, 10, 3));
const ESTIMATED_PROMPT_TOKENS = 13;

let accounts: Accounts;
let script: Script;
let requests = 0;
const catalogue = createCatalogue(config, {});

beforeEach(async () => {
  accounts = await createAccounts({ organizations: config.organizations, env: { SETTLE_KEY: API_KEY }, stores: createMemoryAccountStores() });
});
afterEach(async () => {
  await accounts.close();
});

interface Outcome {
  id: string;
  events: GenerateResponse[];
  error?: unknown;
}

interface RunOptions {
  model: string;
  stream: boolean;
  maxTokens: number;
  leaveAfterFirstDelta?: boolean;
  /** Changes the request once built. */
  request?: (request: GenerateRequest) => void;
  /** The clock, instead of a fixed date. */
  now?: () => Date;
}

async function run(options: RunOptions): Promise<Outcome> {
  const id = `gen-settle-${++requests}`;
  const request = create(GenerateRequestSchema, {
    requestId: id,
    caller: { apiKey: API_KEY },
    model: options.model,
    stream: options.stream,
    sampling: { maxTokens: options.maxTokens },
    messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: PROMPT } } }] }],
  });
  options.request?.(request);
  const controller = new AbortController();
  const deps = { catalogue, accounts, adapters: { simulator: scriptedAdapter(() => script) }, now: options.now ?? (() => TODAY), random: () => 0 };
  const events: GenerateResponse[] = [];
  try {
    for await (const event of runInference(request, controller.signal, deps)) {
      events.push(event);
      // The caller leaves once it has a piece of the answer (the provider then waits for the abort).
      if (options.leaveAfterFirstDelta && event.event.case === "blockDelta") controller.abort();
    }
  } catch (error) {
    await accounts.idle();
    return { id, events, error };
  }
  await accounts.idle();
  return { id, events };
}

const balance = () => accounts.stores.credits.balance(ORG);
const record = (id: string) => accounts.usage.get(ORG, id);
const reasonOf = (error: unknown) => (error as { message?: string } | undefined)?.message ?? "";

describe("a complete answer", () => {
  it("pays the provider's usage at the route's prices, fee included", async () => {
    script = { text: "Hello", end: "complete" };
    const { id, error } = await run({ model: "test/paid", stream: false, maxTokens: 100 });
    expect(error).toBeUndefined();
    // 7 x 0.000001 + 3 x 0.000002 + 0.00001
    expect(await balance()).toBe(START_BALANCE - 23_000n);
    expect(await record(id)).toMatchObject({ promptTokens: 7, completionTokens: 3, cost: "0.000023", outcome: "ok" });
  });
});

describe("a stream cut after it started", () => {
  it("pays the estimate of its prompt and the output relayed, and its record shows the estimated tokens that make that cost", async () => {
    script = { text: "y".repeat(20), end: "break" };
    const { id, error } = await run({ model: "test/paid", stream: true, maxTokens: 100 });
    expect(reasonOf(error)).toContain("broke off before it was complete");
    // 13 prompt tokens x 0.000001 + 5 completion tokens (20 characters) x 0.000002 + the fee 0.00001
    expect(await record(id)).toMatchObject({
      promptTokens: ESTIMATED_PROMPT_TOKENS,
      completionTokens: 5,
      cost: "0.000033",
      outcome: "upstream_error",
      streamed: true,
    });
    expect(await balance()).toBe(START_BALANCE - 33_000n);
  });

  it("the caller leaving mid-stream pays the same estimate", async () => {
    script = { text: "y".repeat(20), end: "wait-for-abort" };
    const { id, error } = await run({ model: "test/paid", stream: true, maxTokens: 100, leaveAfterFirstDelta: true });
    expect(error).toBeDefined();
    expect(await record(id)).toMatchObject({ promptTokens: ESTIMATED_PROMPT_TOKENS, completionTokens: 5, cost: "0.000033", outcome: "client_closed" });
    expect(await balance()).toBe(START_BALANCE - 33_000n);
  });

  it("is charged exactly its hold when the estimate exceeds it", async () => {
    // max_tokens 1 holds 50 x 0.000001 + 1 x 0.000002 + 0.00001 = 0.000062; the provider
    // ignored it and relayed 400 characters (100 tokens): 0.000013 + 0.0002 + 0.00001 = 0.000223.
    script = { text: "y".repeat(400), end: "break" };
    const { id } = await run({ model: "test/paid", stream: true, maxTokens: 1 });
    expect(await balance()).toBe(START_BALANCE - 62_000n);
    expect(await record(id)).toMatchObject({ promptTokens: ESTIMATED_PROMPT_TOKENS, completionTokens: 100, cost: "0.000062" });
  });

  it("a free stream spends its unit, shows its estimated tokens and costs nothing", async () => {
    script = { text: "y".repeat(20), end: "break" };
    const { id } = await run({ model: "test/free:free", stream: true, maxTokens: 100 });
    expect(await record(id)).toMatchObject({ promptTokens: ESTIMATED_PROMPT_TOKENS, completionTokens: 5, cost: "0", free: true });
    script = { text: "Hello", end: "complete" };
    expect(reasonOf((await run({ model: "test/free:free", stream: false, maxTokens: 100 })).error)).toContain("quota");
    expect(await balance()).toBe(START_BALANCE);
  });
});

describe("a non-streamed answer that never completed (the caller got an error, no answer)", () => {
  it("the provider breaking after the first event: nothing charged, the record shows no tokens and cost 0", async () => {
    script = { text: "y".repeat(20), end: "break" };
    const { id, error } = await run({ model: "test/paid", stream: false, maxTokens: 100 });
    expect(reasonOf(error)).toContain("broke off before it was complete");
    expect(await balance()).toBe(START_BALANCE);
    expect(await record(id)).toMatchObject({ promptTokens: 0, completionTokens: 0, cost: "0", outcome: "upstream_error", streamed: false, provider: "scripted" });
  });

  it("the caller leaving before the answer was complete: nothing charged", async () => {
    script = { text: "y".repeat(20), end: "wait-for-abort" };
    const { id, error } = await run({ model: "test/paid", stream: false, maxTokens: 100, leaveAfterFirstDelta: true });
    expect(error).toBeDefined();
    expect(await balance()).toBe(START_BALANCE);
    expect(await record(id)).toMatchObject({ promptTokens: 0, completionTokens: 0, cost: "0", outcome: "client_closed" });
  });

  it("a free request gives its quota unit back, as one that never started", async () => {
    script = { text: "y".repeat(20), end: "break" };
    expect(reasonOf((await run({ model: "test/free:free", stream: false, maxTokens: 100 })).error)).toContain("broke off before it was complete");
    // The daily quota is 1: the unit came back, so the next request is admitted and served.
    script = { text: "Hello", end: "complete" };
    const served = await run({ model: "test/free:free", stream: false, maxTokens: 100 });
    expect(served.error).toBeUndefined();
    expect(await record(served.id)).toMatchObject({ promptTokens: 7, completionTokens: 3, cost: "0", outcome: "ok", free: true });
  });
});

describe("the prompt's size, for the estimate of a cut stream", () => {
  /** Makes the prompt's text count its reads, as walking the messages does. */
  function countingReads(reads: { count: number }) {
    return (request: GenerateRequest) => {
      const part = request.messages[0].content[0].part;
      if (part.case !== "text") throw new Error("a text part was expected");
      Object.defineProperty(part.value, "text", { get: () => (reads.count++, PROMPT) });
    };
  }

  /** How often planning reads the prompt (its context check), which the counts below leave aside. */
  function planningReads(model: string): number {
    const reads = { count: 0 };
    const request = create(GenerateRequestSchema, { model, messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: PROMPT } } }] }] });
    countingReads(reads)(request);
    planAttempts(request, catalogue);
    return reads.count;
  }

  it("is counted once for a paid stream: the hold's count is kept for the estimate", async () => {
    const reads = { count: 0 };
    script = { text: "y".repeat(20), end: "break" };
    const { id } = await run({ model: "test/paid", stream: true, maxTokens: 100, request: countingReads(reads) });
    expect(await record(id)).toMatchObject({ promptTokens: ESTIMATED_PROMPT_TOKENS, completionTokens: 5, cost: "0.000033" });
    expect(reads.count).toBe(planningReads("test/paid") + 1);
  });

  it("is not counted for a free answer that is not streamed, which is never estimated", async () => {
    const reads = { count: 0 };
    script = { text: "Hello", end: "complete" };
    const { error } = await run({ model: "test/free:free", stream: false, maxTokens: 100, request: countingReads(reads) });
    expect(error).toBeUndefined();
    expect(reads.count).toBe(planningReads("test/free:free"));
  });
});

describe("an answer whose start event cannot be made", () => {
  it("ends its upstream request and charges nothing", async () => {
    script = { text: "y".repeat(20), end: "wait-for-abort" };
    upstream.answering = upstream.ended = false;
    // The clock fails once, when the start event is made after the provider's first event.
    let broken = false;
    const now = () => {
      if (upstream.answering && !broken) {
        broken = true;
        throw new Error("the clock failed");
      }
      return TODAY;
    };
    const { error } = await run({ model: "test/paid", stream: true, maxTokens: 100, now });
    expect(reasonOf(error)).toBe("the clock failed");
    expect(upstream.answering).toBe(true);
    expect(upstream.ended).toBe(true);
    expect(await balance()).toBe(START_BALANCE);
  });
});
