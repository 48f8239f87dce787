// The event stream in OpenAI's Responses shape: `response.created` and
// `response.in_progress`, then per block its item's events (added, the
// part's or summary's events, deltas, done), then `response.completed` (or
// `response.incomplete`) with the whole response. Every event has the SSE
// `event:` name equal to its `type` and a `sequence_number` from 0. After
// commit a failure is an `error` event, then `response.failed`.
import { type Annotation, BlockType, type ResponseStart, type Usage } from "../../../gen/router/v1/inference_pb.js";
import { createBlockTracker, type TrackedBlock } from "../../block-tracker.ts";
import type { PublicError } from "../../errors/http-status.ts";
import type { SseEvent } from "../../sse.ts";
import type { StreamEncoder } from "../../write-event-stream.ts";
import { errorEventOf, responseErrorOf } from "./encode-error.ts";
import { encodeAnnotation, encodeContentPart, encodeOutputItem, encodeResponseObject, statusOf, unixSeconds, type ItemStatus, type ResponseEcho } from "./encode-response.ts";
import { declaredName } from "./namespaces.ts";

export function createResponseStreamEncoder(start: ResponseStart, body: ResponseEcho): StreamEncoder {
  const { namespaces } = body;
  // The completed response repeats every block, so stopped blocks are kept.
  const tracker = createBlockTracker({ keepStoppedBlocks: true });
  /** Each block's place in `output` (blocks with no item are not counted), by block index. */
  const outputIndex = new Map<number, number>();
  /** Reasoning blocks whose summary part was opened (at their first text). */
  const summaryOpened = new Set<number>();
  const loose: Annotation[] = [];
  /** The last block stopped, whose output_item.done is not sent yet. */
  let unfinished: TrackedBlock | undefined;
  let lastText: TrackedBlock | undefined;
  /** Annotations sent so far, by block index (each event's annotation_index). */
  const annotationCounts = new Map<number, number>();
  let items = 0;
  let sequence = 0;
  let usage: Usage | undefined;
  const frame = (type: string, fields: Record<string, unknown>): SseEvent => ({
    event: type,
    data: JSON.stringify({ type, ...fields, sequence_number: sequence++ }),
  });
  const response = (status: "in_progress" | "completed" | "incomplete" | "failed", extra: { finish?: Parameters<typeof statusOf>[0]; error?: { code: string; message: string } } = {}) =>
    encodeResponseObject({ start, body, status, blocks: status === "in_progress" ? [] : tracker.blocks, looseAnnotations: loose, usage, finishReason: extra.finish, error: extra.error, completedAt: unixSeconds() });

  const started = (block: TrackedBlock): SseEvent[] => {
    const item = encodeOutputItem(block, "in_progress", { namespaces });
    if (!item) return [];
    const index = items++;
    outputIndex.set(block.start.index, index);
    const frames = [frame("response.output_item.added", { output_index: index, item })];
    if (block.type === BlockType.TEXT || block.type === BlockType.REFUSAL) {
      frames.push(frame("response.content_part.added", { item_id: block.start.id, output_index: index, content_index: 0, part: encodeContentPart(block, [], true) }));
    }
    return frames;
  };

  const delta = (block: TrackedBlock, text: string): SseEvent[] => {
    const index = outputIndex.get(block.start.index);
    if (index === undefined || !text) return [];
    const at = { item_id: block.start.id, output_index: index };
    switch (block.type) {
      case BlockType.TEXT:
        return [frame("response.output_text.delta", { ...at, content_index: 0, delta: text, logprobs: [] })];
      case BlockType.REFUSAL:
        return [frame("response.refusal.delta", { ...at, content_index: 0, delta: text })];
      case BlockType.TOOL_CALL:
        return [frame("response.function_call_arguments.delta", { ...at, delta: text })];
      case BlockType.REASONING: {
        const frames: SseEvent[] = [];
        if (!summaryOpened.has(block.start.index)) {
          summaryOpened.add(block.start.index);
          frames.push(frame("response.reasoning_summary_part.added", { ...at, summary_index: 0, part: { type: "summary_text", text: "" } }));
        }
        frames.push(frame("response.reasoning_summary_text.delta", { ...at, summary_index: 0, delta: text }));
        return frames;
      }
      default:
        return [];
    }
  };

  const stopped = (block: TrackedBlock): SseEvent[] => {
    const index = outputIndex.get(block.start.index);
    if (index === undefined) return [];
    const at = { item_id: block.start.id, output_index: index };
    const frames: SseEvent[] = [];
    switch (block.type) {
      case BlockType.TEXT:
        frames.push(frame("response.output_text.done", { ...at, content_index: 0, text: block.text, logprobs: [] }));
        frames.push(frame("response.content_part.done", { ...at, content_index: 0, part: encodeContentPart(block) }));
        break;
      case BlockType.REFUSAL:
        frames.push(frame("response.refusal.done", { ...at, content_index: 0, refusal: block.text }));
        frames.push(frame("response.content_part.done", { ...at, content_index: 0, part: encodeContentPart(block) }));
        break;
      case BlockType.TOOL_CALL:
        frames.push(frame("response.function_call_arguments.done", { ...at, name: declaredName(block.start.toolName, namespaces).name, arguments: block.text }));
        break;
      case BlockType.REASONING:
        if (summaryOpened.has(block.start.index)) {
          const part = { type: "summary_text", text: block.text };
          frames.push(frame("response.reasoning_summary_text.done", { ...at, summary_index: 0, text: block.text }));
          frames.push(frame("response.reasoning_summary_part.done", { ...at, summary_index: 0, part }));
        }
        break;
    }
    // Its output_item.done waits for what comes next: if the answer ends cut, this was the item cut.
    unfinished = block;
    return frames;
  };

  /** The output_item.done of the last stopped block, with the status the rest of the answer decided. */
  const itemDone = (status: ItemStatus): SseEvent[] => {
    const block = unfinished;
    unfinished = undefined;
    if (!block) return [];
    return [frame("response.output_item.done", { output_index: outputIndex.get(block.start.index)!, item: encodeOutputItem(block, status, { signedBy: start.protocol, namespaces }) })];
  };

  /** An annotation as it arrives, on the text block it names (or the last text started). */
  const annotated = (annotation: Annotation): SseEvent[] => {
    const block = annotation.blockIndex === undefined ? lastText : tracker.blocks.find((b) => b.start.index === annotation.blockIndex);
    const index = block && outputIndex.get(block.start.index);
    if (!block || index === undefined || block.type !== BlockType.TEXT) return [];
    const annotationIndex = annotationCounts.get(block.start.index) ?? 0;
    annotationCounts.set(block.start.index, annotationIndex + 1);
    return [
      frame("response.output_text.annotation.added", {
        item_id: block.start.id,
        output_index: index,
        content_index: 0,
        annotation_index: annotationIndex,
        annotation: encodeAnnotation(annotation, block.text.length),
      }),
    ];
  };

  return {
    encode(event) {
      const { event: e } = event;
      switch (e.case) {
        case "start": {
          const inProgress = response("in_progress");
          return [frame("response.created", { response: inProgress }), frame("response.in_progress", { response: inProgress })];
        }
        case "blockStart": {
          const block = tracker.track(event)!;
          if (block.type === BlockType.TEXT) lastText = block;
          return [...itemDone("completed"), ...started(block)];
        }
        case "blockDelta": {
          const block = tracker.track(event);
          return block ? delta(block, e.value.text) : [];
        }
        case "blockStop": {
          const block = tracker.track(event);
          return block ? stopped(block) : [];
        }
        case "annotation":
          tracker.track(event);
          if (e.value.blockIndex === undefined) loose.push(e.value);
          return annotated(e.value);
        case "usage":
          usage = e.value;
          return [];
        case "finish": {
          const { status } = statusOf(e.value.reason);
          const type = status === "incomplete" ? "response.incomplete" : "response.completed";
          return [...itemDone(status === "incomplete" ? "incomplete" : "completed"), frame(type, { response: response(status, { finish: e.value.reason }) })];
        }
        default:
          return [];
      }
    },
    done: () => [],
    error(error: PublicError) {
      return [...itemDone("completed"), frame("error", errorEventOf(error)), frame("response.failed", { response: response("failed", { error: responseErrorOf(error) }) })];
    },
  };
}
