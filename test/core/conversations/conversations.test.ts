// The conversations unit on the memory store: history assembly (order, scope,
// bounds, errors naming the format's field), expand, and the recorder that
// folds a relayed stream into a stored turn.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it, vi } from "vitest";
import { createConversations, MAX_HISTORY_TURNS, type Conversations } from "../../../core/conversations/conversations.ts";
import { createMemoryConversationStore } from "../../../core/conversations/memory-store.ts";
import type { ConversationStore } from "../../../core/conversations/store.ts";
import { StoreUnavailableError } from "../../../core/accounts/store-errors.ts";
import { ConnectError, errorDetailOf } from "../../../core/errors.ts";
import { TurnSchema, TurnStatus } from "../../../gen/router/v1/conversations_pb.js";
import {
  BlockType,
  FinishReason,
  GenerateRequestSchema,
  GenerateResponseSchema,
  PublicFormat,
  Role,
  type GenerateResponse,
} from "../../../gen/router/v1/inference_pb.js";
import { FORMAT_FIELDS } from "../../support/request-formats.ts";

const T0 = Date.UTC(2026, 10, 3, 12, 0, 0);
const TTL_SECONDS = 3600;

const text = (role: Role, value: string) => ({ role, content: [{ part: { case: "text" as const, value: { text: value } } }] });

function setup(store: ConversationStore = createMemoryConversationStore({ now: () => T0 }), now = () => T0) {
  const logger = { warn: vi.fn(), error: vi.fn() };
  const conversations = createConversations({ store, ttlSeconds: TTL_SECONDS, now: () => new Date(now()), logger });
  return { conversations, store, logger };
}

function request(fields: MessageInitShape<typeof GenerateRequestSchema> = {}) {
  return create(GenerateRequestSchema, { ...FORMAT_FIELDS.responses, model: "simulator/echo", messages: [text(Role.USER, "hi")], ...fields } as MessageInitShape<typeof GenerateRequestSchema>);
}

const event = (value: MessageInitShape<typeof GenerateResponseSchema>["event"]) => create(GenerateResponseSchema, { event: value });

/** A finished answer: reasoning with a signature, text, a refusal, a tool call, usage, finish. */
function answer(id: string, finish = FinishReason.TOOL_CALLS): GenerateResponse[] {
  return [
    event({ case: "start", value: { id, modelId: "anthropic/claude", model: "claude", provider: "anthropic", created: BigInt(T0 / 1000) } }),
    event({ case: "blockStart", value: { index: 0, type: BlockType.REASONING, id: `${id}_0` } }),
    event({ case: "blockDelta", value: { index: 0, text: "Let me ", signature: "", redactedData: "" } }),
    event({ case: "blockDelta", value: { index: 0, text: "think.", signature: "sig-abc", redactedData: "" } }),
    event({ case: "blockStop", value: { index: 0 } }),
    event({ case: "blockStart", value: { index: 1, type: BlockType.REASONING, id: `${id}_1` } }),
    event({ case: "blockDelta", value: { index: 1, text: "", signature: "", redactedData: "opaque==" } }),
    event({ case: "blockStart", value: { index: 2, type: BlockType.TEXT, id: `${id}_2` } }),
    event({ case: "blockDelta", value: { index: 2, text: "Looking ", signature: "", redactedData: "" } }),
    event({ case: "blockDelta", value: { index: 2, text: "it up.", signature: "", redactedData: "" } }),
    event({ case: "annotation", value: { url: "https://example.com/a", title: "A", blockIndex: 2 } }),
    event({ case: "blockStart", value: { index: 3, type: BlockType.IMAGE, mimeType: "image/png" } }),
    event({ case: "blockDelta", value: { index: 3, text: "", data: new Uint8Array([1, 2]) } }),
    event({ case: "blockStart", value: { index: 4, type: BlockType.TOOL_CALL, toolCallId: "call_1", toolName: "lookup", id: "call_1" } }),
    event({ case: "blockDelta", value: { index: 4, text: '{"q":', signature: "", redactedData: "" } }),
    event({ case: "blockDelta", value: { index: 4, text: '"x"}', signature: "", redactedData: "" } }),
    // No block named: the last text block's.
    event({ case: "annotation", value: { url: "https://example.com/b", title: "B" } }),
    event({ case: "usage", value: { inputTokens: 10, outputTokens: 20, cost: "0.001" } }),
    event({ case: "finish", value: { reason: finish, rawReason: "tool_use" } }),
  ];
}

async function record(conversations: Conversations, req = request(), events = answer(req.requestId || "resp_1"), organizationId = "org-a") {
  const recorder = conversations.recorder(req, organizationId);
  for (const e of events) recorder?.observe(e);
  await conversations.idle();
  return recorder;
}

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ConnectError)) throw new Error(`expected a ConnectError, got ${String(error)}`);
  return { code: error.code, detail: errorDetailOf(error), message: error.rawMessage };
}

describe("recorder", () => {
  it("saves the finished answer as a turn: the request's own input, then one assistant message of its blocks", async () => {
    const { conversations, store } = setup();
    await record(conversations, request({ requestId: "resp_1" }));
    const turn = await store.get("org-a", "resp_1");
    expect(turn).toMatchObject({
      id: "resp_1",
      organizationId: "org-a",
      previousId: "",
      modelId: "anthropic/claude",
      provider: "anthropic",
      status: TurnStatus.COMPLETED,
      finishReason: FinishReason.TOOL_CALLS,
      usage: { inputTokens: 10, outputTokens: 20, cost: "0.001" },
    });
    expect(turn!.input).toEqual([create(GenerateRequestSchema, { messages: [text(Role.USER, "hi")] }).messages[0]]);
    expect(turn!.output).toHaveLength(1);
    expect(turn!.output[0].role).toBe(Role.ASSISTANT);
    // The image block is not kept; the rest in the order the blocks started.
    expect(turn!.output[0].content.map((c) => c.part)).toEqual([
      { case: "reasoning", value: expect.objectContaining({ text: "Let me think.", signature: "sig-abc", redactedData: "" }) },
      { case: "reasoning", value: expect.objectContaining({ text: "", signature: "", redactedData: "opaque==" }) },
      { case: "text", value: expect.objectContaining({ text: "Looking it up." }) },
      { case: "toolCall", value: expect.objectContaining({ id: "call_1", name: "lookup", arguments: '{"q":"x"}' }) },
    ]);
    // Beside each part: its stream id, its type and the sources it cites.
    expect(turn!.outputBlocks.map((b) => [b.id, BlockType[b.type], b.annotations.map((a) => a.url)])).toEqual([
      ["resp_1_0", "REASONING", []],
      ["resp_1_1", "REASONING", []],
      ["resp_1_2", "TEXT", ["https://example.com/a", "https://example.com/b"]],
      ["call_1", "TOOL_CALL", []],
    ]);
    expect(timestampMs(turn!.createdAt!)).toBe(T0);
    expect(timestampMs(turn!.expiresAt!)).toBe(T0 + TTL_SECONDS * 1000);
  });

  it("leaves the request's system and developer messages out of the stored input: each request's own instructions apply", async () => {
    const { conversations, store } = setup();
    const messages = [text(Role.SYSTEM, "be terse"), text(Role.DEVELOPER, "use tools"), text(Role.USER, "hi")];
    await record(conversations, request({ requestId: "resp_sys", messages }));
    expect((await store.get("org-a", "resp_sys"))!.input.map((m) => Role[m.role])).toEqual(["USER"]);
  });

  it("keeps a refusal as the assistant's text", async () => {
    const { conversations, store } = setup();
    await record(conversations, request(), [
      event({ case: "start", value: { id: "resp_r", modelId: "m/x", provider: "p", created: 0n } }),
      event({ case: "blockStart", value: { index: 0, type: BlockType.REFUSAL } }),
      event({ case: "blockDelta", value: { index: 0, text: "I can't help with that.", signature: "", redactedData: "" } }),
      event({ case: "finish", value: { reason: FinishReason.STOP } }),
    ]);
    const stored = await store.get("org-a", "resp_r");
    expect(stored!.output[0].content[0].part).toEqual({ case: "text", value: expect.objectContaining({ text: "I can't help with that." }) });
    expect(stored!.outputBlocks[0].type).toBe(BlockType.REFUSAL);
  });

  it("marks an answer cut by its token limit incomplete", async () => {
    const { conversations, store } = setup();
    await record(conversations, request(), answer("resp_l", FinishReason.LENGTH));
    expect((await store.get("org-a", "resp_l"))?.status).toBe(TurnStatus.INCOMPLETE);
  });

  it("saves nothing for an answer that never finished", async () => {
    const { conversations, store } = setup();
    await record(conversations, request(), answer("resp_cut").slice(0, -2));
    expect(await store.get("org-a", "resp_cut")).toBeUndefined();
  });

  it.each([
    ["store: false on Responses", request({ store: false }), false],
    ["chat completions by default", request({ ...FORMAT_FIELDS.chatCompletions }), false],
    ["store: true on chat completions", request({ ...FORMAT_FIELDS.chatCompletions, store: true }), true],
    ["Responses by default", request(), true],
    ["Interactions by default", request({ ...FORMAT_FIELDS.interactions }), true],
  ])("keeps the answer or not: %s", async (_name, req, kept) => {
    const { conversations } = setup();
    expect(conversations.recorder(req, "org-a") !== undefined).toBe(kept);
  });

  it("logs a failed save as an error (a bug) and throws nothing at the caller", async () => {
    const failing: ConversationStore = { ...createMemoryConversationStore(), save: () => Promise.reject(new Error("disk on fire")) };
    const { conversations, logger } = setup(failing);
    await record(conversations, request(), answer("resp_f"));
    expect(logger.error).toHaveBeenCalledWith(expect.objectContaining({ requestId: "resp_f" }), expect.stringContaining("could not store"));
  });

  it("logs a save to an unavailable store as one short warn line: request id and code, no stack", async () => {
    const failing: ConversationStore = { ...createMemoryConversationStore(), save: () => Promise.reject(new StoreUnavailableError("Redis down")) };
    const { conversations, logger } = setup(failing);
    await record(conversations, request(), answer("resp_down"));
    expect(logger.error).not.toHaveBeenCalled();
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn).toHaveBeenCalledWith({ requestId: "resp_down", code: "store_unavailable" }, "conversation turn not stored");
  });
});

describe("history", () => {
  async function conversationOf(conversations: Conversations, turns: number) {
    let previousId = "";
    for (let i = 1; i <= turns; i++) {
      const req = request({ requestId: `resp_${i}`, messages: [text(Role.USER, `question ${i}`)], ...(previousId && { conversation: { previousId } }) });
      await record(conversations, req, answer(`resp_${i}`, FinishReason.STOP));
      previousId = `resp_${i}`;
    }
  }
  const words = (messages: { role: Role; content: { part: { case?: string; value?: unknown } }[] }[]) =>
    messages.map((m) => `${Role[m.role]}:${m.content.map((c) => (c.part.case === "text" ? (c.part.value as { text: string }).text : c.part.case)).join("+")}`);

  it("replays each turn's input then its output, oldest first, chained through the recorded previous ids", async () => {
    const { conversations } = setup();
    await conversationOf(conversations, 3);
    const history = await conversations.historyFor("org-a", "resp_3");
    expect(words(history)).toEqual([
      "USER:question 1",
      "ASSISTANT:reasoning+reasoning+Looking it up.+toolCall",
      "USER:question 2",
      "ASSISTANT:reasoning+reasoning+Looking it up.+toolCall",
      "USER:question 3",
      "ASSISTANT:reasoning+reasoning+Looking it up.+toolCall",
    ]);
    // The reasoning signature survives into the replayed history.
    expect(history[1].content[0].part).toMatchObject({ case: "reasoning", value: { signature: "sig-abc" } });
  });

  it("expand puts the history before the request's own messages, in a new request; the original is untouched", async () => {
    const { conversations } = setup();
    await conversationOf(conversations, 1);
    const original = request({ conversation: { previousId: "resp_1" }, messages: [text(Role.USER, "and then?")] });
    const expanded = await conversations.expand(original, "org-a");
    expect(words(expanded.messages)).toEqual(["USER:question 1", "ASSISTANT:reasoning+reasoning+Looking it up.+toolCall", "USER:and then?"]);
    expect(words(original.messages)).toEqual(["USER:and then?"]);
    expect(expanded.model).toBe("simulator/echo");
    // No reference: the very same object (nothing done on the common path).
    const plain = request();
    expect(await conversations.expand(plain, "org-a")).toBe(plain);
    const emptyReference = request({ conversation: { previousId: "" } });
    expect(await conversations.expand(emptyReference, "org-a")).toBe(emptyReference);
  });

  it("continues a turn its provider keeps too: named by either id, the reference becomes the turn's own and says who keeps it and how much history came first", async () => {
    const { conversations, store } = setup();
    await conversationOf(conversations, 1);
    // The second turn's provider kept it, under its own id (Finish.upstream_id).
    const kept = answer("resp_2", FinishReason.STOP);
    kept.at(-1)!.event.value = { ...(kept.at(-1)!.event.value as object), upstreamId: "v1_kept-2" } as never;
    await record(conversations, request({ requestId: "resp_2", conversation: { previousId: "resp_1" } }), kept);
    expect((await store.get("org-a", "resp_2"))?.upstreamId).toBe("v1_kept-2");
    for (const named of ["resp_2", "v1_kept-2"]) {
      const expanded = await conversations.expand(request({ conversation: { previousId: named }, messages: [text(Role.SYSTEM, "Be brief."), text(Role.USER, "and then?")] }), "org-a");
      expect(expanded.conversation).toMatchObject({ previousId: "resp_2", upstream: { provider: "anthropic", upstreamId: "v1_kept-2", historyMessages: 4 } });
      expect(words(expanded.messages.slice(1 + 4))).toEqual(["USER:and then?"]);
      expect(await conversations.storedIdOf("org-a", named)).toBe("resp_2");
    }
    // A turn nobody keeps upstream says so; another organisation cannot name it by the provider's id.
    expect((await conversations.expand(request({ conversation: { previousId: "resp_1" } }), "org-a")).conversation?.upstream).toBeUndefined();
    expect((await refusal(conversations.expand(request({ conversation: { previousId: "v1_kept-2" } }), "org-b"))).detail?.reason).toBe("previous_response_not_found");
    // The next turn continues the turn's own id, whichever the caller named.
    await record(conversations, request({ requestId: "resp_3", conversation: { previousId: "resp_2" } }), answer("resp_3", FinishReason.STOP));
    expect((await store.get("org-a", "resp_3"))?.previousId).toBe("resp_2");
  });

  it.each([
    ["an unknown id", "org-a", "resp_nope"],
    ["another organisation's id", "org-b", "resp_1"],
  ])("refuses %s as previous_response_not_found naming the format's field", async (_name, organizationId, previousId) => {
    const { conversations } = setup();
    await conversationOf(conversations, 1);
    const responses = await refusal(conversations.expand(request({ conversation: { previousId } }), organizationId));
    expect(responses.code).toBe(3); // InvalidArgument
    expect(responses.detail).toMatchObject({ reason: "previous_response_not_found", param: "previous_response_id" });
    const interactions = await refusal(conversations.expand(request({ ...FORMAT_FIELDS.interactions, conversation: { previousId } }), organizationId));
    expect(interactions.detail?.param).toBe("previous_interaction_id");
    const direct = await refusal(conversations.historyFor(organizationId, previousId, "custom_field"));
    expect(direct.detail?.param).toBe("custom_field");
  });

  it("refuses an expired id", async () => {
    let clock = T0;
    const store = createMemoryConversationStore({ now: () => clock });
    const { conversations } = setup(store);
    await conversationOf(conversations, 1);
    clock = T0 + TTL_SECONDS * 1000;
    expect((await refusal(conversations.historyFor("org-a", "resp_1"))).detail?.reason).toBe("previous_response_not_found");
  });

  it("refuses a conversation one of whose earlier turns is gone, rather than replaying part of it", async () => {
    const { conversations, store } = setup();
    await conversationOf(conversations, 3);
    await store.delete("org-a", "resp_2");
    const broken = await refusal(conversations.historyFor("org-a", "resp_3"));
    expect(broken.code).toBe(3); // InvalidArgument
    expect(broken.detail).toMatchObject({ reason: "previous_response_not_found", param: "previous_response_id" });
    expect(broken.message).toMatch(/earlier turn .* has expired or was deleted/);
    const interactions = await refusal(conversations.expand(request({ ...FORMAT_FIELDS.interactions, conversation: { previousId: "resp_3" } }), "org-a"));
    expect(interactions.detail?.param).toBe("previous_interaction_id");
  });

  it("keeps a continued conversation alive: every turn read is renewed to expire the TTL from now", async () => {
    let clock = T0;
    const store = createMemoryConversationStore({ now: () => clock });
    const { conversations } = setup(store, () => clock);
    await conversationOf(conversations, 2);
    // Just before the first turns expire, the conversation is continued...
    clock = T0 + TTL_SECONDS * 1000 - 1;
    expect(await conversations.historyFor("org-a", "resp_2")).toHaveLength(4);
    // ...so long after their first expiry the whole of it is still there.
    clock = T0 + TTL_SECONDS * 1000 * 1.5;
    expect(await conversations.historyFor("org-a", "resp_2")).toHaveLength(4);
    expect(timestampMs((await store.get("org-a", "resp_1"))!.expiresAt!)).toBe(clock + TTL_SECONDS * 1000);
  });

  it(`replays at most ${MAX_HISTORY_TURNS} turns and refuses a longer conversation`, async () => {
    const store = createMemoryConversationStore({ now: () => T0 });
    const { conversations } = setup(store);
    let previousId = "";
    for (let i = 1; i <= MAX_HISTORY_TURNS + 1; i++) {
      await store.save(create(TurnSchema, { id: `t${i}`, organizationId: "org-a", previousId, input: [text(Role.USER, `q${i}`)] }));
      previousId = `t${i}`;
    }
    expect(await conversations.historyFor("org-a", `t${MAX_HISTORY_TURNS}`)).toHaveLength(MAX_HISTORY_TURNS);
    const tooLong = await refusal(conversations.historyFor("org-a", `t${MAX_HISTORY_TURNS + 1}`));
    expect(tooLong.detail).toMatchObject({ reason: "conversation_too_long", param: "previous_response_id" });
  });
});
