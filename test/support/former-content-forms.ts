// Content parts in the form the Messages decoder gave them before content
// travelled as data: an image as a URL or data URI (ImagePart had no data and
// mime_type fields), a text document as a base64 data URI of its UTF-8 bytes,
// a tool_use input as its JSON text. Tests compare the new forms against them.
import type { ContentPart, ImagePart } from "../../gen/router/v1/inference_pb.js";

export const textDataUri = (text: string) => `data:text/plain;base64,${Buffer.from(text, "utf8").toString("base64")}`;

/** A part (and a tool result's parts) in the former form. */
export function formerForm(content: ContentPart): ContentPart {
  const { part } = content;
  if (part.case === "image") {
    const { data, mimeType, ...image } = part.value;
    // The message as its schema was: without the two fields, not with them empty.
    return { ...content, part: { case: "image", value: { ...image, url: data ? `data:${mimeType};base64,${data}` : image.url } as ImagePart } };
  }
  if (part.case === "file" && part.value.text !== undefined) {
    const { text, ...file } = part.value;
    return { ...content, part: { case: "file", value: { ...file, fileData: textDataUri(text) } } };
  }
  if (part.case === "toolCall" && part.value.input) {
    const { input, ...call } = part.value;
    return { ...content, part: { case: "toolCall", value: { ...call, arguments: JSON.stringify(input) } } };
  }
  if (part.case === "toolResult") return { ...content, part: { case: "toolResult", value: { ...part.value, content: part.value.content.map(formerForm) } } };
  return content;
}
