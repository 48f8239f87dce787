// A store call against a frozen Redis, under a held clock: only setTimeout and
// clearTimeout are faked (sockets run for real), so the frozen server never
// answers and nothing but the store's command timeout can end the call.
import { expect, vi } from "vitest";

/**
 * Starts `call` under the held clock and checks it is still pending 1 ms
 * before `timeoutMs`; answers its outcome at `timeoutMs` exactly (the error it
 * failed with, or "answered"). Real timers are back when it returns.
 */
export async function outcomeAtTimeout(call: () => Promise<unknown>, timeoutMs: number): Promise<unknown> {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  try {
    let outcome: unknown = "pending";
    call().then(
      () => (outcome = "answered"),
      (error: unknown) => (outcome = error),
    );
    await vi.advanceTimersByTimeAsync(timeoutMs - 1);
    expect(outcome).toBe("pending");
    await vi.advanceTimersByTimeAsync(1);
    return outcome;
  } finally {
    vi.useRealTimers();
  }
}
