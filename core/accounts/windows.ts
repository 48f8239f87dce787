// Time arithmetic shared by both store implementations: one-minute rate-limit
// windows and UTC days of free quotas.

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/** Start of the UTC minute holding `now`. */
export function minuteStart(now: number): number {
  return now - (now % MINUTE_MS);
}

/** `YYYY-MM-DD` of the UTC day holding `now`: the free quota's counter name. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** The next UTC midnight after `now`: when today's free quotas reset. */
export function nextUtcMidnight(now: number): number {
  return now - (now % DAY_MS) + DAY_MS;
}
