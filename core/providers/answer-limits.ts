// Upstream answers read whole into memory have a ceiling, so that a provider
// (or whatever answers at its address) sending without end cannot exhaust the
// process's memory. Streams are relayed as they come and are not held whole;
// their lines have their own cap (read-sse.ts).
import { cappedChunks, readCapped } from "./read-capped.ts";
import { UpstreamError } from "./types.ts";

/** A JSON answer held whole: a chat completion, a media job's answer (ten base64 images fit many times over). */
export const MOST_ANSWER_BYTES = 256 * 1024 * 1024;
/** An error answer: quoted in the error, so its beginning is enough (the rest is not read). */
export const ERROR_TEXT_BYTES = 64 * 1024;
/** A result file fetched to be stored (an image or a video): streamed to the asset store, never held whole. */
export const MOST_DOWNLOAD_BYTES = 1024 * 1024 * 1024;

export function answerTooLarge(limitBytes: number): UpstreamError {
  return new UpstreamError(`upstream answer larger than ${limitBytes / (1024 * 1024)} MiB`, { retryable: true, reason: "answer_too_large" });
}

/** A fetch answer's body, whole; refused past `limitBytes` (by its Content-Length, else as it arrives, the rest not read). */
export function readResponseBytes(response: Response, limitBytes: number): Promise<Buffer> {
  return readCapped(response, limitBytes, () => answerTooLarge(limitBytes));
}

/** A fetch answer's body as it arrives; refused past `limitBytes` (by its Content-Length now, else when the count passes it). */
export function streamResponseBytes(response: Response, limitBytes: number): Promise<AsyncGenerator<Uint8Array>> {
  return cappedChunks(response, limitBytes, () => answerTooLarge(limitBytes));
}
