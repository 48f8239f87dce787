// The in-memory conversation store: the embedded default (one process). Turns
// expire at their `expiresAt` by the injected clock; expired turns are dropped
// when read and by a sweep that a save runs at most once a minute (no timer).
// Memory stays bounded: at most `maxTurns` turns and `maxBytes` of them
// (each turn counted as its binary size), the least recently saved or
// continued going first. Turns read from it are shared objects: callers must
// not change them.
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { TurnSchema, type Turn } from "../../gen/router/v1/conversations_pb.js";
import { withCancelRequested } from "./turn-status.ts";
import type { ConversationStore } from "./store.ts";

export const MEMORY_TURNS_KEPT = 100_000;
export const MEMORY_BYTES_KEPT = 256 * 1024 * 1024;
/** How often (by the injected clock) a save also drops every expired turn. */
export const MEMORY_SWEEP_MS = 60_000;

export interface MemoryConversationStoreOptions {
  now?: () => number;
  maxTurns?: number;
  /** The most bytes of turns kept, each counted as its binary (protobuf) size. */
  maxBytes?: number;
}

interface Entry {
  turn: Turn;
  bytes: number;
  cancelRequested: boolean;
}

export function createMemoryConversationStore(options: MemoryConversationStoreOptions = {}): ConversationStore {
  const now = options.now ?? Date.now;
  const maxTurns = options.maxTurns ?? MEMORY_TURNS_KEPT;
  const maxBytes = options.maxBytes ?? MEMORY_BYTES_KEPT;
  // Insertion order is saving (or continuing) order: the first entry is the oldest.
  const entries = new Map<string, Entry>();
  /** Turn ids by (organisation, the provider's own id), for the turns that have one. */
  const byUpstream = new Map<string, string>();
  let bytes = 0;
  let nextSweep = now() + MEMORY_SWEEP_MS;
  const keyOf = (organizationId: string, id: string) => `${organizationId}\u0000${id}`;
  const expired = (turn: Turn, at: number) => turn.expiresAt !== undefined && timestampMs(turn.expiresAt) <= at;

  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    bytes -= entry.bytes;
    if (entry.turn.upstreamId) byUpstream.delete(keyOf(entry.turn.organizationId, entry.turn.upstreamId));
  };

  const read = (organizationId: string, id: string): Turn | undefined => {
    const key = keyOf(organizationId, id);
    const turn = entries.get(key)?.turn;
    if (turn && expired(turn, now())) {
      remove(key);
      return undefined;
    }
    return turn;
  };

  const sweep = (at: number) => {
    for (const [key, entry] of entries) if (expired(entry.turn, at)) remove(key);
  };

  const save = (turn: Turn) => {
    const at = now();
    if (at >= nextSweep) {
      sweep(at);
      nextSweep = at + MEMORY_SWEEP_MS;
    }
    const key = keyOf(turn.organizationId, turn.id);
    const cancelRequested = entries.get(key)?.cancelRequested ?? false;
    remove(key);
    // A copy: the caller's messages may change after saving; what is returned is read-only.
    const binary = toBinary(TurnSchema, turn);
    const entry = { turn: fromBinary(TurnSchema, binary), bytes: binary.length, cancelRequested };
    entries.set(key, entry);
    bytes += entry.bytes;
    if (turn.upstreamId) byUpstream.set(keyOf(turn.organizationId, turn.upstreamId), turn.id);
    while (entries.size > maxTurns || (bytes > maxBytes && entries.size > 1)) remove(entries.keys().next().value!);
  };

  return {
    async save(turn) {
      save(turn);
    },
    async update(turn) {
      if (!read(turn.organizationId, turn.id)) return false;
      save(turn);
      return true;
    },
    async get(organizationId, id) {
      const turn = read(organizationId, id);
      if (!turn || !entries.get(keyOf(organizationId, id))!.cancelRequested) return turn;
      return withCancelRequested(turn);
    },
    async requestCancel(organizationId, id) {
      if (!read(organizationId, id)) return false;
      entries.get(keyOf(organizationId, id))!.cancelRequested = true;
      return true;
    },
    async chain(organizationId, id, limit, chainOptions) {
      const chain: Turn[] = [];
      for (let next = id; next !== "" && chain.length < limit; ) {
        const turn = read(organizationId, next);
        if (!turn) break;
        chain.push(turn);
        next = turn.previousId;
      }
      const expiresAt = chainOptions?.expiresAt;
      if (expiresAt !== undefined) {
        // Oldest first, so the conversation's turns stay in order as the newest entries.
        for (const turn of chain.toReversed()) {
          const key = keyOf(organizationId, turn.id);
          const entry = entries.get(key)!;
          turn.expiresAt = timestampFromMs(expiresAt);
          entries.delete(key);
          entries.set(key, entry);
        }
      }
      return chain;
    },
    async delete(organizationId, id) {
      const found = read(organizationId, id) !== undefined;
      remove(keyOf(organizationId, id));
      return found;
    },
    async idOfUpstream(organizationId, upstreamId) {
      const id = byUpstream.get(keyOf(organizationId, upstreamId));
      return id !== undefined && read(organizationId, id) ? id : undefined;
    },
    async close() {},
  };
}
