// GenerateRequest messages -> Gemini `systemInstruction` and `contents`.
//
// - SYSTEM and DEVELOPER text becomes the systemInstruction (Gemini has no
//   system turns); USER and TOOL become `user` contents, ASSISTANT `model` ones;
//   consecutive contents of one role are merged (parallel function responses
//   must share one content).
// - Tool results become `functionResponse {name, response}`: the name is the one
//   of the assistant tool call with the same id (Gemini pairs responses with calls
//   by name and order). Call and response ids are not sent: the Developer API has
//   refused `id` in requests ("Unknown name id at function_call").
// - Gemini takes no reasoning as input; a reasoning part's signature goes back
//   on the part it came with, which parse-stream emitted just after it.
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { Role, type ContentPart, type FilePart, type ImagePart, type Message, type ToolCallPart, type ToolResultPart, type Warning } from "../../../gen/router/v1/inference_pb.js";
import { warning } from "../../warnings.ts";
import { UpstreamError } from "../types.ts";
import { notCarried } from "./not-carried.ts";
import { fileBase64, imageData } from "../data-uri.ts";
import { audioMimeType, mimeTypeFromName } from "./media-types.ts";

/**
 * The documented stand-in for a missing signature ("skip_thought_signature_validator",
 * accepted by the Gemini API and Vertex AI): Gemini 3 refuses a history whose
 * function calls lack their signature, as one from another model or from before
 * thinking was on does.
 */
export const SIGNATURE_BYPASS = "skip_thought_signature_validator";

export interface GeminiContents {
  systemInstruction?: JsonObject;
  contents: JsonObject[];
}

type GeminiRole = "user" | "model";

/**
 * What the conversion leaves out, noted where it is decided and said once each,
 * in this order. Each is made per request, so no two requests share (and can
 * change) one Warning object.
 */
const CONTENT_DROPS = {
  names: () => notCarried("messages", "message author names", true),
  systemMedia: () => warning("unsupported_parameter", "messages", "non-text content of system messages is not supported by the Gemini protocol and was left out"),
  reasoningText: () => warning("adjusted_parameter", "messages", "Gemini takes no reasoning as input: earlier reasoning text was left out (its thought signatures were kept)"),
  imageDetail: () => notCarried("messages", "image detail"),
  imageUrl: () => warning("unsupported_parameter", "messages", "images must be data URIs or http(s)/gs URLs for the Gemini protocol; others were left out"),
};
type ContentDrop = keyof typeof CONTENT_DROPS;
type Drops = Set<ContentDrop>;

/** The contents, with a warning for each kind of content left out. */
export function convertMessages(messages: Message[], warnings: Warning[]): GeminiContents {
  const drops: Drops = new Set();
  const inputPart = (part: ContentPart) => inputPartOf(part, drops);
  const systemParts: JsonObject[] = [];
  const contents: { role: GeminiRole; parts: JsonObject[] }[] = [];
  const toolNames = new Map<string, string>();
  const append = (role: GeminiRole, parts: JsonObject[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const message of messages) {
    if (message.name) drops.add("names");
    switch (message.role) {
      case Role.SYSTEM:
      case Role.DEVELOPER:
        for (const part of message.content) {
          if (part.part.case !== "text") drops.add("systemMedia");
          else if (part.part.value.text) systemParts.push({ text: part.part.value.text });
        }
        break;
      case Role.ASSISTANT:
        for (const part of message.content) {
          if (part.part.case === "toolCall") toolNames.set(part.part.value.id, part.part.value.name);
        }
        append("model", modelParts(message.content, drops));
        break;
      case Role.TOOL:
        append("user", message.content.flatMap((part) => (part.part.case === "toolResult" ? toolResultParts(part.part.value, toolNames, drops) : [])));
        break;
      default:
        append("user", message.content.flatMap(inputPart));
    }
  }
  for (const [drop, dropWarning] of Object.entries(CONTENT_DROPS)) if (drops.has(drop as ContentDrop)) warnings.push(dropWarning());
  return {
    ...(systemParts.length > 0 ? { systemInstruction: { parts: systemParts } } : {}),
    contents: contents as unknown as JsonObject[],
  };
}

/** Text and media a user (or a tool result) sends. */
function inputPartOf(part: ContentPart, drops: Drops): JsonObject[] {
  switch (part.part.case) {
    case "text":
      return part.part.value.text ? [{ text: part.part.value.text }] : [];
    case "image":
      if (part.part.value.detail && part.part.value.detail !== "auto") drops.add("imageDetail");
      return imagePart(part.part.value, drops);
    case "audio":
      return [{ inlineData: { mimeType: audioMimeType(part.part.value.format), data: part.part.value.data } }];
    case "file":
      return filePart(part.part.value);
    case "reasoning":
      // Gemini takes no reasoning as input (an assistant turn keeps its signatures, see modelParts).
      if (part.part.value.text || part.part.value.redactedData) drops.add("reasoningText");
      return [];
    default:
      return [];
  }
}

/** Data URIs travel inline; web (and Cloud Storage) URLs are fetched by Google. */
function imagePart(image: ImagePart, drops: Drops): JsonObject[] {
  const inline = imageData(image);
  if (inline) return [{ inlineData: inline }];
  const { url } = image;
  if (!isFetchableUri(url)) {
    drops.add("imageUrl");
    return [];
  }
  const mimeType = mimeTypeFromName(url);
  return [{ fileData: { ...(mimeType ? { mimeType } : {}), fileUri: url } }];
}

/** A URL Google fetches itself: http(s) or Cloud Storage. */
export function isFetchableUri(url: string): boolean {
  return /^(https?|gs):\/\//i.test(url);
}

function filePart(file: FilePart): JsonObject[] {
  // Bare base64 without a type: the chat formats' files are PDFs.
  const inline = fileBase64(file, file.mimeType || mimeTypeFromName(file.filename) || "application/pdf");
  if (inline) return [{ inlineData: inline }];
  // An uploaded file's id, or a web URL Google fetches.
  const uri = file.fileId || file.url;
  if (uri) {
    const mimeType = file.mimeType || mimeTypeFromName(file.filename) || mimeTypeFromName(file.url);
    return [{ fileData: { ...(mimeType ? { mimeType } : {}), fileUri: uri } }];
  }
  return [];
}

/**
 * An assistant turn. Each reasoning signature is attached to the next part (or,
 * when none follows, as a trailing signature, to the previous one); the first
 * function call of the turn gets the bypass value when it has no signature.
 */
function modelParts(content: ContentPart[], drops: Drops): JsonObject[] {
  const parts: JsonObject[] = [];
  let pendingSignature: string | undefined;
  const signLast = (signature: string) => {
    const last = parts.at(-1);
    if (last && last.thoughtSignature === undefined) last.thoughtSignature = signature;
  };
  for (const part of content) {
    if (part.part.case === "reasoning") {
      if (part.part.value.text || part.part.value.redactedData) drops.add("reasoningText");
      const { signature, signedBy } = part.part.value;
      // Another protocol's signature (Anthropic's is base64 too) would be refused as corrupted.
      if ((signedBy && signedBy !== "gemini") || !isGeminiSignature(signature)) continue;
      if (pendingSignature) signLast(pendingSignature);
      pendingSignature = signature;
      continue;
    }
    const converted = part.part.case === "toolCall" ? [functionCallPart(part.part.value)] : inputPartOf(part, drops);
    if (converted.length === 0) continue;
    if (pendingSignature) converted[0].thoughtSignature = pendingSignature;
    pendingSignature = undefined;
    parts.push(...converted);
  }
  if (pendingSignature) signLast(pendingSignature);
  const firstCall = parts.find((part) => part.functionCall !== undefined);
  if (firstCall && firstCall.thoughtSignature === undefined) firstCall.thoughtSignature = SIGNATURE_BYPASS;
  return parts;
}

/** Signatures are base64 bytes to Gemini; another provider's opaque id would be refused. */
export function isGeminiSignature(signature: string): boolean {
  return /^[A-Za-z0-9+/_-]+={0,2}$/.test(signature);
}

/** The arguments as the format's own object (a Messages tool_use input), or from their text. */
function functionCallPart(call: ToolCallPart): JsonObject {
  return { functionCall: { name: call.name, args: call.input ?? argumentsObject(call.arguments) } };
}

/** `args` must be an object: the model's JSON when it is one, else the text kept under `arguments`. */
export function argumentsObject(text: string): JsonObject {
  if (!text.trim()) return {};
  const parsed = parseJson(text);
  return isObject(parsed) ? parsed : { arguments: text };
}

/**
 * A tool result: `functionResponse.response` must be an object. Google's convention
 * is `output` for the result and `error` for a failure; a result that is already a
 * JSON object is sent as it is. Media in the result follow as parts of the same turn.
 */
function toolResultParts(result: ToolResultPart, toolNames: Map<string, string>, drops: Drops): JsonObject[] {
  const name = toolNames.get(result.toolCallId);
  if (name === undefined) {
    throw new UpstreamError(`tool result ${result.toolCallId} answers no earlier tool call`, { retryable: false, reason: "invalid_request" });
  }
  const text = result.content.map((part) => (part.part.case === "text" ? part.part.value.text : "")).join("");
  const parsed = parseJson(text);
  let response: JsonObject;
  if (result.isError) response = { error: isObject(parsed) ? parsed : text };
  else response = isObject(parsed) ? parsed : { output: text };
  const media = result.content.filter((part) => part.part.case !== "text").flatMap((part) => inputPartOf(part, drops));
  return [{ functionResponse: { name, response } }, ...media];
}

function parseJson(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
