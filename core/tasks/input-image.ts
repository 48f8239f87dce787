// A task's input image (image-to-video, an image edit's references), checked
// before anything is held: the spec takes it as a URL only (no base64), of a
// JPEG or PNG whose aspect ratio is between 1:4 and 4:1. The core fetches it
// through the caller-URL fetcher (public addresses only unless
// tasks.fetch_private_urls; a timeout and a size cap) and reads its
// dimensions from the first bytes, whatever the server's Content-Type says:
// the read stops once the header is parsed.
import { imageSize } from "image-size";
import { invalidParameter } from "../errors.ts";
import { imageTypeBySignature } from "../providers/image-signature.ts";
import { loggableUrl, readCallerUrl, type CallerUrlError, type CallerUrlPolicy } from "../providers/safe-fetch.ts";

/** How input images are fetched: the cap, the timeout, and tasks.fetch_private_urls (absent: public addresses only). */
export interface InputImageLimits extends CallerUrlPolicy {
  timeoutMs: number;
  maxBytes: number;
  /** Where a failed fetch's detail goes (the caller is told only that it failed). */
  logger?: { warn(details: object, message: string): void };
}

export const INPUT_IMAGE_LIMITS: InputImageLimits = { timeoutMs: 10_000, maxBytes: 20 * 1024 * 1024 };

/** The widest and the tallest aspect ratio the spec allows (4:1 and 1:4). */
const MOST_RATIO = 4;

const refused = (message: string) => invalidParameter("image", message);

/** The one answer to every failed fetch: which failure it was (an address refused, a status, a size) would tell the caller about hosts it cannot reach. */
export const IMAGE_FETCH_FAILED = "image could not be fetched from the given URL.";

type Header = { width: number; height: number } | "not_jpeg_or_png";

/** The image's dimensions when the URL serves a JPEG or PNG of an allowed shape; else a 400 naming `image`. */
export async function checkInputImage(url: string, limits: InputImageLimits = INPUT_IMAGE_LIMITS): Promise<{ width: number; height: number }> {
  const parsed = URL.parse(url);
  if (parsed?.protocol !== "http:" && parsed?.protocol !== "https:") {
    throw refused("image must be an http or https URL of a JPEG or PNG; base64 and data: URLs are not taken.");
  }
  let header: Header | undefined;
  let bytes: Buffer;
  try {
    bytes = await readCallerUrl(parsed.href, limits, (prefix) => (header = headerOf(prefix, false)) !== undefined);
  } catch (error) {
    const failure = error as CallerUrlError;
    limits.logger?.warn({ err: failure, failure: failure.failure, url: loggableUrl(parsed.href) }, "input image not fetched");
    throw refused(IMAGE_FETCH_FAILED);
  }
  // The whole body read without a header found: decided on all of it.
  const found = (header as Header | undefined) ?? headerOf(bytes, true) ?? "not_jpeg_or_png";
  if (found === "not_jpeg_or_png") throw refused("image is not a JPEG or PNG.");
  const { width, height } = found;
  if (!width || !height) throw refused("image has no dimensions.");
  if (width > MOST_RATIO * height || height > MOST_RATIO * width) {
    throw refused(`image is ${width}x${height}; its aspect ratio must be between 1:4 and 4:1.`);
  }
  return { width, height };
}

/** What the bytes read so far say; undefined while more are needed (`whole`: there are no more). */
function headerOf(prefix: Buffer, whole: boolean): Header | undefined {
  const type = imageTypeBySignature(prefix);
  if (type !== "image/png" && type !== "image/jpeg") return prefix.length >= 8 || whole ? "not_jpeg_or_png" : undefined;
  try {
    // A copy of its own length: image-size reads through a DataView of the whole
    // ArrayBuffer, so a read past a pooled Buffer's end would see other bytes, not fail.
    const { width, height } = imageSize(new Uint8Array(prefix));
    return { width: width ?? 0, height: height ?? 0 };
  } catch {
    return whole ? "not_jpeg_or_png" : undefined;
  }
}
