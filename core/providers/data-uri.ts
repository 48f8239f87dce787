// Data URIs, the form media take in chat requests (`data:image/png;base64,...`),
// and images as data or as a URL, whichever form a protocol takes.
import type { ImagePart } from "../../gen/router/v1/inference_pb.js";

/** `data:<mime>;base64,<data>` split, or undefined when the text is no base64 data URI. */
export function parseDataUri(uri: string): { mimeType: string; data: string } | undefined {
  const match = /^data:([^;,]+)(?:;[^;,]*)*;base64,(.*)$/s.exec(uri);
  return match ? { mimeType: match[1], data: match[2] } : undefined;
}

/** An image as base64 data and its type: given so, or split from a data URI; undefined for a web URL. */
export function imageData(image: Pick<ImagePart, "url" | "data" | "mimeType">): { mimeType: string; data: string } | undefined {
  return image.data ? { mimeType: image.mimeType, data: image.data } : parseDataUri(image.url);
}

/** An image as a URL: its own, or a data URI of its data. */
export function imageUrl(image: Pick<ImagePart, "url" | "data" | "mimeType">): string {
  return image.data ? `data:${image.mimeType};base64,${image.data}` : image.url;
}
