// The semantic cache's embedding from a configured server speaking the OpenAI
// embeddings protocol (OpenAI, Gemini's OpenAI-compatible endpoint, TEI, vLLM,
// Ollama): one request per call, the answer checked and every vector
// L2-normalised (not every server normalises), and the call's cost reported as
// the gateway's own expense. Any failure is a plain Error: the caller serves the
// request without the cache.
import { z } from "zod";
import { parseMoney, type Money } from "../../billing/money.ts";
import type { EmbeddingConfig } from "../../config/cache-schema.ts";
import { ERROR_TEXT_BYTES } from "../../providers/answer-limits.ts";
import type { HttpClient } from "../../providers/http-client.ts";
import type { Embedder } from "./embedder.ts";

export interface EmbeddingExpense {
  model: string;
  baseUrl: string;
  inputTokens: number;
  cost: Money;
}

export interface OpenAiEmbedderOptions {
  config: EmbeddingConfig;
  /** The bearer key; absent or empty: no Authorization header (local servers). */
  apiKey?: string;
  /** The core's pooled client: keep-alive connections, and an answer size ceiling. */
  http: HttpClient;
  /** Called once per answer that reports `usage`, even when its vectors are then refused: the tokens were spent. */
  onExpense?: (expense: EmbeddingExpense) => void;
}

/** An error body is quoted up to this many characters. */
const ERROR_MESSAGE_CHARACTERS = 300;
/** An answer's ceiling per text: a 4096-dimension vector as JSON floats is about 100 KiB. */
const ANSWER_BYTES_PER_TEXT = 1024 * 1024;

/**
 * Asked in base64 (little-endian float32), a third of the float form's bytes and
 * no number parsing; OpenAI, TEI, vLLM, current Ollama and Gemini's endpoint take
 * it (the official SDKs send it by default). A server that ignores it answers
 * floats, which are read too.
 */
const answerSchema = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.union([z.string(), z.array(z.number())]) })),
});

const usageSchema = z.object({ usage: z.object({ prompt_tokens: z.number().int().nonnegative() }) });

export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const { config, apiKey, http, onExpense } = options;
  const baseUrl = config.base_url.replace(/\/+$/, "");
  const url = new URL(baseUrl + "/embeddings");
  const pricePerMillion = parseMoney(config.price_per_million_tokens);
  const headers: Record<string, string> = { accept: "application/json" };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  const server = `embedding server ${url.host}`;

  return {
    // The server's host is part of the space: two servers may serve different weights under one model name.
    id: `openai-embeddings:${config.model}@${config.dimensions ?? "native"}@${url.host}`,
    defaultThreshold: config.similarity_threshold,
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      const body = {
        model: config.model,
        input: texts.map((text) => lastCharacters(text, config.max_input_characters)),
        ...(config.dimensions !== undefined && { dimensions: config.dimensions }),
        encoding_format: "base64",
      };
      const timeout = AbortSignal.timeout(config.timeout_ms);
      const callSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
      let answer: { status: number; text: string };
      try {
        answer = await post(http, url, headers, JSON.stringify(body), callSignal, config.timeout_ms, texts.length);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (timeout.aborted) throw new Error(`${server} did not answer within ${config.timeout_ms} ms`);
        throw new Error(`${server} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      if (answer.status < 200 || answer.status >= 300) {
        throw new Error(`${server} answered HTTP ${answer.status}: ${errorMessageOf(answer.text) || "(no message)"}`);
      }
      let json: unknown;
      try {
        json = JSON.parse(answer.text);
      } catch {
        throw new Error(`${server} answered something other than JSON: ${JSON.stringify(answer.text.slice(0, 100))}`);
      }
      const usage = usageSchema.safeParse(json);
      if (usage.success && onExpense) {
        const inputTokens = usage.data.usage.prompt_tokens;
        // Exact: the price has at most 9 decimal places, so the division by a million leaves no remainder.
        onExpense({ model: config.model, baseUrl, inputTokens, cost: (pricePerMillion * BigInt(inputTokens)) / 1_000_000n });
      }
      return vectorsOf(json, texts.length, config.dimensions, server);
    },
  };
}

/** Posts the request; the answer's status and text (an error answer's beginning only). */
async function post(http: HttpClient, url: URL, headers: Record<string, string>, body: string, signal: AbortSignal, timeoutMs: number, count: number): Promise<{ status: number; text: string }> {
  const response = await http.stream(url, headers, body, { signal, headersTimeoutMs: timeoutMs, bodyTimeoutMs: timeoutMs });
  try {
    const ok = response.statusCode >= 200 && response.statusCode < 300;
    const text = ok ? await response.body.text(count * ANSWER_BYTES_PER_TEXT) : await response.body.text(ERROR_TEXT_BYTES, { truncate: true });
    return { status: response.statusCode, text };
  } finally {
    response.body.cancel();
  }
}

/** The answer's vectors in input order, checked and L2-normalised. */
function vectorsOf(json: unknown, count: number, dimensions: number | undefined, server: string): Float32Array[] {
  const parsed = answerSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${server} answered an unexpected shape: ${issue.message} at ${issue.path.join(".") || "the top"}`);
  }
  const { data } = parsed.data;
  if (data.length !== count) throw new Error(`${server} answered ${data.length} embeddings for ${count} texts`);
  const vectors: Float32Array[] = new Array(count);
  for (const entry of data) {
    // Placed by index: the protocol promises it, not the order of `data`.
    if (entry.index >= count || vectors[entry.index]) throw new Error(`${server} answered index ${entry.index} out of place (${count} texts)`);
    vectors[entry.index] = normalised(floatsOf(entry.embedding, server), server);
  }
  const length = vectors[0].length;
  if (vectors.some((vector) => vector.length !== length)) throw new Error(`${server} answered vectors of different lengths`);
  if (dimensions !== undefined && length !== dimensions) throw new Error(`${server} answered ${length} dimensions, ${dimensions} were asked (does the model take \`dimensions\`?)`);
  return vectors;
}

/** A base64 string of little-endian float32s, or a JSON array of numbers. */
function floatsOf(embedding: string | number[], server: string): Float32Array {
  if (typeof embedding !== "string") return Float32Array.from(embedding);
  const bytes = Buffer.from(embedding, "base64");
  if (bytes.length === 0 || bytes.length % 4 !== 0) throw new Error(`${server} answered a base64 embedding of ${bytes.length} bytes, not float32s`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const floats = new Float32Array(bytes.length / 4);
  for (let i = 0; i < floats.length; i++) floats[i] = view.getFloat32(i * 4, true);
  return floats;
}

/** The vector at unit length; one with a non-finite or no component has no direction and is refused. */
function normalised(vector: Float32Array, server: string): Float32Array {
  let sumOfSquares = 0;
  for (const value of vector) sumOfSquares += value * value;
  if (!Number.isFinite(sumOfSquares) || sumOfSquares === 0) throw new Error(`${server} answered an embedding that is ${sumOfSquares === 0 ? "empty or zero" : "not finite"}`);
  const norm = Math.sqrt(sumOfSquares);
  for (let i = 0; i < vector.length; i++) vector[i] /= norm;
  return vector;
}

/** The end of a text too long, whole characters only (never half a surrogate pair). */
export function lastCharacters(text: string, most: number): string {
  if (text.length <= most) return text;
  const cut = text.slice(text.length - most);
  const first = cut.charCodeAt(0);
  return first >= 0xdc00 && first <= 0xdfff ? cut.slice(1) : cut;
}

/** The server's own message: OpenAI, vLLM and Ollama `{error: {message}}`, TEI `{error: "..."}`, Google `[{error: {message}}]`, older vLLM `{message}`. */
function errorMessageOf(bodyText: string): string {
  let message: unknown;
  try {
    const json: unknown = JSON.parse(bodyText);
    const first = Array.isArray(json) ? json[0] : json;
    const error = (first as { error?: unknown } | null)?.error;
    message = typeof error === "string" ? error : (error as { message?: unknown } | undefined)?.message ?? (first as { message?: unknown } | null)?.message;
  } catch {
    // Not JSON (a proxy's page): its text.
  }
  return (typeof message === "string" ? message : bodyText).trim().slice(0, ERROR_MESSAGE_CHARACTERS);
}
