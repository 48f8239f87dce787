import { describe, expect, it } from "vitest";
import { DAY_MS, utcDay } from "../../../core/accounts/windows.ts";

const isoDay = (now: number) => new Date(now).toISOString().slice(0, 10);

describe("utcDay (remembered per day)", () => {
  it("names the UTC day at its edges, before 1970 included", () => {
    const midnight = Date.UTC(2026, 10, 28);
    for (const now of [midnight - 1, midnight, midnight + DAY_MS - 1, Date.UTC(2028, 1, 29, 12), 0, -1, -DAY_MS]) {
      expect(utcDay(now), String(now)).toBe(isoDay(now));
    }
  });

  it("stays right across more days than it remembers, asked out of order", () => {
    const start = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 500; i++) {
      const now = start + ((i * 37) % 200) * DAY_MS + (i % 7) * 3_600_000;
      expect(utcDay(now)).toBe(isoDay(now));
    }
  });
});
