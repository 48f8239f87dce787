// A media file's type read from its first bytes, not from a header a file host
// or a compatible vendor may get wrong (or a page that is not media at all).
// The types here are the only ones hosted and served (wire/hosted-media.ts).

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const EBML_SIGNATURE = Buffer.from([0x1a, 0x45, 0xdf, 0xa3]);

import type { ImageType, VideoType } from "../../wire/hosted-media.ts";

/** How many first bytes the signatures need. */
export const SIGNATURE_BYTES = 16;

const view = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** image/png, image/jpeg or image/webp by the bytes' signature (the input images providers take); undefined for anything else. */
export function imageTypeBySignature(bytes: Uint8Array): Exclude<ImageType, "image/gif"> | undefined {
  const buffer = view(bytes);
  if (buffer.subarray(0, 8).equals(PNG_SIGNATURE)) return "image/png";
  if (buffer[0] === 0xff && buffer[1] === 0xd8 && buffer[2] === 0xff) return "image/jpeg";
  if (buffer.subarray(0, 4).toString("latin1") === "RIFF" && buffer.subarray(8, 12).toString("latin1") === "WEBP") return "image/webp";
  return undefined;
}

/** An image a provider made, by its signature: the input types, or a GIF. */
export function outputImageTypeBySignature(bytes: Uint8Array): ImageType | undefined {
  const gif = view(bytes).subarray(0, 6).toString("latin1");
  return imageTypeBySignature(bytes) ?? (gif === "GIF87a" || gif === "GIF89a" ? "image/gif" : undefined);
}

/**
 * video/mp4 or video/quicktime (an ISO base media file: its first box is
 * `ftyp`, whose major brand `qt  ` is QuickTime's), or video/webm (an EBML
 * header, Matroska's); undefined for anything else.
 */
export function videoTypeBySignature(bytes: Uint8Array): VideoType | undefined {
  const buffer = view(bytes);
  if (buffer.subarray(4, 8).toString("latin1") === "ftyp") return buffer.subarray(8, 12).toString("latin1") === "qt  " ? "video/quicktime" : "video/mp4";
  if (buffer.subarray(0, 4).equals(EBML_SIGNATURE)) return "video/webm";
  return undefined;
}
