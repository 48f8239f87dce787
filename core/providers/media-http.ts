// The few HTTP calls of asynchronous media protocols (submit, poll, download):
// low volume, so plain fetch with a timeout, each failure an UpstreamError
// (retryable or not, as for chat: isRetryableStatus).
import { ERROR_TEXT_BYTES, MOST_ANSWER_BYTES, MOST_DOWNLOAD_BYTES, readResponseBytes, streamResponseBytes } from "./answer-limits.ts";
import { parseUpstreamJson } from "./http-exchange.ts";
import { readTextPrefix } from "./read-capped.ts";
import { UpstreamError, upstreamHttpError } from "./types.ts";

export interface MediaRequest {
  method: "GET" | "POST";
  headers: Record<string, string>;
  /** JSON, or FormData (multipart/form-data). */
  body?: unknown;
  signal: AbortSignal;
  timeoutMs: number;
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
  });
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

async function send(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    // The caller's own abort (lease lost, shutdown) is not the provider's failure: not retried as one.
    if ((error as Error).name === "AbortError") throw error;
    const timedOut = (error as Error).name === "TimeoutError";
    throw new UpstreamError(`upstream ${timedOut ? "timed out" : "connection failed"}: ${(error as Error).message}`, {
      retryable: true,
      reason: timedOut ? "timeout" : "connection_failed",
      cause: error,
    });
  }
}
