// The in-memory conversation store: the embedded default (one process). Turns
// expire at their `expiresAt` by the injected clock, and at most `maxTurns`
// are kept (the oldest saved go first), so memory stays bounded. Turns read
// from it are shared objects: callers must not change them.
import { clone } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { TurnSchema, type Turn } from "../../gen/router/v1/conversations_pb.js";
import type { ConversationStore } from "./store.ts";

export const MEMORY_TURNS_KEPT = 100_000;

export interface MemoryConversationStoreOptions {
  now?: () => number;
  maxTurns?: number;
}

export function createMemoryConversationStore(options: MemoryConversationStoreOptions = {}): ConversationStore {
  const now = options.now ?? Date.now;
  const maxTurns = options.maxTurns ?? MEMORY_TURNS_KEPT;
  // Insertion order is saving order: the first entry is the oldest.
  const turns = new Map<string, Turn>();
  const keyOf = (organizationId: string, id: string) => `${organizationId}\u0000${id}`;

  const read = (organizationId: string, id: string): Turn | undefined => {
    const key = keyOf(organizationId, id);
    const turn = turns.get(key);
    if (turn && turn.expiresAt && timestampMs(turn.expiresAt) <= now()) {
      turns.delete(key);
      return undefined;
    }
    return turn;
  };

  return {
    async save(turn) {
      const key = keyOf(turn.organizationId, turn.id);
      turns.delete(key);
      // A copy: the caller's messages may change after saving; what is returned is read-only.
      turns.set(key, clone(TurnSchema, turn));
      while (turns.size > maxTurns) turns.delete(turns.keys().next().value!);
    },
    async get(organizationId, id) {
      return read(organizationId, id);
    },
    async chain(organizationId, id, limit) {
      const chain: Turn[] = [];
      for (let next = id; next !== "" && chain.length < limit; ) {
        const turn = read(organizationId, next);
        if (!turn) break;
        chain.push(turn);
        next = turn.previousId;
      }
      return chain;
    },
    async delete(organizationId, id) {
      const found = read(organizationId, id) !== undefined;
      turns.delete(keyOf(organizationId, id));
      return found;
    },
    async close() {},
  };
}
