// Money as the account stores keep it: integer nano-dollars (1e-9 USD).
// Costs are exact femto-dollar amounts (core/billing/money.ts); a charge or a
// hold is rounded up to the next nano-dollar, so an account is never charged
// less than the exact cost, and at most 1e-9 USD more.
import { formatMoney, parseMoney, type Money } from "../billing/money.ts";

const FEMTO_PER_NANO = 1_000_000n;

export function nanosFromMoney(amount: Money): bigint {
  return (amount + FEMTO_PER_NANO - 1n) / FEMTO_PER_NANO;
}

export function moneyFromNanos(nanos: bigint): Money {
  return nanos * FEMTO_PER_NANO;
}

/** "12.5" -> 12_500_000_000n; refuses amounts finer than a nano-dollar. */
export function parseNanos(decimal: string): bigint {
  const amount = parseMoney(decimal);
  if (amount % FEMTO_PER_NANO !== 0n) throw new Error(`more than 9 decimal places: ${decimal}`);
  return amount / FEMTO_PER_NANO;
}

/** 12_500_000_000n -> "12.5". */
export function formatNanos(nanos: bigint): string {
  return formatMoney(moneyFromNanos(nanos));
}
