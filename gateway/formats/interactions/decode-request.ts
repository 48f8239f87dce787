// Decodes an Interactions body into the core's GenerateRequest. `input` maps
// onto the hub's messages: a string or content is one user message; a
// timeline's user input (or `user` turn) a user message; consecutive steps of
// an earlier answer (thoughts, model output, function calls, `model` turns)
// one assistant message, in order; each function result a tool message.
// `system_instruction` is a system message for this request only (the core
// never stores it: the client resends it every turn). `previous_interaction_id`
// is the conversation reference, `store` defaults to true and a bare model
// name resolves in the catalogue: the format's policy, stated here as data.
// `safety_settings`, `service_tier` and `environment` are Google's settings:
// they travel as provider options to the Gemini protocols, which know them
// (generateContent only has safety settings, in its own spelling).
import { create, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import {
  GenerateRequestSchema,
  PublicFormat,
  ResponseFormat_Type,
  Role,
  type ContentPartSchema,
  type GenerateRequest,
  type MessageSchema,
} from "../../../gen/router/v1/inference_pb.js";
import { toolChoiceInit } from "../../generate-request-parts.ts";
import { requestHead, type RequestFormat } from "../../router-fields.ts";
import { validateBody } from "../../validation.ts";
import { signerOfSignature } from "../../formats/shared/reasoning-signature.ts";
import { interactionsRequestSchema, type Content, type InputEntry, type InteractionsRequestBody } from "./schema.ts";

export interface DecodeContext {
  apiKey: string;
  requestId: string;
}

export interface DecodedInteractionsRequest {
  request: GenerateRequest;
  stream: boolean;
  /** Run by the core in the background (the answer is the interaction in progress). */
  background: boolean;
  /** `previous_interaction_id` as sent, which the answer echoes. */
  previousInteractionId: string | undefined;
}

/** Interactions keeps answers unless `store: false`, continues them by `previous_interaction_id` and takes bare model names. */
export const INTERACTIONS: RequestFormat = {
  format: PublicFormat.INTERACTIONS,
  policy: { referenceParam: "previous_interaction_id", storeByDefault: true, bareModelNames: true },
};

export function decodeInteractionsRequest(body: unknown, context: DecodeContext): DecodedInteractionsRequest {
  const parsed = validateBody(interactionsRequestSchema, body);
  const config = parsed.generation_config ?? {};
  const messages: MessageInit[] = [];
  if (parsed.system_instruction) messages.push({ role: Role.SYSTEM, content: [textPart(parsed.system_instruction)] });
  messages.push(...toMessages(parsed.input));
  return {
    request: create(GenerateRequestSchema, {
      ...requestHead(INTERACTIONS, parsed, context),
      messages,
      sampling: { temperature: config.temperature, topP: config.top_p, maxTokens: config.max_output_tokens, seed: config.seed === undefined ? undefined : BigInt(config.seed), stop: config.stop_sequences ?? [] },
      tools: (parsed.tools ?? []).map((tool) => ({ name: tool.name, description: tool.description ?? "", parameters: tool.parameters as JsonObject | undefined })),
      toolChoice: toolChoiceInit(config.tool_choice === "any" ? "required" : config.tool_choice),
      responseFormat: responseFormatInit(parsed),
      reasoning: config.thinking_level === undefined ? undefined : { effort: config.thinking_level },
      conversation: parsed.previous_interaction_id === undefined ? undefined : { previousId: parsed.previous_interaction_id },
      store: parsed.store,
      providerOptions: providerOptionsOf(parsed),
    }),
    stream: parsed.stream ?? false,
    background: parsed.background ?? false,
    previousInteractionId: parsed.previous_interaction_id,
  };
}

/**
 * `response_format` text: JSON with a schema, JSON, or plain; `response_mime_type` is its older spelling.
 * A schema is strict: Gemini constrains its output to it, so every upstream is asked to.
 */
function responseFormatInit({ response_format: format, response_mime_type: mimeType }: InteractionsRequestBody) {
  const text = Array.isArray(format) ? format[0] : format;
  if (text?.schema) return { type: ResponseFormat_Type.JSON_SCHEMA, name: "response", schema: text.schema as JsonObject, strict: true };
  if ((text?.mime_type ?? mimeType) === "application/json") return { type: ResponseFormat_Type.JSON_OBJECT };
  return text || mimeType ? { type: ResponseFormat_Type.TEXT } : undefined;
}

/** Google's own settings, for the protocols that speak Google's APIs: the Interactions API as sent, generateContent in its spelling. */
function providerOptionsOf({ safety_settings: safety, service_tier: serviceTier, environment }: InteractionsRequestBody): { [protocol: string]: JsonObject } {
  const options: { [protocol: string]: JsonObject } = {};
  const interactions: JsonObject = {
    ...(safety && { safety_settings: safety }),
    ...(serviceTier && { service_tier: serviceTier }),
    ...(environment !== undefined && { environment: environment as JsonObject | string }),
  };
  if (Object.keys(interactions).length > 0) options["gemini-interactions"] = interactions;
  if (safety) options.gemini = { safety_settings: safety.map(generateContentSafetySetting) };
  return options;
}

/** `{type: "hate_speech", threshold: "block_none"}` as generateContent spells it: `{category: "HARM_CATEGORY_HATE_SPEECH", threshold: "BLOCK_NONE"}`. */
function generateContentSafetySetting(setting: { type: string; threshold: string; method?: string }): JsonObject {
  return {
    category: `HARM_CATEGORY_${setting.type.toUpperCase()}`,
    threshold: setting.threshold.toUpperCase(),
    ...(setting.method && { method: setting.method.toUpperCase() }),
  };
}

type MessageInit = MessageInitShape<typeof MessageSchema>;
type PartInit = MessageInitShape<typeof ContentPartSchema>;

const textPart = (text: string): PartInit => ({ part: { case: "text", value: { text } } });

function contentPart(content: Content): PartInit {
  if (content.type === "text") return textPart(content.text);
  if (content.data !== undefined) return { part: { case: "image", value: { data: content.data, mimeType: content.mime_type ?? "" } } };
  return { part: { case: "image", value: { url: content.uri ?? "" } } };
}

function toMessages(input: InteractionsRequestBody["input"]): MessageInit[] {
  if (typeof input === "string") return [{ role: Role.USER, content: [textPart(input)] }];
  if (!Array.isArray(input)) return [{ role: Role.USER, content: [contentPart(input)] }];
  const messages: MessageInit[] = [];
  /** The message the next entry of the same role joins (consecutive content is one message). */
  let open: { role: Role; content: PartInit[] } | undefined;
  const partsOf = (role: Role) => {
    if (open?.role !== role) {
      open = { role, content: [] };
      messages.push(open);
    }
    return open.content;
  };
  for (const entry of input as InputEntry[]) {
    if ("role" in entry) {
      const content = typeof entry.content === "string" ? [textPart(entry.content)] : entry.content.map(contentPart);
      partsOf(entry.role === "model" ? Role.ASSISTANT : Role.USER).push(...content);
      continue;
    }
    switch (entry.type) {
      case "text":
      case "image":
      case "user_input":
        partsOf(Role.USER).push(...(entry.type === "user_input" ? (entry.content ?? []).map(contentPart) : [contentPart(entry)]));
        break;
      case "model_output":
        partsOf(Role.ASSISTANT).push(...(entry.content ?? []).map(contentPart));
        break;
      case "thought": {
        const text = (entry.summary ?? []).map((content) => (content.type === "text" ? content.text : "")).join("");
        const { signedBy, signature } = signerOfSignature(entry.signature ?? "");
        partsOf(Role.ASSISTANT).push({ part: { case: "reasoning", value: { text, signature, signedBy } } });
        break;
      }
      case "function_call":
        partsOf(Role.ASSISTANT).push({ part: { case: "toolCall", value: { id: entry.id, name: entry.name, arguments: JSON.stringify(entry.arguments) } } });
        break;
      case "function_result": {
        const result = entry.result;
        const content = typeof result === "string" ? [textPart(result)] : Array.isArray(result) ? result.map(contentPart) : [textPart(JSON.stringify(result))];
        // Each result its own tool message, as the hub's other formats send them.
        open = undefined;
        messages.push({ role: Role.TOOL, content: [{ part: { case: "toolResult", value: { toolCallId: entry.call_id, content, isError: entry.is_error ?? false } } }] });
        break;
      }
    }
  }
  return messages;
}
