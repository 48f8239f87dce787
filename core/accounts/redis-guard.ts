// How a Redis-backed store (the account stores, the conversation store) runs a
// command: Redis being away (no connection, loading, busy, a read-only
// replica), or connected but frozen past the command timeout, becomes
// StoreUnavailableError (503, retried); an error reply about the command itself
// is a bug and passes through as it is (500, never retried).
//
// It lives beside store-errors.ts, whose error it throws: a folder of its own
// importing accounts/ would make an import cycle with accounts/.
import { ClientClosedError, ClientOfflineError, ErrorReply } from "redis";
import { StoreUnavailableError, UnreadableRecordError } from "./store-errors.ts";

/** Error replies that mean "not now" rather than "wrong command". */
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN|OOM)\b/;

/** Runs one store call's Redis work; `operation` names it in the error. */
export type RedisGuard = <T>(operation: string, run: () => Promise<T>) => Promise<T>;

/**
 * The guard of one store. `store` names it in error messages ("account store"
 * gives "Redis account store: settle failed").
 */
export function createRedisGuard(store: string, commandTimeoutMs: number): RedisGuard {
  return async function guarded<T>(operation: string, run: () => Promise<T>): Promise<T> {
    // A Redis that is connected but frozen never answers: give up after a while
    // (the command may still run later; settling an admission is idempotent, and
    // a lost admission is released: core/metering/meter.ts).
    const work = run();
    work.catch(() => {}); // its failure is read below, or no longer wanted
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreUnavailableError(`Redis ${store}: ${operation} got no answer in ${commandTimeoutMs} ms`)), commandTimeoutMs);
    });
    try {
      return await Promise.race([work, timeout]);
    } catch (error) {
      // A record Redis gave back but that cannot be decoded is no outage.
      if (error instanceof StoreUnavailableError || error instanceof UnreadableRecordError) throw error;
      if (error instanceof ErrorReply && !TRANSIENT_REPLY.test(error.message)) throw error;
      // Refused by the client before sending (not connected): Redis never saw the command.
      const neverSent = error instanceof ClientOfflineError || error instanceof ClientClosedError;
      throw new StoreUnavailableError(`Redis ${store}: ${operation} failed`, { cause: error, mayHaveRun: !neverSent });
    } finally {
      clearTimeout(timer);
    }
  };
}
