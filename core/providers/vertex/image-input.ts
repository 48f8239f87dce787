// Veo takes an input image as bytes (or a Cloud Storage URI), never as a URL:
// the image the caller named by URL is fetched here and sent inline. Its size
// is capped at Google's documented limit for image-to-video (20 MB), read no
// further than that.
import { UpstreamError, upstreamHttpError } from "../types.ts";

export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

export interface InlineImage {
  bytesBase64Encoded: string;
  mimeType: string;
}

/**
 * The image at `url`, base64, with its type read from its first bytes (JPEG or
 * PNG, what the videos endpoint admits), not from a header a file host may get
 * wrong. A refusal (not found, too large, not an image) is a 4xx and ends the
 * task; a network failure or a 5xx is tried again at the next poll.
 */
export async function fetchImageInput(url: string, options: { signal: AbortSignal; timeoutMs: number; maxBytes?: number }): Promise<InlineImage> {
  const maxBytes = options.maxBytes ?? MAX_IMAGE_BYTES;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]) });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new UpstreamError(`the input image ${url} could not be fetched: ${(error as Error).message}`, { retryable: true, reason: "image_fetch_failed", cause: error });
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw upstreamHttpError(response.status, `the input image ${url} answered ${response.status}`);
  }
  const bytes = await readAtMost(response, maxBytes, url);
  const mimeType = imageTypeOf(bytes);
  if (!mimeType) throw refused(`the input image ${url} is not a JPEG or PNG`, "image_type");
  return { bytesBase64Encoded: bytes.toString("base64"), mimeType };
}

async function readAtMost(response: Response, maxBytes: number, url: string): Promise<Buffer> {
  const tooLarge = () => refused(`the input image ${url} is larger than ${maxBytes} bytes`, "image_too_large");
  if (Number(response.headers.get("content-length") ?? 0) > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.length;
    if (size > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const refused = (message: string, reason: string) => new UpstreamError(message, { status: 400, retryable: false, reason });

function imageTypeOf(bytes: Buffer): string | undefined {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "image/png";
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  return undefined;
}
