// A video task's input image (image-to-video), checked before anything is
// held: the spec takes it as a URL only (no base64), of a JPEG or PNG whose
// aspect ratio is between 1:4 and 4:1. The core fetches it (with a timeout
// and a size cap) and reads its dimensions from the bytes, whatever the
// server's Content-Type says.
import { imageSize } from "image-size";
import { invalidParameter } from "../errors.ts";

export interface InputImageLimits {
  timeoutMs: number;
  maxBytes: number;
}

export const INPUT_IMAGE_LIMITS: InputImageLimits = { timeoutMs: 10_000, maxBytes: 20 * 1024 * 1024 };

/** The widest and the tallest aspect ratio the spec allows (4:1 and 1:4). */
const MOST_RATIO = 4;

const refused = (message: string) => invalidParameter("image", message);

/** The image's dimensions when the URL serves a JPEG or PNG of an allowed shape; else a 400 naming `image`. */
export async function checkInputImage(url: string, limits: InputImageLimits = INPUT_IMAGE_LIMITS): Promise<{ width: number; height: number }> {
  const parsed = URL.parse(url);
  if (parsed?.protocol !== "http:" && parsed?.protocol !== "https:") {
    throw refused("image must be an http or https URL of a JPEG or PNG; base64 and data: URLs are not taken.");
  }
  const bytes = await fetchCapped(parsed.href, limits);
  let dimensions;
  try {
    dimensions = imageSize(bytes);
  } catch {
    throw refused("image is not a JPEG or PNG.");
  }
  if (dimensions.type !== "jpg" && dimensions.type !== "png") throw refused(`image is ${dimensions.type}; a JPEG or PNG is needed.`);
  const { width, height } = dimensions;
  if (!width || !height) throw refused("image has no dimensions.");
  if (width > MOST_RATIO * height || height > MOST_RATIO * width) {
    throw refused(`image is ${width}x${height}; its aspect ratio must be between 1:4 and 4:1.`);
  }
  return { width, height };
}

/** The body at the URL, refused past the size cap, on a non-2xx answer, or when it does not answer in time. */
async function fetchCapped(url: string, limits: InputImageLimits): Promise<Buffer> {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(limits.timeoutMs) });
  } catch (error) {
    throw refused(`image could not be fetched: ${(error as Error).message}`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw refused(`image could not be fetched: its URL answered ${response.status}.`);
  }
  const tooLarge = () => refused(`image is larger than ${limits.maxBytes} bytes.`);
  if (Number(response.headers.get("content-length") ?? 0) > limits.maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    // Leaving the loop early (past the cap) cancels the rest of the body.
    for await (const chunk of response.body ?? []) {
      size += chunk.length;
      if (size > limits.maxBytes) break;
      chunks.push(chunk);
    }
  } catch (error) {
    throw refused(`image could not be read: ${(error as Error).message}`);
  }
  if (size > limits.maxBytes) throw tooLarge();
  return Buffer.concat(chunks);
}
