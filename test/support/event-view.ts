// The hub's events (router.v1.GenerateResponse) in a compact form for
// assertions: one `type` per event and only the fields that are set, so a
// fixture's expected events read like the stream they describe.
import type { AnnotationInit, BlockOpening, UsageInit } from "../../core/providers/block-writer.ts";
import { BlockType, type FinishReason, type GenerateResponse, type ModalityTokens } from "../../gen/router/v1/inference_pb.js";

export type EventView =
  | ({ type: "block_start"; index: number; blockType: BlockType } & BlockOpening)
  | { type: "block_delta"; index: number; text: string; signature?: string; redactedData?: string; data?: Uint8Array }
  | { type: "block_stop"; index: number }
  | { type: "usage"; usage: UsageView }
  | { type: "finish"; reason: FinishReason; rawReason: string; stopSequence?: string; upstreamId?: string }
  | { type: "annotation"; annotation: AnnotationView }
  | { type: "other"; event: GenerateResponse };

/** Usage as the BlockWriter is given it, with plain modality counts. */
export type UsageView = Omit<UsageInit, "inputByModality" | "outputByModality"> & {
  inputByModality?: Array<{ modality: ModalityTokens["modality"]; tokens: number }>;
  outputByModality?: Array<{ modality: ModalityTokens["modality"]; tokens: number }>;
};

export type AnnotationView = AnnotationInit;

/** Fields with a value; empty strings and undefined are left out. */
function setFields<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== "" && value !== undefined)) as Partial<T>;
}

/** The view of one event. `withRaw` keeps usage's raw provider object (left out by default). */
export function viewOf(response: GenerateResponse, options: { withRaw?: boolean } = {}): EventView {
  const { event } = response;
  switch (event.case) {
    case "blockStart": {
      const { index, type, id, toolCallId, toolName, mimeType, serverToolName, serverToolCallId } = event.value;
      return { type: "block_start", index, blockType: type, ...setFields({ id, toolCallId, toolName, mimeType, serverToolName, serverToolCallId }) };
    }
    case "blockDelta": {
      const { index, text, signature, redactedData, data } = event.value;
      return { type: "block_delta", index, text, ...setFields({ signature, redactedData }), ...(data.length > 0 ? { data } : {}) };
    }
    case "blockStop":
      return { type: "block_stop", index: event.value.index };
    case "usage": {
      const u = event.value;
      const modalities = (list: ModalityTokens[]) => (list.length > 0 ? list.map(({ modality, tokens }) => ({ modality, tokens })) : undefined);
      const usage: UsageView = {
        inputTokens: u.inputTokens,
        cachedInputTokens: u.cachedInputTokens,
        cacheWriteTokens: u.cacheWriteTokens,
        ...(u.cacheWrite1hTokens > 0 ? { cacheWrite1hTokens: u.cacheWrite1hTokens } : {}),
        outputTokens: u.outputTokens,
        reasoningTokens: u.reasoningTokens,
        ...setFields({ inputByModality: modalities(u.inputByModality), outputByModality: modalities(u.outputByModality) }),
        ...(options.withRaw && u.raw ? { raw: u.raw } : {}),
      };
      return { type: "usage", usage };
    }
    case "finish":
      return { type: "finish", reason: event.value.reason, rawReason: event.value.rawReason, ...setFields({ stopSequence: event.value.stopSequence, upstreamId: event.value.upstreamId }) };
    case "annotation": {
      const { url, title, startIndex, endIndex, content, blockIndex } = event.value;
      return { type: "annotation", annotation: { url, title, ...setFields({ startIndex, endIndex, content, blockIndex }) } };
    }
    default:
      return { type: "other", event: response };
  }
}

export const viewsOf = (events: GenerateResponse[]): EventView[] => events.map((event) => viewOf(event));

/**
 * Block events in a compact form: "start 0 TEXT", "start 1 TOOL_CALL get_weather",
 * "delta 0 Hi" (then " sig:<signature>", " redacted:<data>" when set; media
 * bytes as "<n bytes>"), "stop 0". Other events are left out.
 */
export function blockTrace(events: EventView[]): string[] {
  return events.flatMap((event) => {
    switch (event.type) {
      case "block_start":
        return [`start ${event.index} ${BlockType[event.blockType]}${event.toolName ? ` ${event.toolName}` : ""}`];
      case "block_delta":
        return [
          `delta ${event.index} ${event.data ? `<${event.data.length} bytes>` : event.text}${event.signature ? ` sig:${event.signature}` : ""}${event.redactedData ? ` redacted:${event.redactedData}` : ""}`,
        ];
      case "block_stop":
        return [`stop ${event.index}`];
      default:
        return [];
    }
  });
}
