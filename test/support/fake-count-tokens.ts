// The counting endpoints of the Anthropic and Gemini fakes, for tests:
//   Anthropic  POST /v1/messages/count_tokens          -> {"input_tokens": N}
//   Gemini     POST /v1beta/models/{m}:countTokens     -> {"totalTokens": N}
// Each refuses first what the real one refuses: Anthropic's the body of
// MessageCountTokensParams only (the official SDK's type), so a field only
// generation reads (max_tokens, stream, temperature, ...) is an extra input,
// then every rule of /messages (anthropic-request-rules.ts); Gemini's a body
// other than {generateContentRequest} or {contents}, a generateContentRequest
// without its `models/...` model, then every rule of generateContent
// (gemini-request-rules.ts). A model named "fail-<status>" answers that status.
// The count is deterministic, one token per 4 characters of the JSON of what
// makes the prompt (FAKE_COUNTS says which fields), so a test can compute it.
import type http from "node:http";
import { refusalOf as anthropicRefusal } from "./anthropic-request-rules.ts";
import { promptTokensOf } from "./conversation-model.ts";
import { refusalOf as geminiRefusal } from "./gemini-request-rules.ts";

type Json = Record<string, any>;

/** The top-level fields of MessageCountTokensParams (not beta). */
const ANTHROPIC_COUNT_FIELDS = new Set(["model", "messages", "cache_control", "output_config", "speed", "system", "thinking", "tool_choice", "tools"]);

/** The count each fake gives: of these fields of the (inner) request body. */
export const FAKE_COUNTS = {
  anthropic: (body: Json) => promptTokensOf({ system: body.system, messages: body.messages, tools: body.tools }),
  gemini: (request: Json) => promptTokensOf({ systemInstruction: request.systemInstruction, contents: request.contents, tools: request.tools }),
};

export function answerAnthropicCount(headers: http.IncomingHttpHeaders, body: Json, res: http.ServerResponse) {
  const extra = Object.keys(body).find((field) => !ANTHROPIC_COUNT_FIELDS.has(field));
  // The /messages rules, with max_tokens out of the way (the count has none, so no budget limit either).
  const refusal = extra
    ? { status: 400, body: { type: "error", error: { type: "invalid_request_error", message: `${extra}: Extra inputs are not permitted` } } }
    : anthropicRefusal(headers, { ...body, max_tokens: Number.MAX_SAFE_INTEGER });
  if (refusal) return send(res, refusal.status, refusal.body);
  const failure = /^fail-(\d{3})$/.exec(String(body.model));
  if (failure) return send(res, Number(failure[1]), { type: "error", error: { type: "api_error", message: `fake failure ${failure[1]}` } });
  send(res, 200, { input_tokens: FAKE_COUNTS.anthropic(body) });
}

export function answerGeminiCount(path: string, headers: http.IncomingHttpHeaders, body: Json, res: http.ServerResponse) {
  const model = decodeURIComponent(/\/models\/([^/:]+):countTokens$/.exec(new URL(path, "http://fake").pathname)?.[1] ?? "");
  const googleError = (status: number, name: string, message: string) => send(res, status, { error: { code: status, message, status: name } });
  const unknown = Object.keys(body).find((field) => field !== "generateContentRequest" && field !== "contents");
  if (unknown) return googleError(400, "INVALID_ARGUMENT", `Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`);
  const request: Json = body.generateContentRequest ?? { contents: body.contents };
  if (body.generateContentRequest && request.model !== `models/${model}`) {
    return googleError(400, "INVALID_ARGUMENT", "generateContentRequest.model must name the model of the path (models/{model}).");
  }
  const refusal = geminiRefusal(path, headers, request, model);
  if (refusal) return send(res, refusal.status, refusal.body);
  const failure = /^fail-(\d{3})$/.exec(model);
  if (failure) return googleError(Number(failure[1]), "UNAVAILABLE", `fake failure ${failure[1]}`);
  send(res, 200, { totalTokens: FAKE_COUNTS.gemini(request) });
}

function send(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
