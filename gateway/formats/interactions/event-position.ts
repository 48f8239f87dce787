// Where an event stands in an interaction's stream, which is its `event_id`.
// The id names a place in the answer, not a count of frames: `created`,
// `status`, then per step `<step>:start`, `<step>:<offset>` (the step's content
// delivered so far, in characters of text, signature or arguments, or bytes
// of media) and `<step>:stop`, then `completed` (or `error`). So a stream
// rebuilt from the stored interaction, whose deltas are cut differently from
// the live one's, resumes exactly after the last event a client saw
// (`last_event_id`), even in the middle of a step.
import { invalidParameter } from "../../../core/errors.ts";

export type EventPosition =
  | { kind: "created" | "status" | "completed" | "error" }
  | { kind: "step"; step: number; offset: number }
  /** Before any content of its step (its start) or after all of it (its stop). */
  | { kind: "stepStart" | "stepStop"; step: number };

/** The order of the stream's sections; a step's own order is its offset. */
const SECTION = { created: 0, status: 1, stepStart: 2, step: 2, stepStop: 2, completed: 3, error: 4 } as const;

export function eventIdOf(position: EventPosition): string {
  switch (position.kind) {
    case "step":
      return `${position.step}:${position.offset}`;
    case "stepStart":
      return `${position.step}:start`;
    case "stepStop":
      return `${position.step}:stop`;
    default:
      return position.kind;
  }
}

const STEP_EVENT = /^(\d{1,9}):(start|stop|\d{1,15})$/;

/** A `last_event_id` read back; one this gateway did not hand out is a 400. */
export function parseEventId(id: string): EventPosition {
  if (id === "created" || id === "status" || id === "completed" || id === "error") return { kind: id };
  const step = STEP_EVENT.exec(id);
  if (!step) throw invalidParameter("last_event_id", `last_event_id ${JSON.stringify(id.slice(0, 64))} is not an event id of this stream.`);
  const index = Number(step[1]);
  if (step[2] === "start") return { kind: "stepStart", step: index };
  if (step[2] === "stop") return { kind: "stepStop", step: index };
  return { kind: "step", step: index, offset: Number(step[2]) };
}

/** Orders two positions: negative when `a` comes first. */
export function comparePositions(a: EventPosition, b: EventPosition): number {
  const section = SECTION[a.kind] - SECTION[b.kind];
  if (section !== 0 || SECTION[a.kind] !== 2) return section;
  const { step: stepA } = a as { step: number };
  const { step: stepB } = b as { step: number };
  if (stepA !== stepB) return stepA - stepB;
  const [inA, inB] = [within(a), within(b)];
  return inA < inB ? -1 : inA > inB ? 1 : 0;
}

/** A step's own order: its start, its content by offset, its stop. */
const within = (position: EventPosition) => (position.kind === "stepStart" ? -1 : position.kind === "stepStop" ? Infinity : (position as { offset: number }).offset);
