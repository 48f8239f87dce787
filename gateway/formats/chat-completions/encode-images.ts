// Images a model generated, in the shape chat clients of image-capable models
// read (`message.images`, as OpenRouter returns them): data URIs of the bytes.

export function imageOf(mimeType: string, chunks: Uint8Array[]) {
  const base64 = Buffer.concat(chunks).toString("base64");
  return { type: "image_url", image_url: { url: `data:${mimeType || "application/octet-stream"};base64,${base64}` } };
}
