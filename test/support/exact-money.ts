// Exact money for account tests, independent of core/billing: a cost as the
// gateway writes it (a decimal literal in JSON, or the JS number a client
// parsed it into) becomes an exact count of femto-dollars (1e-15 USD), and a
// charge is that rounded up to the next nano-dollar (1e-9 USD).

const FEMTO_DIGITS = 15;
const FEMTO_PER_NANO = 1_000_000n;

/**
 * "0.0000141729", "1.45e-8" or the number 1.45e-8 as femto-dollars. A number is
 * read through its shortest round-trip form, which is the decimal the JSON
 * carried whenever that had at most 15 significant digits.
 */
export function femtosOf(value: string | number): bigint {
  const text = typeof value === "number" ? String(value) : value;
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(text);
  if (!match) throw new Error(`not a non-negative decimal: ${text}`);
  const [, whole, fraction = "", exponent = "0"] = match;
  const digits = BigInt(whole + fraction);
  const scale = Number(exponent) - fraction.length + FEMTO_DIGITS;
  if (scale >= 0) return digits * 10n ** BigInt(scale);
  const divisor = 10n ** BigInt(-scale);
  if (digits % divisor !== 0n) throw new Error(`finer than a femto-dollar: ${text}`);
  return digits / divisor;
}

/** What an account is charged for an exact cost: rounded up to the nano-dollar. */
export function nanosRoundedUp(femtos: bigint): bigint {
  return (femtos + FEMTO_PER_NANO - 1n) / FEMTO_PER_NANO;
}

/** A decimal USD string (as the admin service answers balances) as nano-dollars; exact or it throws. */
export function nanosOf(decimal: string): bigint {
  const femtos = femtosOf(decimal);
  if (femtos % FEMTO_PER_NANO !== 0n) throw new Error(`finer than a nano-dollar: ${decimal}`);
  return femtos / FEMTO_PER_NANO;
}

/** The raw decimal literal of `"cost":` in a JSON text (before any float parsing). */
export function rawCostOf(jsonText: string): string {
  const match = /"cost":\s*([0-9.eE+-]+)/.exec(jsonText);
  if (!match) throw new Error(`no cost in ${jsonText.slice(0, 300)}`);
  return match[1];
}
