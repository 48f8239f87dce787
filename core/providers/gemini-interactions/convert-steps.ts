// GenerateRequest messages -> the Interactions `system_instruction` and
// `input` steps: the whole timeline, or (continuing an interaction the
// upstream keeps) only the request's own messages, the calls of the kept
// history naming its tool results.
//
// - SYSTEM and DEVELOPER text is the system instruction (a string: their texts
//   joined by blank lines); other content there is dropped, with a warning.
// - USER content is a `user_input` step (consecutive user messages one step);
//   a plain-text file is its text (Interactions documents are PDFs and office files).
// - An ASSISTANT message is its steps in order: `thought` (the signature, and
//   the summary with it), `model_output` (consecutive content one step) and
//   `function_call` (`id`, `name`, `arguments` as an object).
// - Each tool result is a `function_result` step: `call_id`, the call's `name`,
//   and `result` as text (or content, when it holds media).
// - A thought goes back only with a signature this protocol can take (one it
//   signed, or one nobody claims that has a signature's form): another
//   protocol's, or reasoning without a signature, is left out, with a warning.
//   An assistant turn whose function call has no signed thought before it gets
//   Google's documented stand-in first (see SIGNATURE_BYPASS), as Gemini 3
//   refuses a call of the current turn without one.
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { Role, type ContentPart, type FilePart, type ImagePart, type Message, type ToolCallPart, type ToolResultPart, type Warning } from "../../../gen/router/v1/inference_pb.js";
import { warning } from "../../warnings.ts";
import { fileContent, imageData } from "../data-uri.ts";
import { argumentsObject, isFetchableUri, isGeminiSignature, SIGNATURE_BYPASS } from "../gemini/convert-contents.ts";
import { audioMimeType, mimeTypeFromName } from "../gemini/media-types.ts";
import { notCarried } from "./not-carried.ts";

/** The protocol's own name, as ReasoningPart.signed_by stamps it. */
export const SIGNER = "gemini-interactions";

export interface InteractionsInput {
  systemInstruction?: string;
  steps: JsonObject[];
}

/**
 * What the conversion leaves out, noted where it is decided and said once each,
 * in this order. Each is made per request, so no two requests share (and can
 * change) one Warning object.
 */
const STEP_DROPS = {
  names: () => notCarried("messages", "message author names", true),
  systemMedia: () => warning("unsupported_parameter", "messages", "non-text content of system messages is not supported by the Gemini Interactions protocol and was left out"),
  unsignedReasoning: () =>
    warning("adjusted_parameter", "messages", "earlier reasoning without a Gemini Interactions signature (another provider's, or none) was left out: the model takes back only its own thoughts"),
  imageUrl: () => warning("unsupported_parameter", "messages", "images must be data URIs or http(s)/gs URLs for the Gemini Interactions protocol; others were left out"),
};
type StepDrop = keyof typeof STEP_DROPS;
type Drops = Set<StepDrop>;

/** `messages` as steps; `kept` is history the upstream already has: not sent, its calls still name the results that answer them. */
export function convertMessages(messages: Message[], warnings: Warning[], kept: Message[] = []): InteractionsInput {
  const drops: Drops = new Set();
  const system: string[] = [];
  const steps: JsonObject[] = [];
  const toolNames = new Map<string, string>();
  for (const message of kept) for (const part of message.content) if (part.part.case === "toolCall") toolNames.set(part.part.value.id, part.part.value.name);
  /** Content joins the step before it when that is a step of the same kind (consecutive user content, consecutive model output). */
  const appendContent = (type: "user_input" | "model_output", content: JsonObject[]) => {
    if (content.length === 0) return;
    const last = steps.at(-1);
    if (last?.type === type) (last.content as JsonObject[]).push(...content);
    else steps.push({ type, content });
  };
  for (const message of messages) {
    if (message.name) drops.add("names");
    switch (message.role) {
      case Role.SYSTEM:
      case Role.DEVELOPER:
        for (const part of message.content) {
          if (part.part.case !== "text") drops.add("systemMedia");
          else if (part.part.value.text) system.push(part.part.value.text);
        }
        break;
      case Role.ASSISTANT:
        for (const part of message.content) if (part.part.case === "toolCall") toolNames.set(part.part.value.id, part.part.value.name);
        for (const step of modelSteps(message.content, drops)) {
          if (step.type === "model_output") appendContent("model_output", step.content as JsonObject[]);
          else steps.push(step);
        }
        break;
      case Role.TOOL:
        for (const part of message.content) if (part.part.case === "toolResult") steps.push(functionResult(part.part.value, toolNames, drops));
        break;
      default:
        appendContent("user_input", message.content.flatMap((part) => contentOf(part, drops)));
    }
  }
  for (const [drop, dropWarning] of Object.entries(STEP_DROPS)) if (drops.has(drop as StepDrop)) warnings.push(dropWarning());
  return { ...(system.length > 0 ? { systemInstruction: system.join("\n\n") } : {}), steps };
}

/** An assistant message as steps, in its order; the first function call is preceded by a signed thought. */
function modelSteps(content: ContentPart[], drops: Drops): JsonObject[] {
  const steps: JsonObject[] = [];
  let signed = false;
  for (const part of content) {
    switch (part.part.case) {
      case "reasoning": {
        const { text, signature, signedBy } = part.part.value;
        if (!isOwnSignature(signature, signedBy)) {
          if (text || signature || part.part.value.redactedData) drops.add("unsignedReasoning");
          continue;
        }
        signed = true;
        steps.push({ type: "thought", signature, ...(text ? { summary: [{ type: "text", text }] } : {}) });
        continue;
      }
      case "toolCall":
        if (!signed) steps.push({ type: "thought", signature: SIGNATURE_BYPASS });
        signed = true;
        steps.push(functionCall(part.part.value));
        continue;
      default: {
        const output = contentOf(part, drops);
        if (output.length > 0) steps.push({ type: "model_output", content: output });
      }
    }
  }
  return steps;
}

/** A signature this protocol made, or one nobody claims that has the form of Google's (base64). */
function isOwnSignature(signature: string, signedBy: string): boolean {
  return signature !== "" && (signedBy === SIGNER || (signedBy === "" && isGeminiSignature(signature)));
}

/** The arguments as the format's own object (a Messages tool_use input), or from their text. */
function functionCall(call: ToolCallPart): JsonObject {
  return { type: "function_call", id: call.id, name: call.name, arguments: call.input ?? argumentsObject(call.arguments) };
}

/** A tool result: its text as the result, or its content as a list when it holds media; `name` from the call it answers. */
function functionResult(result: ToolResultPart, toolNames: Map<string, string>, drops: Drops): JsonObject {
  const hasMedia = result.content.some((part) => part.part.case !== "text");
  const text = result.content.map((part) => (part.part.case === "text" ? part.part.value.text : "")).join("");
  const name = toolNames.get(result.toolCallId);
  return {
    type: "function_result",
    call_id: result.toolCallId,
    ...(name !== undefined ? { name } : {}),
    result: hasMedia ? result.content.flatMap((part) => contentOf(part, drops)) : text,
    ...(result.isError ? { is_error: true } : {}),
  };
}

/** Text and media as Interactions content (Content: text, image, audio, video, document). */
function contentOf(part: ContentPart, drops: Drops): JsonObject[] {
  switch (part.part.case) {
    case "text":
      return part.part.value.text ? [{ type: "text", text: part.part.value.text }] : [];
    case "image":
      return imageContent(part.part.value, drops);
    case "audio":
      return [{ type: "audio", data: part.part.value.data, mime_type: audioMimeType(part.part.value.format) }];
    case "file":
      return fileParts(part.part.value);
    default:
      // Reasoning outside an assistant turn, and tool parts out of place, have no content form.
      return [];
  }
}

/** The image's `detail` is Interactions' `resolution` (`low`, `high`; `auto` is the default). */
const RESOLUTIONS: Record<string, string> = { low: "low", high: "high" };

/** Data (and data URIs) travel inline; web and Cloud Storage URLs are fetched by Google. */
function imageContent(image: ImagePart, drops: Drops): JsonObject[] {
  const resolution = RESOLUTIONS[image.detail];
  const extra: JsonObject = resolution ? { resolution } : {};
  const inline = imageData(image);
  if (inline) return [{ type: "image", data: inline.data, mime_type: inline.mimeType, ...extra }];
  if (!isFetchableUri(image.url)) {
    drops.add("imageUrl");
    return [];
  }
  const mimeType = mimeTypeFromName(image.url);
  return [{ type: "image", uri: image.url, ...(mimeType ? { mime_type: mimeType } : {}), ...extra }];
}

/** A file as the content its type names: plain text as text, an image, audio or video file as such, anything else a document. */
function fileParts(file: FilePart): JsonObject[] {
  // Bare base64 without a type: the chat formats' files are PDFs.
  const content = fileContent(file, file.mimeType || mimeTypeFromName(file.filename) || "application/pdf");
  if (content && "text" in content) return [{ type: "text", text: content.text }];
  if (content) return [{ type: contentTypeOf(content.mimeType), data: content.data, mime_type: content.mimeType }];
  // An uploaded file's id, or a web URL Google fetches.
  const uri = file.fileId || file.url;
  if (!uri) return [];
  const mimeType = file.mimeType || mimeTypeFromName(file.filename) || mimeTypeFromName(file.url);
  return [{ type: mimeType ? contentTypeOf(mimeType) : "document", uri, ...(mimeType ? { mime_type: mimeType } : {}) }];
}

function contentTypeOf(mimeType: string): JsonValue {
  const kind = mimeType.split("/")[0];
  return kind === "image" || kind === "audio" || kind === "video" ? kind : "document";
}
