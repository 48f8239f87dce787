// A stored turn (ConversationService) as the Responses API shows it: the
// Response object of GET, cancel and a background create, and the items of
// GET .../input_items (paged in input-items.ts). The turn's output is one
// assistant message whose parts are the answer's blocks, with each block's stream id and type beside it
// (Turn.output_blocks), so an item keeps the id it had in the answer.
import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { type InputItem, type OutputBlock, type Turn } from "../../../gen/router/v1/conversations_pb.js";
import { BlockDeltaSchema, BlockStartSchema, BlockStopSchema, BlockType, GenerateResponseSchema, Role, type ContentPart, type GenerateResponse, type Message, ResponseStartSchema } from "../../../gen/router/v1/inference_pb.js";
import { createBlockTracker, type TrackedBlock } from "../../block-tracker.ts";
import { statusWordOf } from "../../formats/shared/turn-status-word.ts";
import { responseErrorOf } from "./encode-error.ts";
import { encodeOutputItem, encodeResponseObject, unixSeconds, type ResponseEcho, type ResponseStatus } from "./encode-response.ts";

/** The settings a Response echoes, as kept with its turn (GenerateRequest.stored_echo). */
export function storedEcho(echo: ResponseEcho): string {
  return JSON.stringify(echo);
}

export function encodeStoredResponse(turn: Turn) {
  const echo = (turn.storedEcho ? JSON.parse(turn.storedEcho) : {}) as ResponseEcho;
  const bareModel = (turn.modelId || echo.model || "").replace(/^[^/]*\//, "");
  const start = create(ResponseStartSchema, {
    id: turn.id,
    modelId: turn.modelId,
    model: bareModel,
    provider: turn.provider,
    created: BigInt(unixSeconds(turn.createdAt ? timestampMs(turn.createdAt) : 0)),
    // Whose reasoning signatures the output's are (a turn is served by one provider).
    protocol: signerOf(turn.output[0]),
  });
  const status = statusWordOf(turn.status);
  return encodeResponseObject({
    start,
    body: echo,
    status,
    background: turn.background,
    blocks: blocksOf(turn.output[0], turn.outputBlocks, turn.id),
    usage: turn.usage,
    finishReason: status === "incomplete" ? turn.finishReason : undefined,
    error: status === "failed" ? responseErrorOf({ code: turn.error?.code ?? "", message: turn.error?.message || "The response failed." }) : undefined,
    completedAt: turn.completedAt ? unixSeconds(timestampMs(turn.completedAt)) : undefined,
  });
}

/** The protocol that signed a stored message's reasoning (ReasoningPart.signed_by), empty when unknown. */
function signerOf(message: Message | undefined): string {
  for (const part of message?.content ?? []) if (part.part.case === "reasoning" && part.part.value.signedBy) return part.part.value.signedBy;
  return "";
}

/** An item of a Response's output or input, as OpenAI's JSON shows it. */
export type ResponseItem = Record<string, unknown>;

/**
 * One stored input message as the item (or items) it was sent as, in the
 * list's order. An earlier answer sent back is one stored message but several
 * items (reasoning, text, calls): the first keeps the message's id, the next
 * ones `<id>_<k>`, and newest first they are listed newest first too.
 */
export function inputItemsOf(item: InputItem, newestFirst: boolean): ResponseItem[] {
  const items = itemsOfMessage(item);
  return newestFirst ? items.reverse() : items;
}

const itemId = (messageId: string, k: number) => (k === 0 ? messageId : `${messageId}_${k}`);

function itemsOfMessage({ id, message }: InputItem): ResponseItem[] {
  if (!message) return [];
  switch (message.role) {
    case Role.ASSISTANT:
      // An earlier answer sent back: its items as an answer's output shows them.
      return blocksOf(message, [], id).flatMap((block, k): ResponseItem[] => {
        const item = encodeOutputItem(block, "completed", { signedBy: signerOf(message) });
        return item ? [{ ...item, id: itemId(id, k) }] : [];
      });
    case Role.TOOL:
      return message.content.flatMap((part, k) =>
        part.part.case === "toolResult"
          ? [{ id: itemId(id, k), type: "function_call_output", call_id: part.part.value.toolCallId, output: textOf(part.part.value.content), status: "completed" }]
          : [],
      );
    default:
      return [{ id, type: "message", role: ROLE_NAMES[message.role] ?? "user", status: "completed", content: message.content.flatMap(inputPartOf) }];
  }
}

const ROLE_NAMES: Partial<Record<Role, string>> = { [Role.USER]: "user", [Role.SYSTEM]: "system", [Role.DEVELOPER]: "developer" };

const textOf = (parts: ContentPart[]) => parts.map((part) => (part.part.case === "text" ? part.part.value.text : "")).join("");

function inputPartOf({ part }: ContentPart): Record<string, unknown>[] {
  switch (part.case) {
    case "text":
      return [{ type: "input_text", text: part.value.text }];
    case "image":
      // An image given as data (a Messages request's) is shown as its data URI.
      const image = part.value;
      return [{ type: "input_image", image_url: image.data ? `data:${image.mimeType};base64,${image.data}` : image.url, detail: image.detail || "auto" }];
    case "file": {
      const { filename, fileData, fileId } = part.value;
      return [{ type: "input_file", ...(filename && { filename }), ...(fileData && { file_data: fileData }), ...(fileId && { file_id: fileId }) }];
    }
    default:
      return [];
  }
}

/**
 * The blocks of an assistant message, whole, as the encoders read them: its
 * parts replayed through the answer's own block tracker as one start, delta
 * and stop each. With the turn's OutputBlocks each block has its stream id,
 * its type (a refusal is kept as text) and its annotations; without, ids are
 * `<prefix>_<position>`.
 */
function blocksOf(message: Message | undefined, described: readonly OutputBlock[], idPrefix: string): TrackedBlock[] {
  if (!message) return [];
  const tracker = createBlockTracker({ keepStoppedBlocks: true });
  const replay = (event: GenerateResponse["event"]) => tracker.track(create(GenerateResponseSchema, { event }));
  message.content.forEach(({ part }, index) => {
    const fields = blockFieldsOf(part);
    if (!fields) return;
    const about = described[index];
    const type = about?.type === BlockType.REFUSAL ? BlockType.REFUSAL : fields.type;
    const id = about?.id || `${idPrefix}_${index}`;
    replay({ case: "blockStart", value: create(BlockStartSchema, { index, id, type, toolCallId: fields.toolCallId, toolName: fields.toolName }) });
    const block = replay({ case: "blockDelta", value: create(BlockDeltaSchema, { index, text: fields.text, signature: fields.signature, redactedData: fields.redactedData }) });
    if (block && about?.annotations.length) block.annotations = about.annotations;
    replay({ case: "blockStop", value: create(BlockStopSchema, { index }) });
  });
  return [...tracker.blocks];
}

/** What a stored part gives its block; undefined for a part an answer's output does not show. */
function blockFieldsOf(part: ContentPart["part"]): { type: BlockType; text: string; signature?: string; redactedData?: string; toolCallId?: string; toolName?: string } | undefined {
  switch (part.case) {
    case "text":
      return { type: BlockType.TEXT, text: part.value.text };
    case "reasoning":
      return { type: BlockType.REASONING, text: part.value.text, signature: part.value.signature, redactedData: part.value.redactedData };
    case "toolCall":
      return { type: BlockType.TOOL_CALL, text: part.value.arguments, toolCallId: part.value.id, toolName: part.value.name };
    default:
      return undefined;
  }
}
