// router.v1.ConversationService: a caller's stored answers (turns), read and
// deleted with the caller's API key. Another organisation's turn is as unknown
// as a missing one, as for GetGeneration.
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { InputItemSchema, ListOrder, TurnStatus, type ConversationService, type Turn } from "../../gen/router/v1/conversations_pb.js";
import type { BackgroundAnswers } from "../background/background-answers.ts";
import { asOf, isActive, withCancelRequested } from "../conversations/turn-status.ts";
import type { Caller } from "../../gen/router/v1/inference_pb.js";
import type { Accounts } from "../accounts/accounts.ts";
import { authenticate } from "../accounts/check-key.ts";
import { fromStore } from "../accounts/refusals.ts";
import type { Conversations } from "../conversations/conversations.ts";
import { Code, echoed, invalidParameter, routerError } from "../errors.ts";
import { ITEMS_LIMIT_DEFAULT, ITEMS_LIMIT_MAX } from "../../wire/limits.ts";

export interface ConversationServiceDeps {
  accounts: Pick<Accounts, "stores">;
  conversations: Conversations;
  background: BackgroundAnswers;
  now: () => Date;
  /** Tells the provider that keeps a turn on its side (Turn.upstream_id) that it was deleted; returns at once. */
  forgetUpstream?: (provider: string, upstreamId: string) => void;
}


/**
 * The id of a turn's input item: the turn id, `_in` and the item's position in
 * the input, from 0. Apart from the output blocks' `<request id>_<index>`.
 */
export const inputItemId = (turnId: string, position: number) => `${turnId}_in${position}`;

export function createConversationService(deps: ConversationServiceDeps): ServiceImpl<typeof ConversationService> {
  const { store } = deps.conversations;

  const organizationOf = async (caller: Caller | undefined) => (await authenticate(deps.accounts, caller)).organizationId;

  const turnOf = async (caller: Caller | undefined, id: string): Promise<Turn> => turnIn(await organizationOf(caller), id);

  /** The turn as it stands now (named by its id or its provider's id of it): a background answer whose instance stopped reads as failed. */
  const turnIn = async (organizationId: string, named: string): Promise<Turn> => {
    const read = (id: string) => (id ? fromStore(store.get(organizationId, id)) : Promise.resolve(undefined));
    const turn = (await read(named)) ?? (await read((await fromStore(store.idOfUpstream(organizationId, named))) ?? ""));
    if (!turn) throw notFound(named);
    return asOf(turn, deps.now().getTime());
  };

  return {
    async generateInBackground({ request }) {
      if (!request) throw invalidParameter("request", "request is required.");
      return { turn: await deps.background.start(request) };
    },

    async cancelTurn(request) {
      const organizationId = await organizationOf(request.caller);
      const turn = await turnIn(organizationId, request.id);
      if (!turn.background) throw notCancellable("Only answers created with background: true can be cancelled.");
      if (turn.status === TurnStatus.CANCELLED) return { turn };
      if (!isActive(turn)) throw notCancellable(`Cannot cancel an answer that has already ${FINISHED_WORDS[turn.status] ?? "finished"}.`);
      await fromStore(store.requestCancel(organizationId, turn.id));
      deps.background.cancelHere(organizationId, turn.id);
      return { turn: withCancelRequested(turn) };
    },

    async getTurn(request) {
      return { turn: await turnOf(request.caller, request.id) };
    },

    async listItems(request) {
      // A bad key is told before anything about the request (401 first).
      const organizationId = await organizationOf(request.caller);
      const limit = request.limit === 0 ? ITEMS_LIMIT_DEFAULT : request.limit;
      if (limit < 1 || limit > ITEMS_LIMIT_MAX) throw invalidParameter("limit", `limit must be between 1 and ${ITEMS_LIMIT_MAX}.`);
      const turn = await turnIn(organizationId, request.id);
      const items = turn.input.map((message, position) => create(InputItemSchema, { id: inputItemId(turn.id, position), message }));
      // Newest first unless asked otherwise, as OpenAI's list defaults to.
      if (request.order !== ListOrder.ASC) items.reverse();
      let from = 0;
      if (request.after) {
        const index = items.findIndex((item) => item.id === request.after);
        if (index < 0) throw invalidParameter("after", `No input item ${echoed(request.after)} in ${turn.id}.`);
        from = request.includeAfter ? index : index + 1;
      }
      const page = items.slice(from, from + limit);
      return { items: page, firstId: page[0]?.id ?? "", lastId: page.at(-1)?.id ?? "", hasMore: from + limit < items.length };
    },

    async deleteTurn(request) {
      const organizationId = await organizationOf(request.caller);
      const id = await deps.conversations.storedIdOf(organizationId, request.id);
      const turn = id !== "" ? await fromStore(store.get(organizationId, id)) : undefined;
      const deleted = turn !== undefined && (await fromStore(store.delete(organizationId, id)));
      if (!deleted) throw notFound(request.id);
      if (turn.upstreamId) deps.forgetUpstream?.(turn.provider, turn.upstreamId);
      // A background answer running here stops now; one running elsewhere at its next save.
      deps.background.deletedHere(organizationId, id);
      return { id: request.id, deleted: true };
    },
  };
}

const notCancellable = (message: string) => routerError(Code.FailedPrecondition, "response_not_cancellable", message, { param: "id" });

const FINISHED_WORDS: Partial<Record<TurnStatus, string>> = {
  [TurnStatus.COMPLETED]: "completed",
  [TurnStatus.INCOMPLETE]: "ended incomplete",
  [TurnStatus.FAILED]: "failed",
};

const notFound = (id: string) => routerError(Code.NotFound, "turn_not_found", `No stored answer ${echoed(id)} for this organisation.`, { param: "id" });
