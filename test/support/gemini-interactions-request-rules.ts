// What the Gemini Interactions API (POST /v1beta/interactions) refuses of a
// request, for the fake upstream, in Google's error shape ({error: {code,
// message, status, details}}). Field names are those of the official SDK's
// CreateModelInteraction (@google/genai 3.3.0, dist/genai.d.ts), snake_case as
// the SDK sends them; the messages are Google's JSON parser's, as for
// generateContent (gemini-request-rules.ts). Written from the SDK's types, not
// recorded.
//   - 403 PERMISSION_DENIED without a key (`x-goog-api-key`).
//   - 400 INVALID_ARGUMENT for a body not declared `application/json`.
//   - 400 "Invalid JSON payload received. Unknown name ..." for a field the API
//     does not have, in the body, generation_config, a tool, a safety setting,
//     a step or a content (free-form JSON, function arguments and schemas, is
//     not checked), and an enum value it lacks (step and content types,
//     thinking_level, thinking_summaries, a string tool_choice).
//   - 400 without `model` or `input`, for a function_result whose call_id names
//     no earlier function_call, and a Gemini 3 function call of the current
//     turn (after the last user_input) without a signed thought before it.
import type { IncomingHttpHeaders } from "node:http";
import type { Refusal } from "./gemini-request-rules.ts";
import { declaresJson } from "./recording-server.ts";

type Json = Record<string, any>;

/** The fields of each object the check enters, by the object's name in errors. */
const FIELDS = {
  body: [
    "model", "input", "system_instruction", "tools", "generation_config", "response_format", "response_mime_type", "response_modalities", "safety_settings",
    "service_tier", "environment", "store", "stream", "background", "previous_interaction_id", "labels", "webhook_config", "cached_content", "continuation_token",
  ],
  generation_config: [
    "temperature", "top_p", "max_output_tokens", "seed", "stop_sequences", "thinking_level", "thinking_summaries", "tool_choice", "image_config", "speech_config",
    "transcription_config", "video_config",
  ],
  tools: ["type", "name", "description", "parameters"],
  safety_settings: ["type", "threshold", "method"],
};

const STEP_FIELDS: Record<string, string[]> = {
  user_input: ["type", "content"],
  model_output: ["type", "content", "error"],
  thought: ["type", "signature", "summary"],
  function_call: ["type", "id", "name", "arguments"],
  function_result: ["type", "call_id", "name", "result", "is_error"],
};

const CONTENT_FIELDS: Record<string, string[]> = {
  text: ["type", "text", "annotations"],
  image: ["type", "data", "mime_type", "uri", "resolution"],
  audio: ["type", "data", "mime_type", "uri", "channels", "sample_rate"],
  video: ["type", "data", "mime_type", "uri", "resolution"],
  document: ["type", "data", "mime_type", "uri"],
};

const THINKING_LEVELS = ["minimal", "low", "medium", "high"];
const THINKING_SUMMARIES = ["auto", "none"];
const TOOL_CHOICES = ["auto", "any", "none", "validated"];

const UNREGISTERED_CALLER =
  "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";

/** The first refusal the real API would give this request, or undefined. */
export function refusalOf(headers: IncomingHttpHeaders, body: Json): Refusal | undefined {
  const key = headers["x-goog-api-key"];
  if (typeof key !== "string" || key === "") return error(403, "PERMISSION_DENIED", UNREGISTERED_CALLER);
  if (!declaresJson(headers)) return error(400, "INVALID_ARGUMENT", `Invalid JSON payload received: the Content-Type is ${JSON.stringify(headers["content-type"] ?? "")}, not application/json.`);
  const syntax = syntaxError(body);
  if (syntax) return error(400, "INVALID_ARGUMENT", syntax.description, [{ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [syntax] }]);
  const message = requiredError(body) ?? pairingError(body) ?? signatureError(body);
  return message ? error(400, "INVALID_ARGUMENT", message) : undefined;
}

interface Violation {
  field: string;
  description: string;
}

const unknownName = (name: string, at: string): Violation => ({
  field: at,
  description: `Invalid JSON payload received. Unknown name "${name}"${at ? ` at '${at}'` : ""}: Cannot find field.`,
});
const invalidValue = (at: string, value: unknown): Violation => ({ field: at, description: `Invalid value at '${at}', ${JSON.stringify(value)}` });

function unknownField(object: unknown, fields: string[], at: string): Violation | undefined {
  if (object === null || typeof object !== "object" || Array.isArray(object)) return undefined;
  const name = Object.keys(object).find((field) => !fields.includes(field));
  return name === undefined ? undefined : unknownName(name, at);
}

function syntaxError(body: Json): Violation | undefined {
  const config = body.generation_config as Json | undefined;
  const found =
    unknownField(body, FIELDS.body, "") ??
    unknownField(config, FIELDS.generation_config, "generation_config") ??
    arrayError(body.tools, (tool, at) => (tool.type === "function" ? unknownField(tool, FIELDS.tools, at) : undefined), "tools") ??
    arrayError(body.safety_settings, (setting, at) => unknownField(setting, FIELDS.safety_settings, at), "safety_settings") ??
    arrayError(Array.isArray(body.input) ? body.input : [], stepError, "input");
  if (found) return found;
  if (config?.thinking_level !== undefined && !THINKING_LEVELS.includes(config.thinking_level)) return invalidValue("generation_config.thinking_level", config.thinking_level);
  if (config?.thinking_summaries !== undefined && !THINKING_SUMMARIES.includes(config.thinking_summaries)) return invalidValue("generation_config.thinking_summaries", config.thinking_summaries);
  if (typeof config?.tool_choice === "string" && !TOOL_CHOICES.includes(config.tool_choice)) return invalidValue("generation_config.tool_choice", config.tool_choice);
  return undefined;
}

function arrayError(items: unknown, check: (item: Json, at: string) => Violation | undefined, at: string): Violation | undefined {
  if (!Array.isArray(items)) return undefined;
  for (const [index, item] of items.entries()) {
    const found = check(item as Json, `${at}[${index}]`);
    if (found) return found;
  }
  return undefined;
}

/** A step (or content given where steps go) and the content it holds. */
function stepError(step: Json, at: string): Violation | undefined {
  const fields = STEP_FIELDS[step.type] ?? CONTENT_FIELDS[step.type];
  if (!fields) return invalidValue(`${at}.type`, step.type);
  const own = unknownField(step, fields, at);
  if (own) return own;
  const contents = [...(step.content ?? []), ...(step.summary ?? []), ...(Array.isArray(step.result) ? step.result : [])] as Json[];
  return arrayError(contents, contentError, `${at}.content`);
}

function contentError(content: Json, at: string): Violation | undefined {
  const fields = CONTENT_FIELDS[content.type];
  return fields ? unknownField(content, fields, at) : invalidValue(`${at}.type`, content.type);
}

function requiredError(body: Json): string | undefined {
  if (!body.model) return "* CreateInteractionRequest.model: model is required\n";
  const input = body.input;
  if (input === undefined || input === "" || (Array.isArray(input) && input.length === 0)) return "* CreateInteractionRequest.input: input is required\n";
  return undefined;
}

/** A function result answers a function call made before it, by its id. */
function pairingError(body: Json): string | undefined {
  if (!Array.isArray(body.input)) return undefined;
  const calls = new Set<string>();
  for (const step of body.input as Json[]) {
    if (step.type === "function_call") calls.add(step.id);
    if (step.type === "function_result" && !calls.has(step.call_id)) return `No function call found for the function result with call_id ${JSON.stringify(step.call_id)}.`;
  }
  return undefined;
}

/**
 * Gemini 3 insists on a signed thought before the first function call of each
 * model turn since the last user input (the "current turn"); Google's
 * documented stand-in for a missing signature is accepted in its place.
 */
function signatureError(body: Json): string | undefined {
  if (!/^gemini-3/.test(String(body.model)) || !Array.isArray(body.input)) return undefined;
  const steps = body.input as Json[];
  const start = steps.findLastIndex((step) => step.type === "user_input");
  let signed = false;
  for (const [index, step] of steps.entries()) {
    if (index <= start) continue;
    if (step.type === "function_result") signed = false;
    if (step.type === "thought" && typeof step.signature === "string" && step.signature !== "") signed = true;
    if (step.type === "function_call" && !signed) {
      return `Function call is missing a thought_signature. This is required for tools to work correctly. Additional data, function call \`default_api:${step.name}\`, step ${index}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`;
    }
  }
  return undefined;
}

function error(code: number, status: string, message: string, details?: unknown[]): Refusal {
  return { status: code, body: { error: { code, message, status, ...(details ? { details } : {}) } } };
}
