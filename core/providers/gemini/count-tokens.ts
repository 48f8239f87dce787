// Gemini's exact count: POST {base_url}/models/{model}:countTokens with the
// generateContent body wrapped as `generateContentRequest` (so the system
// instruction and function declarations count too), answered {"totalTokens": N}.
import type { JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import type { HttpClient } from "../http-client.ts";
import { checkShape } from "../http-exchange.ts";
import { postJson } from "../post-json.ts";
import type { UpstreamCall } from "../types.ts";
import { convertRequest } from "./convert-request.ts";
import { bareModel, keyHeaders, methodUrl } from "./endpoint.ts";
import { mapError } from "./map-error.ts";

/** What the prompt is made of; generationConfig (sampling, thinking, output) adds no input tokens. */
const PROMPT_FIELDS = ["contents", "systemInstruction", "tools", "toolConfig"];

const countSchema = z.object({ totalTokens: z.number().int().nonnegative().default(0) });

/** The countTokens body: the prompt fields of the generateContent body, with the model it names (the API requires it there). */
export function countTokensBody(call: UpstreamCall): JsonObject {
  const { body } = convertRequest({ ...call, stream: false });
  const request: JsonObject = { model: `models/${bareModel(call)}` };
  for (const field of PROMPT_FIELDS) if (body[field] !== undefined) request[field] = body[field];
  return { generateContentRequest: request };
}

export async function countGeminiTokens(http: HttpClient, call: UpstreamCall): Promise<number> {
  const answer = await postJson(http, call, {
    url: methodUrl(call, "countTokens"),
    headers: keyHeaders(call),
    body: countTokensBody(call),
    errorOf: mapError,
  });
  // Google leaves a zero out of its JSON.
  return checkShape(countSchema, answer).totalTokens;
}
