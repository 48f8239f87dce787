// Data URIs, the form media take in chat requests (`data:image/png;base64,...`),
// and images and files as data, text or a URL, whichever form a protocol takes.
import type { FilePart, ImagePart } from "../../gen/router/v1/inference_pb.js";

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

/** A file's content as the hub may carry it: a data URI or bare base64 (`file_data`), or text with its type. */
type FileContent = Pick<FilePart, "fileData" | "text" | "mimeType">;

/** A file as a data URI or base64, as the chat formats send it: its own, or a base64 data URI of its text. */
export function fileData(file: FileContent): string {
  return file.text === undefined ? file.fileData : `data:${file.mimeType};base64,${Buffer.from(file.text, "utf8").toString("base64")}`;
}

/**
 * The size in JSON of the data URI fileData makes of a text, without making it
 * (what a text document was measured by when it travelled as one): its prefix
 * as JSON escapes it, then base64, 4 characters per 3 bytes, padded.
 */
export function textDataUriJsonBytes(mimeType: string, text: string): number {
  return Buffer.byteLength(JSON.stringify(`data:${mimeType};base64,`)) - 2 + 4 * Math.ceil(Buffer.byteLength(text, "utf8") / 3);
}

/** A file's data as base64 and its type (bare base64 taken as `bareType`); undefined when it has none (an id, a URL). */
export function fileBase64(file: FileContent, bareType: string): { mimeType: string; data: string } | undefined {
  if (file.text !== undefined) return { mimeType: file.mimeType, data: Buffer.from(file.text, "utf8").toString("base64") };
  if (!file.fileData) return undefined;
  return parseDataUri(file.fileData) ?? { mimeType: bareType, data: file.fileData };
}

/** A file's content: its text when it is plain text (given so, or decoded from its data), else its base64 and type; undefined when it has no data. */
export function fileContent(file: FileContent, bareType: string): { text: string } | { mimeType: string; data: string } | undefined {
  if (file.text !== undefined && file.mimeType === "text/plain") return { text: file.text };
  const data = fileBase64(file, bareType);
  return data?.mimeType === "text/plain" ? { text: Buffer.from(data.data, "base64").toString("utf8") } : data;
}
