// Media a model generated, in the shapes chat clients read: images as
// `message.images` data URIs (as OpenRouter returns them), audio as OpenAI's
// `message.audio` (base64 `data`, plus its `format` so a client can play it).

export function imageOf(mimeType: string, chunks: readonly Uint8Array[]) {
  const base64 = Buffer.concat(chunks).toString("base64");
  return { type: "image_url", image_url: { url: `data:${mimeType || "application/octet-stream"};base64,${base64}` } };
}

/**
 * The gateway keeps no copy of generated audio, so it cannot be referenced by
 * id in a later turn: `expires_at` is the answer's own creation time.
 */
export function audioOf(id: string, createdAt: number, mimeType: string, chunks: readonly Uint8Array[]) {
  return { id, data: Buffer.concat(chunks).toString("base64"), format: audioFormat(mimeType), transcript: "", expires_at: createdAt };
}

/** `audio/mpeg` -> `mp3`, `audio/wav` -> `wav`, raw 16-bit PCM (Gemini speech's `audio/L16`) -> `pcm16`: OpenAI's names. */
function audioFormat(mimeType: string): string {
  const subtype = (mimeType.split(";")[0].split("/")[1] ?? "").toLowerCase();
  if (subtype === "mpeg" || subtype === "mp3") return "mp3";
  if (subtype === "x-wav" || subtype === "wave") return "wav";
  if (subtype === "l16" || subtype === "pcm") return "pcm16";
  return subtype || "unknown";
}
