// What the Gemini API (generativelanguage v1beta, generateContent) refuses of a
// request, for the fake upstream, in Google's error shape
// ({error: {code, message, status, details}}). Field names are those the official
// SDK (googleapis/js-genai, its *ToMldev converters) sends to the Developer API;
// like Google's JSON parser, each may be written in camelCase or snake_case.
//   - 403 PERMISSION_DENIED without a key (`x-goog-api-key` header or `key` query).
//   - 400 INVALID_ARGUMENT for a body not declared `application/json`.
//   - 400 "Invalid JSON payload received. Unknown name ..." for a field the API
//     does not have, anywhere in the known structure (free-form JSON such as
//     function args or a JSON Schema is not checked), and an enum value it lacks.
//   - 400 for contents roles other than user/model (the system prompt is the
//     separate systemInstruction), empty contents or parts, a part with no data or
//     two, a function declaration without a name, function responses that do not
//     match the calls of the turn before in number, a function call turn that does
//     not follow a user turn, and Gemini 3 function calls of the current turn
//     without their thoughtSignature.
//   - Thinking: thinkingBudget and thinkingLevel together, thinkingLevel before
//     Gemini 3, and a budget outside the model's documented range.
import type { IncomingHttpHeaders } from "node:http";
import { declaresJson } from "./recording-server.ts";

export interface Refusal {
  status: number;
  body: { error: { code: number; message: string; status: string; details?: unknown[] } };
}

type Json = Record<string, any>;

/** A field's type: a nested message, a repeated one, an enum, or a value the check does not enter. */
type Field = Message | Repeated | Enum | "value";
interface Message {
  [name: string]: Field;
}
interface Repeated {
  repeated: Message;
}
interface Enum {
  enum: string[];
  /** The enum's name in Google's error, e.g. ThinkingConfig.ThinkingLevel. */
  name: string;
  repeated?: boolean;
}
const isEnum = (field: Field): field is Enum => Array.isArray((field as Enum).enum);
const isRepeated = (field: Field): field is Repeated => typeof (field as Repeated).repeated === "object";

const BLOB: Message = { mimeType: "value", data: "value" };
const PART: Message = {
  text: "value",
  inlineData: BLOB,
  fileData: { mimeType: "value", fileUri: "value" },
  functionCall: { id: "value", name: "value", args: "value" },
  functionResponse: { id: "value", name: "value", response: "value", parts: "value", willContinue: "value", scheduling: "value" },
  executableCode: { language: "value", code: "value" },
  codeExecutionResult: { outcome: "value", output: "value" },
  toolCall: "value",
  toolResponse: "value",
  thought: "value",
  thoughtSignature: "value",
  videoMetadata: { startOffset: "value", endOffset: "value", fps: "value" },
  mediaResolution: "value",
  partMetadata: "value",
};
/** A part's `data` oneof: exactly one of these. */
const PART_DATA = ["text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult", "toolCall", "toolResponse"];
const CONTENT: Message = { role: "value", parts: { repeated: PART } };

const THINKING_LEVELS = ["THINKING_LEVEL_UNSPECIFIED", "MINIMAL", "LOW", "MEDIUM", "HIGH"];
const GENERATION_CONFIG: Message = {
  stopSequences: "value",
  responseMimeType: "value",
  responseSchema: "value",
  responseJsonSchema: "value",
  _responseJsonSchema: "value",
  responseModalities: { enum: ["MODALITY_UNSPECIFIED", "TEXT", "IMAGE", "AUDIO"], name: "GenerationConfig.Modality", repeated: true },
  candidateCount: "value",
  maxOutputTokens: "value",
  temperature: "value",
  topP: "value",
  topK: "value",
  seed: "value",
  presencePenalty: "value",
  frequencyPenalty: "value",
  responseLogprobs: "value",
  logprobs: "value",
  enableEnhancedCivicAnswers: "value",
  speechConfig: "value",
  audioTranscriptionConfig: "value",
  mediaResolution: "value",
  thinkingConfig: { includeThoughts: "value", thinkingBudget: "value", thinkingLevel: { enum: THINKING_LEVELS, name: "ThinkingConfig.ThinkingLevel" } },
  imageConfig: { aspectRatio: "value", imageSize: "value" },
};
const TOOL: Message = {
  functionDeclarations: {
    repeated: { name: "value", description: "value", behavior: "value", parameters: "value", parametersJsonSchema: "value", response: "value", responseJsonSchema: "value" },
  },
  googleSearch: "value",
  googleSearchRetrieval: "value",
  codeExecution: "value",
  urlContext: "value",
  fileSearch: "value",
  googleMaps: "value",
  computerUse: "value",
  mcpServers: "value",
};
const REQUEST: Message = {
  model: "value",
  contents: { repeated: CONTENT },
  systemInstruction: CONTENT,
  tools: { repeated: TOOL },
  toolConfig: {
    functionCallingConfig: { mode: { enum: ["MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"], name: "FunctionCallingConfig.Mode" }, allowedFunctionNames: "value" },
    retrievalConfig: "value",
    includeServerSideToolInvocations: "value",
  },
  safetySettings: { repeated: { category: "value", threshold: "value" } },
  generationConfig: GENERATION_CONFIG,
  cachedContent: "value",
  serviceTier: "value",
};

const UNREGISTERED_CALLER =
  "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";

/** The first refusal the real API would give this request to `model`, or undefined. */
export function refusalOf(path: string, headers: IncomingHttpHeaders, body: Json, model: string): Refusal | undefined {
  if (!hasKey(path, headers)) return error(403, "PERMISSION_DENIED", UNREGISTERED_CALLER);
  if (!declaresJson(headers)) return error(400, "INVALID_ARGUMENT", `Invalid JSON payload received: the Content-Type is ${JSON.stringify(headers["content-type"] ?? "")}, not application/json.`);
  const syntax = syntaxErrors(body, REQUEST, "");
  if (syntax.length > 0) {
    const violations = syntax.map(({ field, description }) => ({ ...(field ? { field } : {}), description }));
    return error(400, "INVALID_ARGUMENT", syntax.map((s) => s.description).join("\n"), [{ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: violations }]);
  }
  const message = contentsError(body) ?? toolsError(body) ?? thinkingError(body, model) ?? signatureError(body, model);
  return message ? error(400, "INVALID_ARGUMENT", message) : undefined;
}

function hasKey(path: string, headers: IncomingHttpHeaders): boolean {
  const header = headers["x-goog-api-key"];
  if (typeof header === "string" && header !== "") return true;
  return Boolean(new URL(path, "http://fake").searchParams.get("key"));
}

// ---- field names and enum values, as Google's JSON parser checks them ----

interface SyntaxError {
  field: string;
  description: string;
}

function syntaxErrors(value: unknown, message: Message, at: string): SyntaxError[] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  const errors: SyntaxError[] = [];
  for (const [name, child] of Object.entries(value as Json)) {
    const known = Object.keys(message).find((field) => field === name || snakeCase(field) === name);
    if (known === undefined) {
      errors.push({ field: at, description: `Invalid JSON payload received. Unknown name "${name}"${at ? ` at '${at}'` : ""}: Cannot find field.` });
      continue;
    }
    const field = message[known];
    const path = `${at ? `${at}.` : ""}${snakeCase(known)}`;
    if (field === "value") continue;
    if (isEnum(field)) {
      const values = field.repeated && Array.isArray(child) ? child : [child];
      values.forEach((item, index) => {
        if (typeof item === "string" && field.enum.includes(item.toUpperCase())) return;
        const where = field.repeated ? `${path}[${index}]` : path;
        errors.push({ field: where, description: `Invalid value at '${where}' (type.googleapis.com/google.ai.generativelanguage.v1beta.${field.name}), ${JSON.stringify(item)}` });
      });
    } else if (isRepeated(field)) {
      if (Array.isArray(child)) child.forEach((item, index) => errors.push(...syntaxErrors(item, field.repeated, `${path}[${index}]`)));
    } else {
      errors.push(...syntaxErrors(child, field as Message, path));
    }
  }
  return errors;
}

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** A field by its camelCase name, or the snake_case one Google takes as well. */
function get(object: Json | undefined, name: string): any {
  return object?.[name] ?? object?.[snakeCase(name)];
}

// ---- what the API checks beyond the syntax ----

function contentsError(body: Json): string | undefined {
  const contents = get(body, "contents") as Json[] | undefined;
  if (!Array.isArray(contents) || contents.length === 0) return "* GenerateContentRequest.contents: contents is not specified\n";
  for (const [index, content] of contents.entries()) {
    if (content.role !== undefined && content.role !== "" && content.role !== "user" && content.role !== "model") return "Please use a valid role: user, model.";
    const parts = content.parts as Json[] | undefined;
    if (!Array.isArray(parts) || parts.length === 0) return `* GenerateContentRequest.contents[${index}].parts: contents.parts must not be empty.\n`;
    for (const [position, part] of parts.entries()) {
      const data = PART_DATA.filter((name) => get(part, name) !== undefined);
      if (data.length === 0) return `* GenerateContentRequest.contents[${index}].parts[${position}].data: required oneof field 'data' must have one initialized field\n`;
      if (data.length > 1) return `Invalid value at 'contents[${index}].parts[${position}]' (oneof), oneof field 'data' is already set. Cannot set '${data[1]}'`;
      const response = get(part, "functionResponse");
      if (response && !response.name) return `* GenerateContentRequest.contents[${index}].parts[${position}].function_response.name: Name cannot be empty.\n`;
    }
  }
  return functionTurnsError(contents);
}

/** Function calls follow a user turn; the turn after them answers each with one functionResponse. */
function functionTurnsError(contents: Json[]): string | undefined {
  const count = (content: Json | undefined, name: string) => ((content?.parts ?? []) as Json[]).filter((part) => get(part, name) !== undefined).length;
  for (const [index, content] of contents.entries()) {
    const calls = count(content, "functionCall");
    if (calls === 0) continue;
    if (index > 0 && (contents[index - 1].role ?? "user") !== "user") {
      return "Please ensure that function call turn comes immediately after a user turn or after a function response turn.";
    }
    const next = contents[index + 1];
    if (next !== undefined && count(next, "functionResponse") > 0 && count(next, "functionResponse") !== calls) {
      return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.";
    }
  }
  return undefined;
}

function toolsError(body: Json): string | undefined {
  for (const [index, tool] of ((get(body, "tools") ?? []) as Json[]).entries()) {
    for (const [position, declaration] of ((get(tool, "functionDeclarations") ?? []) as Json[]).entries()) {
      if (!declaration.name) return `* GenerateContentRequest.tools[${index}].function_declarations[${position}].name: Name cannot be empty.\n`;
    }
  }
  return undefined;
}

/** Documented budget ranges (-1 asks for dynamic thinking; 0, where allowed, turns thinking off). */
const BUDGET_RANGES: { model: RegExp; min: number; max: number; zero: boolean }[] = [
  { model: /^gemini-2\.5-pro/, min: 128, max: 32768, zero: false },
  { model: /^gemini-2\.5-flash-lite/, min: 512, max: 24576, zero: true },
  { model: /^gemini-2\.5-flash/, min: 1, max: 24576, zero: true },
  // The Gemini 3 Pro models cannot stop thinking either (their range is not documented).
  { model: /^gemini-3(\.\d+)?-pro/, min: 1, max: Infinity, zero: false },
];

function thinkingError(body: Json, model: string): string | undefined {
  const config = get(get(body, "generationConfig"), "thinkingConfig") as Json | undefined;
  if (config === undefined) return undefined;
  const budget = get(config, "thinkingBudget") as number | undefined;
  const level = get(config, "thinkingLevel");
  if (budget !== undefined && level !== undefined) return "You can only set only one of thinking budget and thinking level.";
  if (level !== undefined && !/^gemini-3/.test(model)) return "Thinking level is not supported for this model.";
  if (budget === undefined || budget === -1) return undefined;
  const range = BUDGET_RANGES.find((candidate) => candidate.model.test(model));
  if (!range) return undefined;
  if (budget === 0 && !range.zero) return "Budget 0 is invalid. This model only works in thinking mode.";
  if (budget !== 0 && (budget < range.min || budget > range.max)) return `The thinking budget (${budget}) is invalid.`;
  return undefined;
}

/**
 * Gemini 3 insists on the thoughtSignature of the first function call of every
 * model turn since the last user message with text (the "current turn").
 */
function signatureError(body: Json, model: string): string | undefined {
  if (!/^gemini-3/.test(model)) return undefined;
  const contents = get(body, "contents") as Json[];
  const start = contents.findLastIndex((content) => content.role !== "model" && (content.parts as Json[]).some((part) => typeof part.text === "string"));
  for (const [index, content] of contents.entries()) {
    if (index <= start || content.role !== "model") continue;
    const parts = content.parts as Json[];
    const first = parts.findIndex((part) => get(part, "functionCall") !== undefined);
    if (first >= 0 && !get(parts[first], "thoughtSignature")) {
      const name = get(parts[first], "functionCall").name;
      return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${first + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`;
    }
  }
  return undefined;
}

function error(code: number, status: string, message: string, details?: unknown[]): Refusal {
  return { status: code, body: { error: { code, message, status, ...(details ? { details } : {}) } } };
}
