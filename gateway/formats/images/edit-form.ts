// POST /api/v1/images/edits as OpenAI's SDK sends it (images.edit): a
// multipart/form-data body of text fields and files, one image as `image`,
// several as repeated `image[]`, and an optional `mask`. The text fields are
// made into the generation body's shape, so the same checks
// (decode-request.ts) and the same core request follow; the files become the
// request's edit uploads (docs/tasks.md, "Edits").
import { create } from "@bufbuild/protobuf";
import { ImageUploadSchema, type ImageUpload } from "../../../gen/router/v1/tasks_pb.js";
import { invalidParameter } from "../../../core/errors.ts";

/** The text fields an edit takes: a generation's, less those edits do not have (style, seed, aspect_ratio, image URLs, webhook_url). */
const TEXT_FIELDS = new Set(["prompt", "model", "n", "size", "quality", "output_format", "background", "response_format", "response_type", "user"]);
/** Fields whose JSON form is a whole number; a form carries them as text. */
const INTEGER_FIELDS = new Set(["n"]);

export interface EditForm {
  body: Record<string, unknown>;
  uploads: ImageUpload[];
}

export async function editOfForm(form: unknown): Promise<EditForm> {
  if (!(form instanceof FormData)) throw invalidParameter("image", "POST /api/v1/images/edits takes a multipart/form-data body: the image files as image (or image[]), an optional mask, and the text fields.");
  // No prototype: a field named constructor or __proto__ is a field like any other (then refused by name).
  const body: Record<string, unknown> = Object.create(null);
  const uploads: ImageUpload[] = [];
  for (const [name, value] of form) {
    if (name === "image" || name === "image[]" || name === "mask") {
      const param = name === "mask" ? "mask" : "image";
      if (typeof value === "string") throw invalidParameter(param, `${name} must be a file (an uploaded image), not a text field.`);
      if (name === "mask" && uploads.some((upload) => upload.mask)) throw invalidParameter("mask", "mask is given twice.");
      uploads.push(create(ImageUploadSchema, { data: new Uint8Array(await value.arrayBuffer()), filename: value.name, mask: name === "mask" }));
      continue;
    }
    if (!TEXT_FIELDS.has(name)) throw invalidParameter(name, `Unrecognized field ${JSON.stringify(name.slice(0, 64))} for an image edit.`);
    if (typeof value !== "string") throw invalidParameter(name, `${name} must be a text field, not a file.`);
    if (Object.hasOwn(body, name)) throw invalidParameter(name, `${name} is given twice.`);
    body[name] = INTEGER_FIELDS.has(name) && /^\d+$/.test(value) ? Number(value) : value;
  }
  if (!uploads.some((upload) => !upload.mask)) throw invalidParameter("image", "An edit needs at least one image file (image, or image[] for several).");
  return { body, uploads };
}
