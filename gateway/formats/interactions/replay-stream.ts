// GET /v1/interactions/{id}?stream=true: the stored interaction as the event
// stream its create sent, rebuilt from the stored turn (each part of its
// answer one step, its content in one delta), so a client that lost a stream
// reads it again, or from `last_event_id` on (the encoder leaves out what it
// had: event ids are places in the answer, event-position.ts). A background
// interaction still running is followed: its status is repeated while the
// store is polled, then its steps come when it has finished.
import { setTimeout as sleep } from "node:timers/promises";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { TurnStatus, type Turn } from "../../../gen/router/v1/conversations_pb.js";
import { BlockType, GenerateResponseSchema, ResponseStartSchema, type ContentPart, type GenerateResponse, type ResponseStart } from "../../../gen/router/v1/inference_pb.js";
import type { SseEvent, SseWriter } from "../../sse.ts";
import { createInteractionStreamEncoder } from "./encode-stream.ts";
import { comparePositions, eventIdOf, type EventPosition } from "./event-position.ts";
import { interactionStatusOf, storedHead } from "./stored-interaction.ts";

export interface ReplayOptions {
  /** Reads the turn again (the store is the only place a background answer's progress shows). */
  reload: () => Promise<Turn>;
  resumeAfter: EventPosition | undefined;
  /** How long to wait between reads of a turn still running; each wait also repeats its status. */
  pollMs: number;
  /** Ends the wait when the client leaves. */
  signal: AbortSignal;
}

const isRunning = (turn: Turn) => turn.status === TurnStatus.QUEUED || turn.status === TurnStatus.IN_PROGRESS;

/** Writes the stored interaction's stream, waiting first for a running one to finish. */
export async function replayInteraction(first: Turn, sse: SseWriter, options: ReplayOptions): Promise<void> {
  const { resumeAfter } = options;
  let turn = first;
  // The opening (created, status) at once, as the create sent it.
  await sse.send(encoderFor(turn, resumeAfter).encode(create(GenerateResponseSchema, { event: { case: "start", value: startOf(turn) } })));
  while (isRunning(turn)) {
    await sleep(options.pollMs, undefined, { signal: options.signal });
    turn = await options.reload();
    if (isRunning(turn)) await sse.send(unlessSeen({ kind: "status" }, resumeAfter, { event_type: "interaction.status_update", interaction_id: turn.id, status: interactionStatusOf(turn) }));
  }
  await sse.send(finishedFrames(turn, resumeAfter));
}

/** The rest of a finished turn: its steps and its last event (the opening was sent). */
function finishedFrames(turn: Turn, resumeAfter: EventPosition | undefined): SseEvent[] {
  if (turn.status === TurnStatus.FAILED) {
    const error = { message: turn.error?.message || "The interaction failed.", type: "api_error", param: null, code: turn.error?.code || "failed" };
    return [...unlessSeen({ kind: "error" }, resumeAfter, { event_type: "error", error }), { data: "[DONE]" }];
  }
  const afterOpening: EventPosition = resumeAfter && comparePositions(resumeAfter, { kind: "status" }) > 0 ? resumeAfter : { kind: "status" };
  const encoder = encoderFor(turn, afterOpening);
  return [...eventsOf(turn).flatMap((event) => encoder.encode(event)), ...encoder.done()];
}

function encoderFor(turn: Turn, resumeAfter: EventPosition | undefined) {
  return createInteractionStreamEncoder(startOf(turn), { previousInteractionId: turn.previousId || undefined, now: () => new Date(), resumeAfter, storedHead: storedHead(turn) });
}

/** A frame the encoder does not make (a later status, a stored failure), left out when the client had it. */
function unlessSeen(position: EventPosition, resumeAfter: EventPosition | undefined, body: object): SseEvent[] {
  if (resumeAfter && comparePositions(position, resumeAfter) <= 0) return [];
  return [{ data: JSON.stringify({ ...body, event_id: eventIdOf(position) }) }];
}

/** The stream's start, as the core would have sent it. */
function startOf(turn: Turn): ResponseStart {
  // Thoughts are shown signed by who signed them, as GET shows them.
  const signedBy = turn.output.flatMap((message) => message.content).flatMap(({ part }) => (part.case === "reasoning" && part.value.signedBy ? [part.value.signedBy] : []))[0] ?? "";
  return create(ResponseStartSchema, {
    id: turn.id,
    modelId: turn.modelId,
    model: turn.modelId.replace(/^[^/]*\//, ""),
    provider: turn.provider,
    created: BigInt(Math.floor((turn.createdAt ? timestampMs(turn.createdAt) : 0) / 1000)),
    protocol: signedBy,
  });
}

/** The stored answer as the hub's events: each part a block with its content in one delta, then usage and finish. */
function eventsOf(turn: Turn): GenerateResponse[] {
  const events: MessageInitShape<typeof GenerateResponseSchema>["event"][] = [];
  turn.output.flatMap((message) => message.content).forEach((part, index) => {
    const block = blockOf(part);
    if (!block) return;
    events.push({ case: "blockStart", value: { index, type: block.type, toolCallId: block.toolCallId, toolName: block.toolName, mimeType: block.mimeType } });
    events.push({ case: "blockDelta", value: { index, text: block.text, signature: block.signature, data: block.data } });
    events.push({ case: "blockStop", value: { index } });
  });
  if (turn.usage) events.push({ case: "usage", value: turn.usage });
  events.push({ case: "finish", value: { reason: turn.finishReason } });
  return events.map((event) => create(GenerateResponseSchema, { event }));
}

interface StoredBlock {
  type: BlockType;
  text?: string;
  signature?: string;
  data?: Uint8Array;
  toolCallId?: string;
  toolName?: string;
  mimeType?: string;
}

/** A stored part as the block it was streamed as; a part the stream shows no step for is none. */
function blockOf({ part }: ContentPart): StoredBlock | undefined {
  switch (part.case) {
    case "text":
      return { type: BlockType.TEXT, text: part.value.text };
    case "reasoning":
      return part.value.redactedData ? undefined : { type: BlockType.REASONING, text: part.value.text, signature: part.value.signature };
    case "toolCall":
      return { type: BlockType.TOOL_CALL, text: part.value.arguments, toolCallId: part.value.id, toolName: part.value.name };
    case "image":
      return part.value.data ? { type: BlockType.IMAGE, data: Buffer.from(part.value.data, "base64"), mimeType: part.value.mimeType } : undefined;
    default:
      return undefined;
  }
}
