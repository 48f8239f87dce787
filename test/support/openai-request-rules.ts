// What the OpenAI chat-completions API refuses of a request, for the fake
// upstream: a missing or malformed bearer key (401), and any body that is not a
// CreateChatCompletionRequest of OpenAI's published OpenAPI document (400).
//
// Beyond the schema, tool messages must answer the tool calls of the assistant
// turn just before them, every one of them.
//
// The document does not forbid unknown fields, but the API does ("Unrecognized
// request argument supplied: x", and "Additional properties are not allowed" for
// a message's), so both levels are checked closed here. The fake also stands in
// for vendors that speak the protocol with extensions of their own; the ones our
// adapter sends (through its quirks and the catalogue's extension parameters) are
// allowed explicitly, and only these.
import type { IncomingHttpHeaders } from "node:http";
import type { ErrorObject } from "ajv/dist/2020.js";
import { compileAgainstSpec, specRef } from "./openai-schema.ts";
import { declaresJson } from "./recording-server.ts";

/** Request fields some vendors take beyond OpenAI's, as our adapter sends them. */
export const VENDOR_REQUEST_EXTENSIONS = {
  // Sampling extensions (vLLM, Together, Qwen...).
  top_k: { type: "integer", minimum: -1 },
  repetition_penalty: { type: "number", exclusiveMinimum: 0 },
  // quirks.reasoning_field "enable_thinking" (Qwen): a switch and an optional budget.
  enable_thinking: { type: "boolean" },
  thinking_budget: { type: "integer", minimum: 0 },
  // quirks.reasoning_field "thinking" (DeepSeek, Kimi, GLM).
  thinking: { type: "object", properties: { type: { enum: ["enabled", "disabled"] } }, required: ["type"], additionalProperties: false },
  // quirks.reasoning_field "reasoning" (OpenRouter-style gateways).
  reasoning: { type: "object", properties: { effort: { type: "string" } }, additionalProperties: false },
} as const;

/** Message fields some vendors take beyond OpenAI's. */
export const VENDOR_MESSAGE_EXTENSIONS = {
  // quirks.reasoning_passback "reasoning_content": DeepSeek and Kimi want an assistant turn's reasoning back.
  reasoning_content: { type: "string" },
} as const;

export interface Refusal {
  status: number;
  body: { error: { message: string; type: string; param: string | null; code: string | null } };
}

let validate: ReturnType<typeof compileAgainstSpec> | undefined;

/** Compiles the validator now (a few hundred ms), so a fake's start pays for it rather than its first request. */
export function requestValidator() {
  validate ??= compileAgainstSpec({
    ...specRef("CreateChatCompletionRequest"),
    properties: {
      ...VENDOR_REQUEST_EXTENSIONS,
      messages: { items: { ...specRef("ChatCompletionRequestMessage"), properties: VENDOR_MESSAGE_EXTENSIONS, unevaluatedProperties: false } },
    },
    unevaluatedProperties: false,
  });
  return validate;
}

/** The 401 of a request without a usable `Authorization: Bearer <key>`. */
export function authRefusal(headers: IncomingHttpHeaders): Refusal | undefined {
  const authorization = headers.authorization;
  if (authorization === undefined) {
    return refusal(401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", null, null);
  }
  if (!/^Bearer \S+$/.test(authorization)) {
    return refusal(401, "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.", null, "invalid_api_key");
  }
  return undefined;
}

/** The 404 of a method and path the API does not serve. */
export function invalidUrl(method: string, path: string): Refusal {
  return refusal(404, `Invalid URL (${method} ${new URL(path, "http://fake").pathname})`, null, null);
}

/** The 415 of a body not declared as JSON. */
export function contentTypeRefusal(headers: IncomingHttpHeaders): Refusal | undefined {
  if (declaresJson(headers)) return undefined;
  const given = headers["content-type"] ?? "";
  return refusal(415, `Unsupported content type: '${given}'. This API method only accepts 'application/json' requests, but you specified the header 'Content-Type: ${given}'. Please try again with a supported content type.`, null, "unsupported_content_type");
}

/** The 400 of a body the API would not take, naming the first offending field. */
export function bodyRefusal(body: unknown): Refusal | undefined {
  const check = requestValidator();
  if (check(body)) return toolTurnsRefusal((body as { messages: Message[] }).messages);
  // A message that fits no role's schema also leaves its fields "unevaluated": the
  // other errors say why, and an unknown field is reported only when it is the only fault.
  const errors = (check.errors ?? []).filter((error) => error.keyword !== "unevaluatedProperties");
  const unknown = check.errors?.find((error) => error.keyword === "unevaluatedProperties");
  if (errors.length === 0 && unknown) {
    const name = String(unknown.params.unevaluatedProperty);
    const message = unknown.instancePath === ""
      ? `Unrecognized request argument supplied: ${name}`
      : `Additional properties are not allowed ('${name}' was unexpected) - '${dotted(unknown.instancePath)}'`;
    return refusal(400, message, unknown.instancePath === "" ? name : dotted(unknown.instancePath), null);
  }
  const first = mostSpecific(errors);
  return refusal(400, `Invalid request: ${errors.map(describe).slice(0, 5).join("; ")}`, dotted(first.instancePath) || null, "invalid_value");
}

interface Message {
  role: string;
  tool_calls?: { id: string }[];
  tool_call_id?: string;
}

/**
 * An assistant turn's tool calls are answered by tool messages right after it,
 * one per call id, and a tool message answers a call of that turn.
 */
function toolTurnsRefusal(messages: Message[]): Refusal | undefined {
  let open: string[] = [];
  for (const [index, message] of messages.entries()) {
    if (message.role === "tool") {
      if (!open.includes(message.tool_call_id!)) {
        return refusal(400, "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${index}].role`, null);
      }
      open = open.filter((id) => id !== message.tool_call_id);
      continue;
    }
    if (open.length > 0) return unanswered(open, index - 1);
    open = (message.role === "assistant" ? (message.tool_calls ?? []) : []).map((call) => call.id);
  }
  // A conversation may end on the calls themselves (the model is asked to go on); it may not skip some of their answers.
  const lastAssistant = messages.findLastIndex((message) => message.role === "assistant");
  return open.length > 0 && lastAssistant < messages.length - 1 ? unanswered(open, lastAssistant) : undefined;
}

function unanswered(ids: string[], index: number): Refusal {
  return refusal(400, `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${ids.join(", ")}`, `messages.[${index}].role`, null);
}

/** The deepest error names the field best (a oneOf's own error only says no branch fitted). */
function mostSpecific(errors: ErrorObject[]): ErrorObject {
  return errors.reduce((best, error) => (error.instancePath.length > best.instancePath.length ? error : best));
}

function describe(error: ErrorObject): string {
  return `'${dotted(error.instancePath) || "body"}' ${error.message}${error.keyword === "enum" ? ` (${JSON.stringify(error.params.allowedValues)})` : ""}`;
}

/** `/messages/0/role` as OpenAI writes it: `messages.0.role`. */
function dotted(pointer: string): string {
  return pointer.split("/").slice(1).join(".");
}

function refusal(status: number, message: string, param: string | null, code: string | null): Refusal {
  return { status, body: { error: { message, type: "invalid_request_error", param, code } } };
}
