// The body of POST /api/v1/model/selection (and /v1/model/selection) as a
// SelectModelRequest: the prompt from chat `messages`, a `prompt` or a
// Responses-style `input` (exactly one), and the needs the request would have
// (tools, response_format, images, a context size). Only the text of the
// prompt is carried; its images, audio and files count as needs.
import { z } from "zod";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { invalidParameter } from "../../../core/errors.ts";
import { Role, type MessageSchema } from "../../../gen/router/v1/inference_pb.js";
import type { SelectModelRequestSchema } from "../../../gen/router/v1/selection_pb.js";
import { MAX_ITEMS } from "../../limits.ts";
import { between, int32, list, nonEmptyString } from "../../schema-parts.ts";
import { nullMeansAbsent, validateBody } from "../../validation.ts";

/** A content part of any format: its text, if it has one, and its type. */
const partSchema = z.looseObject({ type: z.string().optional(), text: z.string().optional() });
const contentSchema = z.union([z.string(), list(partSchema, MAX_ITEMS.contentBlocks)]).nullable().optional();
const messageSchema = z.looseObject({ role: z.string().optional(), content: contentSchema, type: z.string().optional(), text: z.string().optional() });

const bodySchema = nullMeansAbsent(
  z.looseObject({
    model: nonEmptyString,
    messages: list(messageSchema, MAX_ITEMS.messages).min(1).optional(),
    prompt: nonEmptyString.optional(),
    input: z.union([nonEmptyString, list(messageSchema, MAX_ITEMS.messages).min(1)]).optional(),
    tools: list(z.unknown(), MAX_ITEMS.tools).optional(),
    response_format: z.looseObject({ type: z.string() }).optional(),
    /** How many images the request carries beside the prompt (or true); images in `messages`/`input` count without it. */
    images: z.union([z.boolean(), int32().min(0)]).optional(),
    /** The prompt's size in tokens, when the caller knows it better than our estimate. */
    context_tokens: int32().min(1).optional(),
    max_tokens: int32().min(1).optional(),
    max_completion_tokens: int32().min(1).optional(),
    max_output_tokens: int32().min(1).optional(),
    selection: z.strictObject({ preference: between(0, 1).optional() }).optional(),
  }),
);

const ROLES: Record<string, Role> = { system: Role.SYSTEM, developer: Role.DEVELOPER, user: Role.USER, assistant: Role.ASSISTANT, tool: Role.TOOL };
const TEXT_PARTS = new Set(["text", "input_text", "output_text"]);
const MODALITY_OF_PART: Record<string, "image" | "audio" | "file"> = {
  image_url: "image",
  input_image: "image",
  image: "image",
  input_audio: "audio",
  audio: "audio",
  file: "file",
  input_file: "file",
  document: "file",
};

type Message = MessageInitShape<typeof MessageSchema>;

export function decodeSelectionRequest(body: unknown, apiKey: string): MessageInitShape<typeof SelectModelRequestSchema> {
  const request = validateBody(bodySchema, body);
  const given = (["messages", "prompt", "input"] as const).filter((field) => request[field] !== undefined);
  if (given.length !== 1) {
    throw invalidParameter(given[1] ?? "messages", given.length === 0 ? "Send the prompt as messages, prompt or input." : `Send the prompt once: ${given.join(" and ")} were both given.`);
  }
  const modalities = new Set<"image" | "audio" | "file">();
  if (request.images === true || (typeof request.images === "number" && request.images > 0)) modalities.add("image");
  const messages: Message[] =
    request.prompt !== undefined
      ? [textMessage(Role.USER, request.prompt)]
      : typeof request.input === "string"
        ? [textMessage(Role.USER, request.input)]
        : (request.messages ?? request.input!).map((item) => decodeMessage(item, modalities));
  const maxTokens = request.max_tokens ?? request.max_completion_tokens ?? request.max_output_tokens;
  const structured = request.response_format?.type === "json_object" || request.response_format?.type === "json_schema";
  return {
    caller: { apiKey },
    model: request.model,
    messages,
    needs: { tools: (request.tools?.length ?? 0) > 0, structuredOutput: structured, inputModalities: [...modalities], contextTokens: request.context_tokens, maxTokens },
    preference: request.selection?.preference,
  };
}

/** A chat message or a Responses input item: its text parts kept, its other parts counted as needs. */
function decodeMessage(item: z.infer<typeof messageSchema>, modalities: Set<"image" | "audio" | "file">): Message {
  const role = ROLES[item.role ?? "user"] ?? Role.USER;
  // A Responses input item may be a bare part ({type: "input_text", text}).
  const content = item.content ?? (item.type ? [item] : []);
  if (typeof content === "string") return textMessage(role, content);
  const texts: string[] = [];
  for (const part of content) {
    const modality = MODALITY_OF_PART[part.type ?? ""];
    if (modality) modalities.add(modality);
    else if ((part.type === undefined || TEXT_PARTS.has(part.type)) && part.text !== undefined) texts.push(part.text);
  }
  return textMessage(role, texts.join("\n"));
}

const textMessage = (role: Role, text: string): Message => ({ role, content: [{ part: { case: "text", value: { text } } }] });
