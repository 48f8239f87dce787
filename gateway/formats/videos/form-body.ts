// POST /api/v1/videos as OpenAI's SDK sends it (videos.create): a
// multipart/form-data body of text fields, the reference image as
// `input_reference[image_url]`. Made into the JSON body's shape, so that the
// same checks (decode-request.ts) and the same core request follow.
import { invalidParameter } from "../../../core/errors.ts";

/** The form's name of the reference image URL (the SDK's `input_reference: {image_url}`), our `image`. */
const IMAGE_URL_FIELD = "input_reference[image_url]";
/** Fields whose JSON form is a whole number; a form carries them as text. */
const INTEGER_FIELDS = new Set(["length", "seed"]);

export function videoBodyOfForm(form: FormData): Record<string, unknown> {
  // No prototype: a field named constructor or __proto__ is a field like any other (then refused by name as unknown).
  const body: Record<string, unknown> = Object.create(null);
  for (const [name, value] of form) {
    const isReference = name === "input_reference" || name.startsWith("input_reference[");
    if (isReference && (typeof value !== "string" || name !== IMAGE_URL_FIELD)) {
      throw invalidParameter("input_reference", "input_reference takes an image URL only (input_reference[image_url]): upload the image somewhere the router can fetch it, and send its http(s) URL.");
    }
    if (typeof value !== "string") throw invalidParameter(name, `${name} must be a text field, not a file.`);
    const field = isReference ? "image" : name;
    if (Object.hasOwn(body, field)) throw invalidParameter(isReference ? "input_reference" : name, `${name} is given twice.`);
    body[field] = fieldValue(field, value);
  }
  return body;
}

/** A form's text as the JSON value it stands for, where the field is not text (checked as JSON's next). */
function fieldValue(field: string, text: string): unknown {
  if (INTEGER_FIELDS.has(field) && /^\d+$/.test(text)) return Number(text);
  if (field === "generateAudio" && (text === "true" || text === "false")) return text === "true";
  return text;
}
