// A stored turn (ConversationService) as the Interaction resource of GET: the
// answer's steps, and with `include_input` the request's own input before
// them (user input, a timeline sent back, function results). The system
// instruction is not part of it: the client resends it every turn. A
// background interaction shows where it stands (queued, in progress, or how it
// ended).
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Turn } from "../../../gen/router/v1/conversations_pb.js";
import { Role, type Message } from "../../../gen/router/v1/inference_pb.js";
import { statusWordOf } from "../../formats/shared/turn-status-word.ts";
import { encodeInteraction, pieceOfPart, stepsOf, type InteractionHead, type OutputContent, type Piece } from "./encode-response.ts";

export const interactionStatusOf = (turn: Turn): string => statusWordOf(turn.status);

/** The stored turn's head: its ids, model, times and status, and why it failed. */
export function storedHead(turn: Turn): InteractionHead {
  const created = turn.createdAt ? timestampDate(turn.createdAt) : new Date(0);
  const status = interactionStatusOf(turn);
  return {
    id: turn.id,
    model: turn.modelId.replace(/^[^/]*\//, ""),
    created,
    updated: turn.completedAt ? timestampDate(turn.completedAt) : created,
    previousInteractionId: turn.previousId || undefined,
    status,
    ...(status === "failed" && { errors: [{ code: turn.error?.code || "failed", message: turn.error?.message || "The interaction failed." }] }),
  };
}

export function encodeStoredInteraction(turn: Turn, includeInput: boolean) {
  const head = storedHead(turn);
  const input = includeInput ? turn.input.flatMap(piecesOfInput) : [];
  const output = turn.output.flatMap((message) => message.content.flatMap(pieceOfPart));
  // Each stored thought names its own signer.
  return encodeInteraction(head, stepsOf([...input, ...output], NO_SIGNER), turn.usage, turn.id);
}

function piecesOfInput(message: Message): Piece[] {
  switch (message.role) {
    case Role.USER: {
      const content = message.content.flatMap(pieceOfPart).flatMap((piece): OutputContent[] => (piece.kind === "content" ? [piece.content] : []));
      return [{ kind: "user", content }];
    }
    case Role.ASSISTANT:
    case Role.TOOL:
      return message.content.flatMap(pieceOfPart);
    default:
      return [];
  }
}

const NO_SIGNER = { protocol: "", nativeFormat: false };
