// Continuation for every format, in the core: a request naming a stored answer
// (GenerateRequest.conversation) gets that conversation's history prepended to
// its messages (expand), and an answer the caller wants kept is saved as a
// turn once it has finished (recorder), off the answer's path.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { TurnSchema, TurnStatus, type Turn } from "../../gen/router/v1/conversations_pb.js";
import {
  ConversationRefSchema,
  FinishReason,
  UpstreamConversationSchema,
  type GenerateRequest,
  type GenerateResponse,
  Role,
  type Message,
  type ResponseStart,
  type Usage,
} from "../../gen/router/v1/inference_pb.js";
import { fromStore } from "../accounts/refusals.ts";
import { StoreUnavailableError } from "../accounts/store-errors.ts";
import { Code, echoed, routerError } from "../errors.ts";
import { createOutputFold, type OutputFold } from "./fold-output.ts";
import type { ConversationStore } from "./store.ts";
import { asOf, isActive } from "./turn-status.ts";

/**
 * The most turns a history replays (the turn named and those before it). A
 * longer conversation is refused rather than cut short silently: the caller
 * starts a new one with the input it wants kept.
 */
export const MAX_HISTORY_TURNS = 256;

export interface ConversationsOptions {
  store: ConversationStore;
  /** How long a saved turn is kept (configuration: conversations.ttl_seconds). */
  ttlSeconds: number;
  now: () => Date;
  /**
   * Where a failed save is reported (pino's logger fits); it is never thrown
   * at the caller. An unavailable store is one short warn line per turn (the
   * store says once per outage why); anything else is a bug, an error.
   */
  logger?: { warn(details: object, message: string): void; error(details: object, message: string): void };
}

export interface TurnRecorder {
  /**
   * Sees every event of the answer, start to finish, including blocks the
   * caller is not sent (reasoning withheld by `reasoning.exclude`, which the
   * next turn's provider may need); the finish saves the turn in the background.
   */
  observe(event: GenerateResponse): void;
}

/** How a background answer takes its finished turn: it saves the turn itself, in order with its other saves. */
export interface RecordOptions {
  onFinished(turn: Turn): void;
}

export interface Conversations {
  store: ConversationStore;
  /**
   * The messages of the stored conversation ending at `previousId`, oldest
   * first: each turn's input, then its output. An unknown id, an expired one,
   * or another organisation's is an InvalidArgument naming `param`, and so is
   * a conversation one of whose earlier turns is gone (never a part of it).
   * Every turn read is renewed to expire the TTL from now.
   */
  historyFor(organizationId: string, previousId: string, param?: string): Promise<Message[]>;
  /**
   * The request with its conversation's history before its own messages; the
   * same object when it continues none. Its reference becomes the stored
   * turn's own id (it may have named the provider's id of it), with the
   * provider that keeps that turn too, when one does (ConversationRef.upstream).
   */
  expand(request: GenerateRequest, organizationId: string): Promise<GenerateRequest>;
  /** The turn id a caller named: the id itself, or the id of the turn its provider keeps under that id; the id as given when neither is stored. */
  storedIdOf(organizationId: string, id: string): Promise<string>;
  /**
   * A recorder when the request's answer is to be kept (or `record` is
   * given), else undefined. Give it the request as received (before expand).
   */
  recorder(request: GenerateRequest, organizationId: string, record?: RecordOptions): TurnRecorder | undefined;
  /** The turn a request starts as: its input, before any output (a background answer, queued). */
  pendingTurn(request: GenerateRequest, organizationId: string, id: string): Turn;
  /** Resolves when every save started so far has ended (tests, shutdown). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** The refusal of a reference to no stored answer of the caller's organisation. */
export const previousNotFound = (previousId: string, param: string) =>
  routerError(Code.InvalidArgument, "previous_response_not_found", `Previous response with id '${echoed(previousId)}' not found.`, { param });

/** The public field that carries the reference, named in errors: the format's decoder says which (format_policy). */
export function referenceParam(request: Pick<GenerateRequest, "formatPolicy">): string {
  return request.formatPolicy?.referenceParam || "conversation.previous_id";
}

/** Whether an answer is kept: `store` when the request says, else the format's default (format_policy). */
function storesAnswer(request: GenerateRequest): boolean {
  if (request.store !== undefined) return request.store;
  return request.formatPolicy?.storeByDefault ?? false;
}

/** The answer's reasoning, stamped with the protocol that signed it, so that no other provider is sent its signature. */
function signedBy(messages: Message[], protocol: string): Message[] {
  for (const message of messages) {
    for (const part of message.content) if (part.part.case === "reasoning" && (part.part.value.signature || part.part.value.redactedData)) part.part.value.signedBy = protocol;
  }
  return messages;
}

export function createConversations(options: ConversationsOptions): Conversations {
  const { store, now } = options;
  const ttlMs = options.ttlSeconds * 1000;
  const saving = new Set<Promise<void>>();

  const save = (turn: Turn) => {
    const done = store.save(turn).catch((error: unknown) => {
      if (error instanceof StoreUnavailableError) options.logger?.warn({ requestId: turn.id, code: "store_unavailable" }, "conversation turn not stored");
      else options.logger?.error({ err: error, requestId: turn.id }, "could not store the conversation turn; continuing from it will answer not found");
    });
    saving.add(done);
    void done.finally(() => saving.delete(done));
  };

  interface Finished {
    request: GenerateRequest;
    organizationId: string;
    start: ResponseStart;
    usage: Usage | undefined;
    reason: FinishReason;
    /** The provider's own id of the answer, when it keeps it (Finish.upstream_id). */
    upstreamId: string;
    fold: OutputFold;
  }

  /** What every turn of a request holds: the request's own messages in (not its system or developer ones), its metadata and echo. */
  function turnOf(request: GenerateRequest, organizationId: string, id: string, createdAtMs: number): Turn {
    return create(TurnSchema, {
      id,
      organizationId,
      previousId: request.conversation?.previousId ?? "",
      // Each request's own instructions apply: none is replayed into a later turn (as OpenAI does not carry `instructions` over).
      input: request.messages.filter((message) => !isInstruction(message)),
      metadata: request.metadata,
      storedEcho: request.storedEcho,
      createdAt: timestampFromMs(createdAtMs),
      expiresAt: timestampFromMs(now().getTime() + ttlMs),
    });
  }

  /** The turn of a finished answer: its request's, with the folded blocks out. */
  function finishedTurn({ request, organizationId, start, usage, reason, upstreamId, fold }: Finished): Turn {
    const finishedAt = now().getTime();
    const turn = turnOf(request, organizationId, start.id, Number(start.created) * 1000);
    turn.modelId = start.modelId;
    turn.provider = start.provider;
    turn.upstreamId = upstreamId;
    turn.status = reason === FinishReason.LENGTH || reason === FinishReason.CONTENT_FILTER ? TurnStatus.INCOMPLETE : TurnStatus.COMPLETED;
    turn.finishReason = reason;
    turn.output = signedBy(fold.messages(), start.protocol);
    turn.outputBlocks = fold.blocks();
    turn.usage = usage;
    turn.completedAt = timestampFromMs(finishedAt);
    turn.expiresAt = timestampFromMs(finishedAt + ttlMs);
    return turn;
  }

  /** The turn id a caller named, its own or the provider's id of it (the turn's own tried first: it is the usual one). */
  async function storedIdOf(organizationId: string, id: string): Promise<string> {
    if (!id || (await fromStore(store.get(organizationId, id)))) return id;
    return (await fromStore(store.idOfUpstream(organizationId, id))) ?? id;
  }

  async function historyFor(organizationId: string, previousId: string, param = "previous_response_id"): Promise<Message[]> {
    return (await conversationOf(organizationId, previousId, param)).messages;
  }

  /** The stored conversation ending at `previousId` (a turn's id or its provider's id of it): its messages, and its newest turn. */
  async function conversationOf(organizationId: string, previousId: string, param: string): Promise<{ messages: Message[]; newest: Turn }> {
    // One more than allowed tells a conversation that is too long from one that is not.
    // Read for a continuation: the conversation stays alive as long as it is continued.
    const renewal = { expiresAt: now().getTime() + ttlMs };
    const walk = (id: string) => fromStore(store.chain(organizationId, id, MAX_HISTORY_TURNS + 1, renewal));
    let chain = previousId ? await walk(previousId) : [];
    // Not a turn's own id: perhaps its provider's id of it.
    const storedId = chain.length === 0 && previousId ? await fromStore(store.idOfUpstream(organizationId, previousId)) : undefined;
    if (storedId) chain = await walk(storedId);
    if (chain.length === 0) throw previousNotFound(previousId, param);
    if (isActive(asOf(chain[0], now().getTime()))) {
      throw routerError(Code.InvalidArgument, "previous_response_in_progress", `Previous response with id '${previousId}' has not finished yet.`, { param });
    }
    if (chain.length > MAX_HISTORY_TURNS) {
      throw routerError(
        Code.InvalidArgument,
        "conversation_too_long",
        `The conversation of '${previousId}' is longer than ${MAX_HISTORY_TURNS} turns; start a new one with the input to keep.`,
        { param },
      );
    }
    // The walk stopped at a missing turn: refused rather than continued with part of the history.
    if (chain.at(-1)!.previousId !== "") {
      throw routerError(
        Code.InvalidArgument,
        "previous_response_not_found",
        `An earlier turn of the conversation of '${previousId}' has expired or was deleted; start a new conversation with the input to keep.`,
        { param },
      );
    }
    const messages: Message[] = [];
    for (let i = chain.length - 1; i >= 0; i--) messages.push(...chain[i].input, ...chain[i].output);
    return { messages, newest: chain[0] };
  }

  return {
    store,
    historyFor,
    storedIdOf,

    async expand(request, organizationId) {
      const previousId = request.conversation?.previousId;
      if (!previousId) return request;
      const { messages: history, newest } = await conversationOf(organizationId, previousId, referenceParam(request));
      // A new request object: the caller's stays as it was (its messages are this turn's input).
      // Its leading system and developer messages (instructions, which are never stored) stay first:
      // after the history they would split an earlier tool call from its result.
      const lead = request.messages.findIndex((message) => !isInstruction(message));
      const head = lead === -1 ? request.messages : request.messages.slice(0, lead);
      const upstream = newest.upstreamId ? create(UpstreamConversationSchema, { provider: newest.provider, upstreamId: newest.upstreamId, historyMessages: history.length }) : undefined;
      return {
        ...request,
        messages: [...head, ...history, ...request.messages.slice(head.length)],
        conversation: create(ConversationRefSchema, { previousId: newest.id, upstream }),
      };
    },

    pendingTurn: (request, organizationId, id) => turnOf(request, organizationId, id, now().getTime()),

    recorder(request, organizationId, record) {
      if (!record && !storesAnswer(request)) return undefined;
      const fold = createOutputFold();
      let start: ResponseStart | undefined;
      let usage: Usage | undefined;
      const observe = (event: GenerateResponse) => {
        switch (event.event.case) {
          case "start":
            start = event.event.value;
            break;
          case "blockStart":
            fold.start(event.event.value);
            break;
          case "blockDelta":
            fold.delta(event.event.value);
            break;
          case "annotation":
            fold.annotate(event.event.value);
            break;
          case "usage":
            usage = event.event.value;
            break;
          case "finish":
            if (!start) break;
            const turn = finishedTurn({ request, organizationId, start, usage, reason: event.event.value.reason, upstreamId: event.event.value.upstreamId, fold });
            if (record) record.onFinished(turn);
            else save(turn);
        }
      };
      return { observe };
    },

    async idle() {
      while (saving.size > 0) await Promise.all(saving);
    },

    async close() {
      while (saving.size > 0) await Promise.all(saving);
      await store.close();
    },
  };
}

/** A system or developer message: the request's instructions, never stored with its turn. */
function isInstruction(message: Message): boolean {
  return message.role === Role.SYSTEM || message.role === Role.DEVELOPER;
}
