// Event ids as places in the answer: every id the stream hands out reads back
// to the same place, places are ordered as the stream sends them, and an id
// this gateway did not hand out is a 400 naming last_event_id.
import { describe, expect, it } from "vitest";
import { comparePositions, eventIdOf, parseEventId, type EventPosition } from "../../../../gateway/formats/interactions/event-position.ts";

/** In the order a stream sends them. */
const ORDERED: EventPosition[] = [
  { kind: "created" },
  { kind: "status" },
  { kind: "stepStart", step: 0 },
  { kind: "step", step: 0, offset: 5 },
  { kind: "step", step: 0, offset: 12 },
  { kind: "stepStop", step: 0 },
  { kind: "stepStart", step: 1 },
  { kind: "step", step: 1, offset: 1 },
  { kind: "stepStop", step: 1 },
  { kind: "stepStart", step: 10 },
  { kind: "stepStop", step: 10 },
  { kind: "completed" },
  { kind: "error" },
];

describe("interaction event positions", () => {
  it("reads every id back to its place", () => {
    for (const position of ORDERED) expect(parseEventId(eventIdOf(position))).toEqual(position);
    expect(ORDERED.map(eventIdOf)).toEqual(["created", "status", "0:start", "0:5", "0:12", "0:stop", "1:start", "1:1", "1:stop", "10:start", "10:stop", "completed", "error"]);
  });

  it("orders places as the stream sends them (step 10 after step 1, not between 1 and 2 as text would sort)", () => {
    for (let i = 0; i < ORDERED.length; i++) {
      for (let j = 0; j < ORDERED.length; j++) expect(Math.sign(comparePositions(ORDERED[i], ORDERED[j])), `${eventIdOf(ORDERED[i])} vs ${eventIdOf(ORDERED[j])}`).toBe(Math.sign(i - j));
    }
  });

  it.each(["", "0", "7", "started", "1:", ":5", "1:2:3", "-1:start", "1:-5", "1:start ", "x:stop", "1234567890:start", "1:1234567890123456"])("refuses %j with a 400 on last_event_id", (id) => {
    expect(() => parseEventId(id)).toThrow(expect.objectContaining({ message: expect.stringContaining("not an event id") }));
    try {
      parseEventId(id);
    } catch (error) {
      expect(error).toMatchObject({ code: 3 });
    }
  });
});
