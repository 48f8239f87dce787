// Exact money arithmetic: amounts are bigint counts of 1e-15 USD ("femto-dollars"),
// enough for any per-token price in the catalogue without rounding.
const SCALE_DIGITS = 15;
const SCALE = 10n ** BigInt(SCALE_DIGITS);

export type Money = bigint;

/** Parses a non-negative decimal string ("0.0000025") exactly. */
export function parseMoney(decimal: string): Money {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(decimal);
  if (!match) throw new Error(`not a decimal amount: ${decimal}`);
  const [, whole, fraction = ""] = match;
  if (fraction.length > SCALE_DIGITS && /[1-9]/.test(fraction.slice(SCALE_DIGITS))) {
    throw new Error(`more than ${SCALE_DIGITS} decimal places: ${decimal}`);
  }
  return BigInt(whole) * SCALE + BigInt(fraction.slice(0, SCALE_DIGITS).padEnd(SCALE_DIGITS, "0"));
}

/** Formats an amount as the shortest exact decimal string ("0.0000125", "0"). */
export function formatMoney(amount: Money): string {
  const sign = amount < 0n ? "-" : "";
  const abs = amount < 0n ? -amount : amount;
  const whole = abs / SCALE;
  const fraction = (abs % SCALE).toString().padStart(SCALE_DIGITS, "0").replace(/0+$/, "");
  return sign + whole.toString() + (fraction ? "." + fraction : "");
}
