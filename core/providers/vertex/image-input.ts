// Veo takes an input image as bytes (or a Cloud Storage URI), never as a URL:
// the image the caller named by URL is fetched here, through the caller-URL
// fetcher (public addresses only unless tasks.fetch_private_urls), and sent
// inline. Its size is capped at Google's documented limit for image-to-video
// (20 MB), read no further than that.
import { imageTypeBySignature } from "../image-signature.ts";
import { CallerUrlError, readCallerUrl } from "../safe-fetch.ts";
import { UpstreamError } from "../types.ts";

export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/** What the task's error says of any failed fetch (the detail, kept in the error's cause, would tell the caller about hosts it cannot reach). */
export const INPUT_IMAGE_NOT_FETCHED = "the input image could not be fetched from the given URL";

export interface InlineImage {
  bytesBase64Encoded: string;
  mimeType: string;
}

export interface ImageInputOptions {
  signal: AbortSignal;
  timeoutMs: number;
  maxBytes?: number;
  allowPrivateAddresses?: boolean;
}

/**
 * The image at `url`, base64, with its type read from its first bytes (JPEG or
 * PNG, what the videos endpoint admits). A refusal (a private address, a 4xx,
 * too large, not an image) ends the task; a network failure or a 5xx is tried
 * again at the next poll.
 */
export async function fetchImageInput(url: string, options: ImageInputOptions): Promise<InlineImage> {
  let bytes: Buffer;
  try {
    bytes = await readCallerUrl(url, { ...options, maxBytes: options.maxBytes ?? MAX_IMAGE_BYTES });
  } catch (error) {
    if (!(error instanceof CallerUrlError)) throw error; // the caller's own abort
    throw new UpstreamError(INPUT_IMAGE_NOT_FETCHED, { status: error.retryable ? undefined : 400, retryable: error.retryable, reason: `image_${error.failure}`, cause: error });
  }
  const mimeType = imageTypeBySignature(bytes);
  if (mimeType !== "image/png" && mimeType !== "image/jpeg") {
    throw new UpstreamError("the input image is not a JPEG or PNG", { status: 400, retryable: false, reason: "image_type" });
  }
  return { bytesBase64Encoded: bytes.toString("base64"), mimeType };
}
