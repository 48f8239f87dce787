// A guard against a hang, not a measure of speed: tests that must prove
// something does not wait (for Redis to return, for a timeout) make the thing
// it might wait for never happen, then await the work with this guard, so a
// hang fails with a sentence instead of the test runner's bare timeout.

/** Generous on purpose: a slow, shared machine must never trip it; only a hang should. */
export const HANG_GUARD_MS = 15_000;

/** `work`'s own outcome, or a failure naming `what` if it is still pending when `signal` aborts. */
export async function settlesBefore<T>(work: Promise<T>, what: string, signal: AbortSignal = AbortSignal.timeout(HANG_GUARD_MS)): Promise<T> {
  let onAbort: (() => void) | undefined;
  const hung = new Promise<never>((_, reject) => {
    onAbort = () => reject(new Error(`${what} never settled: it hangs instead of answering`));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([work, hung]);
  } finally {
    signal.removeEventListener("abort", onAbort!);
  }
}
