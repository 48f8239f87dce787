// The Interaction resource (Google's Interactions API, with the spec's id,
// `object`, `outputs` and usage `cost`/`chat_id`): a finished answer's blocks,
// or a stored turn's messages, as the timeline's steps. Thoughts carry their
// signature (another protocol's prefixed, reasoning-signature.ts), so a client
// that sends the timeline back gets it to the provider that signed it.
import { Modality, type ContentPart, type ModalityTokens, type Usage } from "../../../gen/router/v1/inference_pb.js";
import { BlockType } from "../../../gen/router/v1/inference_pb.js";
import type { FoldedResponse } from "../../fold.ts";
import type { TrackedBlock } from "../../block-tracker.ts";
import { exactNumber } from "../../json.ts";
import { signatureOf, type Signer } from "../../formats/shared/reasoning-signature.ts";

/** One piece of a timeline, whichever side it comes from (an answer's blocks or stored messages). */
export type Piece =
  /** `signedBy`: a stored part's own signer (ReasoningPart.signed_by); an answer's thoughts are the serving protocol's. */
  | { kind: "thought"; text: string; signature: string; signedBy?: string }
  | { kind: "content"; content: OutputContent }
  | { kind: "call"; id: string; name: string; arguments: string }
  | { kind: "result"; callId: string; result: string; isError: boolean }
  | { kind: "user"; content: OutputContent[] };

export type OutputContent = { type: "text"; text: string } | { type: "image" | "video"; data?: string; uri?: string; mime_type?: string };
export type Step = Record<string, unknown> & { type: string };

/** What the resource says besides its steps and usage. */
export interface InteractionHead {
  id: string;
  model: string;
  created: Date;
  updated: Date;
  previousInteractionId: string | undefined;
  /** Google's status word; an answer that finished is `completed`. */
  status?: string;
  /** Why a failed interaction failed, as Google lists it. */
  errors?: { code: string; message: string }[];
}

export function encodeInteraction(head: InteractionHead, steps: Step[], usage: Usage | undefined, chatId: string) {
  return {
    id: head.id,
    object: "interaction",
    status: head.status ?? "completed",
    model: head.model,
    created: head.created.toISOString(),
    updated: head.updated.toISOString(),
    ...(head.previousInteractionId !== undefined && { previous_interaction_id: head.previousInteractionId }),
    ...(head.errors && { errors: head.errors }),
    steps,
    outputs: outputsOf(steps),
    usage: encodeUsage(usage, chatId),
  };
}

/** A finished answer as the resource. */
export function encodeFoldedInteraction(folded: FoldedResponse, previousInteractionId: string | undefined, now: Date) {
  const { start } = folded;
  const head = { id: start.id, model: start.model, created: new Date(Number(start.created) * 1000), updated: now, previousInteractionId };
  return encodeInteraction(head, stepsOf(folded.blocks.flatMap(pieceOfBlock), start), folded.usage, start.id);
}

/** The contents of the last model output step (the spec's convenience `outputs`). */
function outputsOf(steps: Step[]): unknown[] {
  for (let i = steps.length - 1; i >= 0; i--) if (steps[i].type === "model_output") return steps[i].content as unknown[];
  return [];
}

/** An answer's block as a piece of the timeline; a block the format has no step for (server tools, audio) is none. */
export function pieceOfBlock(block: TrackedBlock): Piece[] {
  switch (block.type) {
    case BlockType.TEXT:
    case BlockType.REFUSAL:
      return [{ kind: "content", content: { type: "text", text: block.text } }];
    case BlockType.REASONING:
      // Redacted reasoning has no summary to show; the stored conversation keeps it for the provider.
      return block.redactedData ? [] : [{ kind: "thought", text: block.text, signature: block.signature }];
    case BlockType.TOOL_CALL:
      return [{ kind: "call", id: block.start.toolCallId, name: block.start.toolName, arguments: block.text }];
    case BlockType.IMAGE:
    case BlockType.VIDEO:
      return [{ kind: "content", content: { type: block.type === BlockType.IMAGE ? "image" : "video", data: Buffer.concat(block.data).toString("base64"), mime_type: block.start.mimeType } }];
    default:
      return [];
  }
}

/** A stored message's part as a piece of the timeline (user content is gathered by the caller). */
export function pieceOfPart({ part }: ContentPart): Piece[] {
  switch (part.case) {
    case "text":
      return [{ kind: "content", content: { type: "text", text: part.value.text } }];
    case "image": {
      const image = part.value;
      return [{ kind: "content", content: image.data ? { type: "image", data: image.data, mime_type: image.mimeType } : { type: "image", uri: image.url } }];
    }
    case "reasoning":
      return part.value.redactedData ? [] : [{ kind: "thought", text: part.value.text, signature: part.value.signature, signedBy: part.value.signedBy }];
    case "toolCall":
      return [{ kind: "call", id: part.value.id, name: part.value.name, arguments: part.value.arguments }];
    case "toolResult": {
      const result = part.value.content.map((content) => (content.part.case === "text" ? content.part.value.text : "")).join("");
      return [{ kind: "result", callId: part.value.toolCallId, result, isError: part.value.isError }];
    }
    default:
      return [];
  }
}

/** The pieces as steps: consecutive model content is one model output step. */
export function stepsOf(pieces: Piece[], signer: Signer): Step[] {
  const steps: Step[] = [];
  let output: OutputContent[] | undefined;
  for (const piece of pieces) {
    if (piece.kind === "content") {
      if (!output) {
        output = [];
        steps.push({ type: "model_output", content: output });
      }
      output.push(piece.content);
      continue;
    }
    output = undefined;
    steps.push(stepOf(piece, signer));
  }
  return steps;
}

function stepOf(piece: Exclude<Piece, { kind: "content" }>, signer: Signer): Step {
  switch (piece.kind) {
    case "thought":
      return {
        type: "thought",
        ...(piece.signature && { signature: signatureOf(piece.signature, piece.signedBy === undefined ? signer : { protocol: piece.signedBy, nativeFormat: false }) }),
        ...(piece.text && { summary: [{ type: "text", text: piece.text }] }),
      };
    case "call":
      return { type: "function_call", id: piece.id, name: piece.name, arguments: argumentsOf(piece.arguments) };
    case "result":
      return { type: "function_result", call_id: piece.callId, result: piece.result, ...(piece.isError && { is_error: true }) };
    case "user":
      return { type: "user_input", content: piece.content };
  }
}

/** A call's arguments as the object Google's steps carry; a model's malformed JSON stays visible as `{_raw}` rather than fail the answer. */
export function argumentsOf(text: string): Record<string, unknown> {
  if (text === "") return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { _raw: text };
  } catch {
    return { _raw: text };
  }
}

/** Google's usage totals (output without thoughts, as Gemini counts it), by modality where the provider said, and the spec's cost and chat id. */
export function encodeUsage(usage: Usage | undefined, chatId: string) {
  const input = usage?.inputTokens ?? 0;
  const output = usage?.outputTokens ?? 0;
  const thought = usage?.reasoningTokens ?? 0;
  return {
    total_input_tokens: input,
    total_output_tokens: output - thought,
    total_thought_tokens: thought,
    total_cached_tokens: usage?.cachedInputTokens ?? 0,
    total_tool_use_tokens: 0,
    total_tokens: input + output,
    ...(usage?.inputByModality.length && { input_tokens_by_modality: usage.inputByModality.map(modalityTokens) }),
    ...(usage?.outputByModality.length && { output_tokens_by_modality: usage.outputByModality.map(modalityTokens) }),
    cost: exactNumber(usage?.cost || "0"),
    chat_id: chatId,
  };
}

const modalityTokens = ({ modality, tokens }: ModalityTokens) => ({ modality: (Modality[modality] ?? "UNSPECIFIED").toLowerCase(), tokens });
