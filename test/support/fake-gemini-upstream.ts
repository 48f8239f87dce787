// A real HTTP server speaking the Gemini API (v1beta generateContent and
// streamGenerateContent?alt=sse), for tests. It records every request it
// receives. Before anything else it refuses, with Google's status and error body,
// what the real API refuses (gemini-request-rules.ts): no key (403), unknown
// fields and enum values, roles other than user/model, malformed parts, function
// turns that do not pair up, and thinking settings the model does not take (400).
// Then the model in the URL path picks a failure:
//   "fail-<status>"   answers that HTTP status with Google's error body
//   "cut-after-first" streams one chunk, then destroys the connection
//   "end-early"       streams one chunk, then ends cleanly without finishReason
//   "hang"            streams one chunk, then waits until the client goes away
// Otherwise the request's content picks the answer:
//   - thinkingConfig.includeThoughts: a thought part first, and a thoughtSignature
//     on the first answer part, as the real API puts it;
//   - functionDeclarations, and no functionResponse in the last content: a
//     functionCall to the first function with args {"city":"Paris"}; offered two or
//     more functions, two functionCall parts in one answer (FAKE_PARALLEL_ARGS: the
//     first function, then the second), streamed together in one chunk, whole, as
//     Google sends parallel calls;
//   - responseMimeType application/json: the text {"answer":"Hello"};
//   - else "Hello from <model>", streamed over several chunks;
//   - responseModalities with IMAGE: the answer ends with an inlineData PNG (FAKE_IMAGE);
//   - a model named lyria-*: the answer ends with an MP3 in two inlineData parts
//     (FAKE_AUDIO_PARTS), as a music model streams it.
// Usage: promptTokenCount 10 and the running totals on every chunk, as Google
// sends them; the last chunk adds candidatesTokenCount 5, thoughtsTokenCount 3
// (when thoughts were asked) and always cachedContentTokenCount 2 (an implicit
// cache hit), with finishReason STOP. A model named "*conversation*" counts
// promptTokenCount from systemInstruction and contents, signs per request and
// refuses a thoughtSignature it did not give (conversation-model.ts).
// POST /models/{model}:countTokens counts as fake-count-tokens.ts says.
import type http from "node:http";
import { isConversationModel, isForeignSignature, promptTokensOf, signatureOfTurn } from "./conversation-model.ts";
import { refusalOf } from "./gemini-request-rules.ts";
import { answerGeminiCount } from "./fake-count-tokens.ts";
import { sendGoogleError } from "./google-error.ts";
import { startRecordingServer, type FakeUpstream } from "./recording-server.ts";

export const FAKE_THOUGHT = "Let me think.";
/** base64 of "fake-signature". */
export const FAKE_SIGNATURE = "ZmFrZS1zaWduYXR1cmU=";
/** base64 of the PNG signature: the image an IMAGE-modality answer carries. */
export const FAKE_IMAGE = "iVBORw0KGgo=";
/** Two pieces of one MP3 file (an ID3 tag, then a frame header), base64. */
export const FAKE_AUDIO_PARTS = ["SUQzBAAAAAAAAA==", "//uQZAAAAAAA"];
/** The args of the calls of an answer offered two or more functions: to the first, then the second. */
export const FAKE_PARALLEL_ARGS = [{ city: "Paris" }, { city: "London" }] as const;
export const FAKE_USAGE = { promptTokenCount: 10, candidatesTokenCount: 5, cachedContentTokenCount: 2 } as const;


export function startFakeGeminiUpstream(): Promise<FakeUpstream> {
  return startRecordingServer("/v1beta", ({ method, path, headers, body }, res, onAbort) => {
    // generateContent, streamGenerateContent and countTokens are POST only.
    if (method !== "POST") return sendGoogleError(res, 404, `unknown path ${method} ${path}`);
    if (new URL(path, "http://fake").pathname.endsWith(":countTokens")) return answerGeminiCount(path, headers, body, res);
    const route = /\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(new URL(path, "http://fake").pathname);
    if (!route) return sendGoogleError(res, 404, `unknown path ${path}`);
    const model = decodeURIComponent(route[1]);
    const refusal = refusalOf(path, headers, body, model) ?? foreignSignatureRefusal(model, body);
    if (refusal) {
      res.writeHead(refusal.status, { "content-type": "application/json; charset=UTF-8" });
      res.end(JSON.stringify(refusal.body));
      return;
    }
    answer(model, route[2] === "streamGenerateContent", body, res, onAbort);
  });
}

interface FakeBody {
  systemInstruction?: unknown;
  contents?: { role?: string; parts?: Record<string, unknown>[] }[];
  tools?: { functionDeclarations?: { name: string }[] }[];
  generationConfig?: { responseMimeType?: string; responseModalities?: string[]; thinkingConfig?: { includeThoughts?: boolean } };
}

function answer(model: string, stream: boolean, rawBody: Record<string, unknown>, res: http.ServerResponse, onAbort: () => void) {
  const failure = /^fail-(\d{3})$/.exec(model);
  if (failure) {
    sendGoogleError(res, Number(failure[1]), `fake failure ${failure[1]}`);
    return;
  }
  const body = rawBody as FakeBody;
  const thoughts = body.generationConfig?.thinkingConfig?.includeThoughts === true;
  const parts = answerParts(model, body);
  const promptTokens = isConversationModel(model) ? promptTokensOf({ systemInstruction: body.systemInstruction, contents: body.contents }) : FAKE_USAGE.promptTokenCount;
  const usage = (final: boolean) => {
    const thoughtTokens = thoughts ? 3 : 0;
    const candidates = final ? FAKE_USAGE.candidatesTokenCount : 0;
    return {
      promptTokenCount: promptTokens,
      ...(final ? { candidatesTokenCount: candidates, cachedContentTokenCount: FAKE_USAGE.cachedContentTokenCount } : {}),
      totalTokenCount: promptTokens + candidates + thoughtTokens,
      promptTokensDetails: [{ modality: "TEXT", tokenCount: promptTokens }],
      ...(thoughtTokens ? { thoughtsTokenCount: thoughtTokens } : {}),
    };
  };
  const response = (chunkParts: Record<string, unknown>[], final: boolean) => ({
    candidates: [{ content: { parts: chunkParts, role: "model" }, ...(final ? { finishReason: "STOP" } : {}), index: 0 }],
    usageMetadata: usage(final),
    modelVersion: model,
    responseId: "fake-response-id",
  });

  if (!stream) {
    // A whole answer joins the streamed text pieces into one part, as Google does.
    res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
    res.end(JSON.stringify(response(joinTextParts(parts), true)));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (payload: unknown) => res.write(`data: ${JSON.stringify(payload)}\r\n\r\n`);
  if (model === "cut-after-first" || model === "end-early" || model === "hang") {
    send(response(parts.slice(0, 1), false));
    if (model === "cut-after-first") setImmediate(() => res.socket?.destroy());
    else if (model === "end-early") res.end();
    else res.once("close", onAbort);
    return;
  }
  // Each part is a chunk of its own, but parallel function calls come together in one.
  const chunks: Record<string, unknown>[][] = [];
  for (const part of parts) {
    const last = chunks.at(-1);
    if (part.functionCall && last?.at(-1)?.functionCall) last.push(part);
    else chunks.push([part]);
  }
  chunks.forEach((chunkParts, position) => send(response(chunkParts, position === chunks.length - 1)));
  res.end();
}

function answerParts(model: string, body: FakeBody): Record<string, unknown>[] {
  const parts: Record<string, unknown>[] = [];
  const thoughts = body.generationConfig?.thinkingConfig?.includeThoughts === true;
  if (thoughts) parts.push({ text: FAKE_THOUGHT, thought: true });
  const answer: Record<string, unknown>[] = [];
  const functionNames = (body.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []).map((declaration) => declaration.name);
  const lastParts = body.contents?.at(-1)?.parts ?? [];
  const answeredCall = lastParts.some((part) => part.functionResponse);
  if (functionNames.length >= 2 && !answeredCall) {
    // Parallel function calling: several functionCall parts in one answer.
    answer.push(...FAKE_PARALLEL_ARGS.map((args, position) => ({ functionCall: { name: functionNames[position], args: { ...args } } })));
  } else if (functionNames.length > 0 && !answeredCall) {
    answer.push({ functionCall: { name: functionNames[0], args: { city: "Paris" } } });
  } else if (body.generationConfig?.responseMimeType === "application/json") {
    answer.push({ text: '{"answer":' }, { text: '"Hello"}' });
  } else {
    answer.push(...`Hello from ${model}`.split(/(?<= )/).map((text) => ({ text })));
  }
  const signature = isConversationModel(model) ? signatureOfTurn("gemini", body.contents?.length ?? 0) : FAKE_SIGNATURE;
  if (thoughts) answer[0] = { ...answer[0], thoughtSignature: signature };
  if (body.generationConfig?.responseModalities?.includes("IMAGE")) answer.push({ inlineData: { mimeType: "image/png", data: FAKE_IMAGE } });
  if (model.startsWith("lyria")) answer.push(...FAKE_AUDIO_PARTS.map((data) => ({ inlineData: { mimeType: "audio/mpeg", data } })));
  return [...parts, ...answer];
}

/** Adjacent plain text parts merged; a part with a signature starts a new one, as it does upstream. */
function joinTextParts(parts: Record<string, unknown>[]): Record<string, unknown>[] {
  const joined: Record<string, unknown>[] = [];
  for (const part of parts) {
    const last = joined.at(-1);
    const plainText = typeof part.text === "string" && !part.thought && !part.thoughtSignature;
    if (plainText && last && typeof last.text === "string" && !last.thought) last.text += part.text as string;
    else joined.push({ ...part });
  }
  return joined;
}

/** A "conversation" model checks its signatures as the real API does: one it did not give is refused. */
function foreignSignatureRefusal(model: string, body: Record<string, unknown>) {
  if (!isConversationModel(model)) return undefined;
  const parts = ((body as FakeBody).contents ?? []).flatMap((content) => content.parts ?? []);
  if (!parts.some((part) => typeof part.thoughtSignature === "string" && isForeignSignature("gemini", part.thoughtSignature))) return undefined;
  return { status: 400, body: { error: { code: 400, message: "Corrupted thought signature.", status: "INVALID_ARGUMENT" } } };
}

