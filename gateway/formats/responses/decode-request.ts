// Decodes a Responses body into the core's GenerateRequest. `input` items map
// onto the hub's messages: user, system and developer messages as they are;
// an earlier answer's items (reasoning, assistant message, function calls)
// gathered into one assistant message, as the turn was; each
// function_call_output a tool message. `instructions` is a system message for
// this request only (the core never stores it). `previous_response_id` is the
// conversation reference; `store` defaults to true in the core for this format.
import { create, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import {
  GenerateRequestSchema,
  PublicFormat,
  Role,
  type ContentPartSchema,
  type GenerateRequest,
  type MessageSchema,
} from "../../../gen/router/v1/inference_pb.js";
import { mediaTypeOfDataUri } from "../../data-uri.ts";
import { responseFormatInit, toolChoiceInit } from "../../generate-request-parts.ts";
import { requestHead, type RequestContext, type RequestFormat } from "../../router-fields.ts";
import { validateBody } from "../../validation.ts";
import { fieldWarnings } from "./field-warnings.ts";
import { decodeEncryptedReasoning, echoOf, type ResponseEcho } from "./encode-response.ts";
import { storedEcho } from "./stored-response.ts";
import { flatName } from "./namespaces.ts";
import { responsesRequestSchema, type FunctionTool, type InputItem, type InputPart, type NamespaceTools, type ResponsesRequestBody } from "./schema.ts";

export type DecodeContext = RequestContext;

export interface DecodedResponsesRequest {
  request: GenerateRequest;
  stream: boolean;
  /** Run by the core in the background (the answer is the queued response). */
  background: boolean;
  /** The settings the answer echoes (and the namespaces its calls are split back by). */
  echo: ResponseEcho;
}

/** Responses keeps answers unless `store: false`, continues them by `previous_response_id` and wants full model ids. */
export const RESPONSES: RequestFormat = { format: PublicFormat.RESPONSES, policy: { referenceParam: "previous_response_id", storeByDefault: true } };

export function decodeResponsesRequest(body: unknown, context: DecodeContext): DecodedResponsesRequest {
  const parsed = validateBody(responsesRequestSchema, body);
  const echo = echoOf(parsed);
  const stream = parsed.stream ?? false;
  const messages: MessageInit[] = [];
  if (parsed.instructions !== undefined && parsed.instructions !== "") messages.push({ role: Role.SYSTEM, content: [textPart(parsed.instructions)] });
  messages.push(...toMessages(parsed.input));
  return {
    request: create(GenerateRequestSchema, {
      ...requestHead(RESPONSES, parsed, context),
      messages,
      sampling: { temperature: parsed.temperature, topP: parsed.top_p, maxTokens: parsed.max_output_tokens ?? parsed.max_tokens },
      tools: [
        ...(parsed.tools ?? []).map((tool) => toolInit(tool)),
        ...parsed.namespaces.flatMap((namespace) => namespace.functions.map((tool) => toolInit(tool, namespace))),
      ],
      toolChoice: toolChoiceInit(parsed.tool_choice),
      parallelToolCalls: parsed.parallel_tool_calls,
      responseFormat: responseFormatInit(parsed.text?.format),
      reasoning: parsed.reasoning?.effort === undefined ? undefined : { effort: routerEffort(parsed.reasoning.effort) },
      passthrough: endUserOf(parsed) === undefined ? undefined : { user: endUserOf(parsed)! },
      conversation: parsed.previous_response_id === undefined ? undefined : { previousId: parsed.previous_response_id },
      store: parsed.store,
      metadata: parsed.metadata,
      // What GET answers with besides the turn (kept only when the turn is).
      storedEcho: parsed.store === false ? "" : storedEcho(echo),
      warnings: fieldWarnings(parsed),
    }),
    stream,
    background: parsed.background ?? false,
    echo,
  };
}

/**
 * The end user the providers are told of (OpenAI `user`, Anthropic
 * `metadata.user_id`): `user`, or else `safety_identifier`, OpenAI's newer
 * name for the same stable per-user id.
 */
const endUserOf = (body: ResponsesRequestBody) => body.user ?? body.safety_identifier;

/** The router's levels stop at high: OpenAI's xhigh and max are served as it (with a warning, field-warnings.ts). */
const routerEffort = (effort: NonNullable<NonNullable<ResponsesRequestBody["reasoning"]>["effort"]>) => (effort === "xhigh" || effort === "max" ? "high" : effort);

type MessageInit = MessageInitShape<typeof MessageSchema>;

/** A function tool as the hub's; a namespaced one under its flat name, its namespace's description before its own. */
function toolInit(tool: FunctionTool, namespace?: NamespaceTools) {
  const description = [namespace?.description, tool.description].filter(Boolean).join("\n\n");
  return {
    name: namespace ? flatName(namespace.name, tool.name) : tool.name,
    description,
    parameters: tool.parameters as JsonObject | undefined,
    strict: tool.strict ?? false,
  };
}
type PartInit = MessageInitShape<typeof ContentPartSchema>;

const textPart = (text: string): PartInit => ({ part: { case: "text", value: { text } } });

const ROLES = { user: Role.USER, assistant: Role.ASSISTANT, system: Role.SYSTEM, developer: Role.DEVELOPER } as const;

/**
 * The input as messages. Consecutive items of an earlier answer (reasoning,
 * assistant messages, function calls) are one assistant message, in order,
 * so reasoning stays before the calls it led to (Anthropic checks that).
 */
function toMessages(input: ResponsesRequestBody["input"]): MessageInit[] {
  if (typeof input === "string") return [{ role: Role.USER, content: [textPart(input)] }];
  const messages: MessageInit[] = [];
  let answer: PartInit[] | undefined;
  const answerParts = () => {
    if (!answer) {
      answer = [];
      messages.push({ role: Role.ASSISTANT, content: answer });
    }
    return answer;
  };
  for (const item of input as InputItem[]) {
    switch (item.type) {
      case "message":
        if (item.role === "assistant") {
          answerParts().push(...toParts(item.content));
        } else {
          answer = undefined;
          messages.push({ role: ROLES[item.role], content: toParts(item.content) });
        }
        break;
      case "reasoning":
        answerParts().push(reasoningPart(item));
        break;
      case "function_call":
        answerParts().push({ part: { case: "toolCall", value: { id: item.call_id, name: item.namespace ? flatName(item.namespace, item.name) : item.name, arguments: item.arguments } } });
        break;
      case "function_call_output": {
        answer = undefined;
        const content = typeof item.output === "string" ? [textPart(item.output)] : item.output.map(toPart);
        messages.push({ role: Role.TOOL, content: [{ part: { case: "toolResult", value: { toolCallId: item.call_id, content } } }] });
        break;
      }
    }
  }
  return messages;
}

function reasoningPart(item: Extract<InputItem, { type: "reasoning" }>): PartInit {
  const text = (item.content?.length ? item.content : item.summary).map((part) => part.text).join("");
  const { signature, redactedData, signedBy } = item.encrypted_content ? decodeEncryptedReasoning(item.encrypted_content) : { signature: "", redactedData: "", signedBy: "" };
  if (redactedData) return { part: { case: "reasoning", value: { redactedData, signedBy } } };
  return { part: { case: "reasoning", value: { text, signature, signedBy } } };
}

function toParts(content: string | InputPart[]): PartInit[] {
  if (typeof content === "string") return [textPart(content)];
  return content.map(toPart);
}

function toPart(part: InputPart): PartInit {
  switch (part.type) {
    case "input_text":
    case "output_text":
      return textPart(part.text);
    case "refusal":
      return textPart(part.refusal);
    case "input_image":
      if (part.image_url === undefined) return { part: { case: "file", value: { fileId: part.file_id ?? "", filename: "", fileData: "", mimeType: "" } } };
      return { part: { case: "image", value: { url: part.image_url, detail: part.detail ?? "" } } };
    case "input_file": {
      const { filename = "", file_data: fileData = "", file_id: fileId = "", file_url: url = "" } = part;
      return { part: { case: "file", value: { filename, fileData, fileId, url, mimeType: mediaTypeOfDataUri(fileData) } } };
    }
  }
}
