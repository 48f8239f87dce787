// Time arithmetic shared by both store implementations: one-minute rate-limit
// windows and UTC days of free quotas.

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/** Start of the UTC minute holding `now`. */
export function minuteStart(now: number): number {
  return now - (now % MINUTE_MS);
}

/** Day names already formatted, by the day's start (every request names today: formatting a date costs a microsecond). */
const dayNames = new Map<number, string>();

/** `YYYY-MM-DD` of the UTC day holding `now`: the free quota's counter name. */
export function utcDay(now: number): string {
  const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
  let name = dayNames.get(dayStart);
  if (name === undefined) {
    if (dayNames.size >= 64) dayNames.clear();
    name = new Date(dayStart).toISOString().slice(0, 10);
    dayNames.set(dayStart, name);
  }
  return name;
}

/** The next UTC midnight after `now`: when today's free quotas reset. */
export function nextUtcMidnight(now: number): number {
  return now - (now % DAY_MS) + DAY_MS;
}

/** The UTC periods a key's spending is also counted in (OpenRouter's usage_daily, _weekly, _monthly). */
export const SPENDING_PERIODS = ["day", "week", "month"] as const;
export type SpendingPeriod = (typeof SPENDING_PERIODS)[number];

/**
 * The period holding `now`, named by its first day (`day:2026-11-03`, `week:2026-11-02` for the
 * week from Monday, `month:2026-11`; names sort as time does), and when it ends.
 */
export function spendingPeriod(period: SpendingPeriod, now: number): { name: string; endsAt: number } {
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  const dayStart = now - (now % DAY_MS);
  switch (period) {
    case "day":
      return { name: `day:${utcDay(now)}`, endsAt: dayStart + DAY_MS };
    case "week": {
      const monday = dayStart - ((date.getUTCDay() + 6) % 7) * DAY_MS;
      return { name: `week:${utcDay(monday)}`, endsAt: monday + 7 * DAY_MS };
    }
    case "month":
      return { name: `month:${utcDay(now).slice(0, 7)}`, endsAt: Date.UTC(year, month + 1, 1) };
  }
}
