// GET /api/v1/responses/{id}/input_items: OpenAI's pages of input items, exact
// (`limit` items at most, `has_more` true only when an item follows), over the
// core's pages of stored messages. An earlier answer sent back is one stored
// message but several items, so a page may end inside a message: the next page
// (`after` = that page's last item id) has the core list that message again
// (`include_after`) and starts after the item named.
import { invalidParameter } from "../../../core/errors.ts";
import { ITEMS_LIMIT_MAX } from "../../../wire/limits.ts";
import { ListOrder } from "../../../gen/router/v1/conversations_pb.js";
import type { CoreClient } from "../../core-client.ts";
import { inputItemsOf, type ResponseItem } from "./stored-response.ts";

export interface InputItemsQuery {
  apiKey: string;
  responseId: string;
  /** An item id, as the caller gave it: a whole message's or one of an earlier answer's items. */
  after: string | undefined;
  /** 1 to ITEMS_LIMIT_MAX. */
  limit: number;
  order: ListOrder;
}

export async function listInputItems(core: CoreClient, query: InputItemsQuery) {
  const newestFirst = query.order !== ListOrder.ASC;
  const data: ResponseItem[] = [];
  let after = query.after === undefined ? "" : messageIdOfItem(query.after);
  let includeAfter = query.after !== undefined;
  // One item past the page says has_more; a message listed again for its later items counts once more.
  for (let hasMore = true; hasMore && data.length <= query.limit; includeAfter = false) {
    const wanted = query.limit + 1 - data.length + (includeAfter ? 1 : 0);
    const page = await core.conversations.listItems({
      caller: { apiKey: query.apiKey },
      id: query.responseId,
      after,
      includeAfter,
      limit: Math.min(wanted, ITEMS_LIMIT_MAX),
      order: query.order,
    });
    for (const [index, item] of page.items.entries()) {
      const items = inputItemsOf(item, newestFirst);
      data.push(...(includeAfter && index === 0 ? itemsAfter(items, query.after!, query.responseId) : items));
    }
    after = page.lastId;
    hasMore = page.hasMore;
  }
  const items = data.slice(0, query.limit);
  return { object: "list", data: items, first_id: items[0]?.id ?? "", last_id: items.at(-1)?.id ?? "", has_more: data.length > query.limit };
}

/** The stored message an item id belongs to (`<turn>_in<n>` for `<turn>_in<n>_<k>`). */
const messageIdOfItem = (itemId: string) => /^(.*_in\d+)_\d+$/.exec(itemId)?.[1] ?? itemId;

/** A message's items after the one named; an id none of them has is the caller's mistake. */
function itemsAfter(items: ResponseItem[], itemId: string, responseId: string): ResponseItem[] {
  const index = items.findIndex((item) => item.id === itemId);
  if (index < 0) throw invalidParameter("after", `No input item ${itemId} in ${responseId}.`);
  return items.slice(index + 1);
}
