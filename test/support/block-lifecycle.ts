// The block lifecycle every provider translator owes the hub, checked on a
// whole list of translated events:
// - each block_start gets exactly one block_stop, after it;
// - a block_delta belongs to a block that is open;
// - an index is never reused, and blocks are numbered 0, 1, 2, ... as they start;
// - a text, reasoning or media block is never open beside another block (a new
//   kind of content closes it); only tool calls of an OpenAI-style stream may stay
//   open side by side, since that protocol lets a provider return to an earlier call;
// - no block is open when usage or finish arrives, and finish is the last event.
import { expect } from "vitest";
import { BlockType, type GenerateResponse } from "../../gen/router/v1/inference_pb.js";
import { viewOf, type EventView } from "./event-view.ts";

/** The hub's events, or their views (event-view.ts). */
export type CheckedEvents = ReadonlyArray<GenerateResponse | EventView>;

export interface BlockLifecycleOptions {
  /** OpenAI-style streams: tool-call blocks may be open beside each other (never beside text or reasoning). */
  toolCallsMayOverlap?: boolean;
  /** A cut answer that never reached its end: blocks may still be open after the last event. */
  truncated?: boolean;
}

/** The first broken rule, in words, or undefined when the events are well formed. */
export function blockLifecycleViolation(checked: CheckedEvents, options: BlockLifecycleOptions = {}): string | undefined {
  const events = checked.map((event) => ("$typeName" in event ? viewOf(event) : event));
  const open = new Map<number, BlockType>();
  const started = new Set<number>();
  let finished = false;
  for (const [position, event] of events.entries()) {
    const at = `event ${position} (${JSON.stringify(event, (_key, value: unknown) => (value instanceof Uint8Array ? `<${value.length} bytes>` : value))})`;
    if (finished) return `${at} comes after finish`;
    switch (event.type) {
      case "block_start": {
        if (open.has(event.index)) return `${at} starts block ${event.index}, which is still open`;
        if (started.has(event.index)) return `${at} reuses index ${event.index}`;
        if (event.index !== started.size) return `${at} starts block ${event.index}; the next index is ${started.size}`;
        const beside = [...open.entries()].find(([, type]) => !mayOverlap(type, event.blockType, options));
        if (beside) return `${at} starts a ${BlockType[event.blockType]} block while ${BlockType[beside[1]]} block ${beside[0]} is open`;
        open.set(event.index, event.blockType);
        started.add(event.index);
        break;
      }
      case "block_delta":
        if (!open.has(event.index)) return `${at} is a delta for block ${event.index}, which is not open`;
        break;
      case "block_stop":
        if (!open.has(event.index)) return `${at} stops block ${event.index}, which is not open`;
        open.delete(event.index);
        break;
      case "usage":
      case "finish":
        if (open.size > 0) return `${at} arrives while block(s) ${[...open.keys()].join(", ")} are open`;
        finished = event.type === "finish";
        break;
    }
  }
  if (!options.truncated && open.size > 0) return `block(s) ${[...open.keys()].join(", ")} never stopped`;
  return undefined;
}

export function expectWellFormedBlocks(events: CheckedEvents, options: BlockLifecycleOptions = {}): void {
  const violation = blockLifecycleViolation(events, options);
  // expect.fail prints the whole sentence (toBeUndefined would cut it short).
  if (violation !== undefined) expect.fail(`block lifecycle broken: ${violation}`);
}

function mayOverlap(openType: BlockType, startingType: BlockType, options: BlockLifecycleOptions): boolean {
  return options.toolCallsMayOverlap === true && openType === BlockType.TOOL_CALL && startingType === BlockType.TOOL_CALL;
}
