// How long to wait before retrying a store that is away: doubling from a
// first wait up to a cap, with jitter so that instances that met the same
// outage do not all retry in step. A success resets it.

export interface RetryBackoffOptions {
  /** The first wait; default 100 ms. */
  initialMs?: number;
  /** The longest wait; default 30 s. */
  maxMs?: number;
  /** A number in [0, 1) for the jitter (tests fix it); default Math.random. */
  random?: () => number;
}

export interface RetryBackoff {
  /** The wait before the next retry; each call doubles the next one, up to the cap. */
  next(): number;
  /** After a success: the next failure waits the first wait again. */
  reset(): void;
}

/** Doubling stops here: 2^20 times any sensible first wait is far past the cap. */
const MAX_DOUBLINGS = 20;

export function createRetryBackoff(options: RetryBackoffOptions = {}): RetryBackoff {
  const initialMs = options.initialMs ?? 100;
  const maxMs = options.maxMs ?? 30_000;
  const random = options.random ?? Math.random;
  let failures = 0;
  return {
    next() {
      const nominal = Math.min(maxMs, initialMs * 2 ** Math.min(failures, MAX_DOUBLINGS));
      failures++;
      // Between half and all of the nominal wait.
      return Math.round(nominal * (0.5 + random() / 2));
    },
    reset() {
      failures = 0;
    },
  };
}
