// An image edit's uploads (POST /api/v1/images/edits): checked before anything
// is held, stored in the asset store under the task's folder (so they go with
// the task, and an instance that takes the task over reads them), and read
// back when the job is submitted. docs/tasks.md, "Edits".
import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { EditInputSchema, type EditInput, type ImageUpload } from "../../gen/router/v1/tasks_pb.js";
import { invalidParameter } from "../errors.ts";
import type { EditFile, MediaJobAdapter } from "../providers/media-job.ts";
import { imageTypeBySignature } from "../providers/image-signature.ts";
import { readAsset, type AssetStore } from "./asset-store.ts";

/** The longest upload file name kept (it is stored with the task and sent on as the part's file name). */
const MAX_FILENAME_LENGTH = 255;

/**
 * An edit is taken by a model that takes images in, on a provider that edits
 * (its adapter's maxEditImages): at least one image, at most that many, each
 * a PNG, JPEG or WebP by its bytes, and at most one mask, a PNG.
 */
export function checkEditUploads(modelId: string, inputModalities: readonly string[], adapter: MediaJobAdapter, uploads: readonly ImageUpload[]) {
  if (uploads.length === 0) return;
  const most = adapter.maxEditImages ?? 0;
  if (most === 0 || !inputModalities.includes("image")) {
    throw invalidParameter("model", `${modelId} does not edit images (POST /api/v1/images/edits); use a model whose provider does, or POST /api/v1/images/generations (with image URLs as image, where the model takes them).`);
  }
  const images = uploads.filter((upload) => !upload.mask);
  const masks = uploads.filter((upload) => upload.mask);
  if (images.length === 0) throw invalidParameter("image", "An edit needs at least one image file.");
  if (images.length > most) throw invalidParameter("image", `${modelId} edits at most ${most} images at once.`);
  if (masks.length > 1) throw invalidParameter("mask", "An edit takes one mask.");
  for (const upload of images) {
    if (!imageTypeBySignature(upload.data)) throw invalidParameter("image", `Each image must be a PNG, JPEG or WebP file${upload.filename ? ` (${JSON.stringify(upload.filename.slice(0, 64))} is not)` : ""}.`);
  }
  if (masks[0] && imageTypeBySignature(masks[0].data) !== "image/png") throw invalidParameter("mask", "The mask must be a PNG file (its transparent pixels say where to edit).");
  if (uploads.some((upload) => upload.filename.length > MAX_FILENAME_LENGTH)) throw invalidParameter("image", `A file name must be at most ${MAX_FILENAME_LENGTH} characters.`);
}

/** Stores the uploads under the task's folder (`<organisation>/<task id>/edit-<i>`), answering what the task keeps of them. */
export async function storeEditUploads(assets: AssetStore, organizationId: string, taskId: string, uploads: readonly ImageUpload[]): Promise<EditInput[]> {
  const stored: EditInput[] = [];
  for (const [index, upload] of uploads.entries()) {
    const assetName = `${encodeURIComponent(organizationId)}/${taskId}/edit-${index}`;
    await assets.put(assetName, upload.data);
    stored.push(
      create(EditInputSchema, {
        assetName,
        filename: upload.filename,
        mediaType: imageTypeBySignature(upload.data) ?? "image/png",
        sizeBytes: BigInt(upload.data.length),
        sha256: createHash("sha256").update(upload.data).digest("hex"),
        mask: upload.mask,
      }),
    );
  }
  return stored;
}

/** The inputs without where they are stored: what a replay of the same Idempotency-Key must repeat. */
export const editDigestForm = (inputs: readonly EditInput[]) => inputs.map((input) => ({ ...input, assetName: "" }));

/** The task's edit files, read back from the asset store; one gone (the task expired) is an error, and the task is tried again until its deadline. */
export async function loadEditFiles(assets: AssetStore, inputs: readonly EditInput[]): Promise<EditFile[]> {
  const files: EditFile[] = [];
  for (const input of inputs) {
    const read = await readAsset(assets, input.assetName);
    if (!read) throw new Error(`the uploaded image ${input.assetName} of this edit is no longer stored`);
    files.push({ bytes: read.bytes, filename: input.filename, mediaType: input.mediaType, mask: input.mask });
  }
  return files;
}
