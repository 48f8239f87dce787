// An image's type read from its first bytes, not from a header a file host or
// a compatible vendor may get wrong.

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** image/png, image/jpeg or image/webp by the bytes' signature; undefined for anything else. */
export function imageTypeBySignature(bytes: Uint8Array): "image/png" | "image/jpeg" | "image/webp" | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.subarray(0, 8).equals(PNG_SIGNATURE)) return "image/png";
  if (buffer[0] === 0xff && buffer[1] === 0xd8 && buffer[2] === 0xff) return "image/jpeg";
  if (buffer.subarray(0, 4).toString("latin1") === "RIFF" && buffer.subarray(8, 12).toString("latin1") === "WEBP") return "image/webp";
  return undefined;
}
