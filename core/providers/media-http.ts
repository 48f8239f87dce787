// The few HTTP calls of asynchronous media protocols (submit, poll, download):
// low volume, so plain fetch with a timeout, each failure an UpstreamError
// (retryable or not, as for chat: isRetryableStatus).
import { ERROR_TEXT_BYTES, MOST_ANSWER_BYTES, MOST_DOWNLOAD_BYTES, readResponseBytes, streamResponseBytes } from "./answer-limits.ts";
import { parseUpstreamJson } from "./http-exchange.ts";
import { readTextPrefix } from "./read-capped.ts";
import { UpstreamError, upstreamHttpError } from "./types.ts";
import { Agent } from "undici";

export interface MediaRequest {
  method: "GET" | "POST";
  headers: Record<string, string>;
  /** JSON, or FormData (multipart/form-data). */
  body?: unknown;
  signal: AbortSignal;
  timeoutMs: number;
  /** The most time to connect (default: fetch's own, 10 seconds), and to the answer's headers; either past is a retryable timeout. */
  connectTimeoutMs?: number;
  firstByteTimeoutMs?: number;
}

/** The parsed JSON answer; a non-2xx answer is an UpstreamError carrying `describe(status, body)`. */
export async function mediaJson(url: string, request: MediaRequest, describe: (status: number, text: string) => string): Promise<unknown> {
  // A FormData body goes as multipart/form-data (fetch writes its boundary); any other as JSON.
  const form = request.body instanceof FormData;
  const response = await send(url, {
    method: request.method,
    headers: { accept: "application/json", ...(request.body === undefined || form ? {} : { "content-type": "application/json" }), ...request.headers },
    body: request.body === undefined ? undefined : form ? (request.body as FormData) : JSON.stringify(request.body),
    signal: AbortSignal.any([request.signal, AbortSignal.timeout(request.timeoutMs)]),
  }, request);
  if (!response.ok) throw upstreamHttpError(response.status, describe(response.status, await readTextPrefix(response, ERROR_TEXT_BYTES)));
  // TextDecoder, as fetch's text() did: a byte-order mark is dropped.
  return parseUpstreamJson(new TextDecoder().decode(await readResponseBytes(response, MOST_ANSWER_BYTES)));
}

/**
 * The bytes at a result URL as they arrive (a video of hundreds of megabytes
 * is never held whole; past MOST_DOWNLOAD_BYTES they are refused), and the type the
 * header claims. Leaving the loop that reads them cancels the rest.
 */
export async function downloadMedia(
  url: string,
  options: { headers?: Record<string, string>; signal: AbortSignal; timeoutMs: number },
): Promise<{ chunks: AsyncGenerator<Uint8Array>; mediaType: string }> {
  const response = await send(url, { headers: options.headers, signal: AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]) });
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw upstreamHttpError(response.status, `the result URL answered ${response.status}`);
  }
  const chunks = await streamResponseBytes(response, MOST_DOWNLOAD_BYTES);
  return { chunks, mediaType: (response.headers.get("content-type") ?? "").split(";")[0].trim() };
}

/** One undici agent per connect bound (a handful of values at most: the configuration's). */
const connectBounded = new Map<number, Agent>();

function agentFor(connectTimeoutMs: number): Agent {
  let agent = connectBounded.get(connectTimeoutMs);
  if (!agent) connectBounded.set(connectTimeoutMs, (agent = new Agent({ connect: { timeout: connectTimeoutMs } })));
  return agent;
}

async function send(url: string, init: RequestInit, bounds: Pick<MediaRequest, "connectTimeoutMs" | "firstByteTimeoutMs"> = {}): Promise<Response> {
  // The first byte's bound runs until the headers come: the body has the call's whole bound.
  const firstByte = bounds.firstByteTimeoutMs ? new AbortController() : undefined;
  const timer = firstByte && setTimeout(() => firstByte.abort(new DOMException("no answer within the first byte bound", "TimeoutError")), bounds.firstByteTimeoutMs);
  const signal = firstByte ? AbortSignal.any([init.signal!, firstByte.signal]) : init.signal;
  const dispatcher = bounds.connectTimeoutMs ? { dispatcher: agentFor(bounds.connectTimeoutMs) } : {};
  try {
    return await fetch(url, { ...init, signal, ...dispatcher } as RequestInit);
  } catch (error) {
    // The caller's own abort (lease lost, shutdown) is not the provider's failure: not retried as one.
    if ((error as Error).name === "AbortError") throw error;
    const reason = firstByte?.signal.aborted ? "first_byte_timeout" : (error as Error).name === "TimeoutError" ? "timeout" : isConnectTimeout(error) ? "connect_timeout" : "connection_failed";
    throw new UpstreamError(`upstream ${reason === "connection_failed" ? "connection failed" : `timed out (${reason})`}: ${(error as Error).message}`, {
      retryable: true,
      reason,
      cause: error,
    });
  } finally {
    clearTimeout(timer);
  }
}

const isConnectTimeout = (error: unknown) => ((error as { cause?: { code?: string } }).cause?.code ?? "") === "UND_ERR_CONNECT_TIMEOUT";
