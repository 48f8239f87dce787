// OpenAI's images API (docs/media-protocols.md, "OpenAI images"): one
// synchronous POST {base_url}/images/generations (or /images/edits, a
// multipart form with the uploaded images and mask) whose answer is the images,
// `data[].b64_json` (GPT image models, always) or `data[].url` (other models'
// default, valid about an hour: the task service fetches it at once).
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { ImageParameters } from "../../../gen/router/v1/tasks_pb.js";
import { baseUrlOf } from "../base-url.ts";
import type { EditFile, JobOutput, JobState, MediaJobCall, SubmittedJob } from "../media-job.ts";
import { imageTypeBySignature } from "../image-signature.ts";
import { callOpenAiMedia, failedState, SUBMISSION_REFUSALS } from "./media-error.ts";
import { imagesUsage, imageTokensOf } from "./media-usage.ts";

/** The polling URL of a synchronous image job: there is nothing to poll, its answer came with the submission. */
export const SYNCHRONOUS_IMAGE_JOB = "openai-images:synchronous";

const imagesResponse = z.object({
  created: z.number().nullish(),
  data: z.array(z.object({ url: z.string().nullish(), b64_json: z.string().nullish() }).loose()),
  output_format: z.string().nullish(),
  usage: z.unknown().optional(),
});

/** The optional parameters this API carries, each sent under its own name. */
export const OPENAI_IMAGE_PARAMETERS = ["size", "quality", "output_format", "background", "style"] as const;

export async function submitOpenAiImages(call: MediaJobCall, image: ImageParameters, edits?: EditFile[]): Promise<SubmittedJob> {
  const edit = edits !== undefined && edits.length > 0;
  const url = `${baseUrlOf(call.provider)}/images/${edit ? "edits" : "generations"}`;
  // The provider's whole answer comes at once, after the generation: the non-streaming request timeout.
  const answer = await callOpenAiMedia(url, {
    method: "POST",
    headers: { authorization: `Bearer ${call.apiKey}` },
    body: edit ? editFormOf(call, image, edits) : bodyOf(call, image),
    signal: call.signal,
    timeoutMs: call.provider.request_timeout_ms,
    connectTimeoutMs: call.connectTimeoutMs,
    firstByteTimeoutMs: call.firstByteTimeoutMs,
  }, SUBMISSION_REFUSALS);
  // The API names no job: the task's upstream id is the router's own, so the provider-prefixed form still names the task.
  const job = { jobId: `img_${randomUUID().replaceAll("-", "")}`, pollingUrl: SYNCHRONOUS_IMAGE_JOB };
  if (answer.refused) return { ...job, finished: failedState(answer.refused, true) };
  return { ...job, finished: outputsOf(answer.json) };
}

/** A synchronous job polled: only after its answer was lost (its instance stopped before storing it, or its URL did not answer). */
export function lostImageAnswer(): JobState {
  return {
    state: "failed",
    code: "upstream_error",
    message: "The provider's synchronous answer to this image request was lost before its images were stored (the instance running it stopped, or the result could not be fetched); nothing was charged.",
  };
}

/**
 * OpenAI's ImageGenerateParams: the prompt, the route's model id, n and the
 * given options. No `response_format`: GPT image models refuse it (they
 * always answer base64) and the others' default, a URL, is fetched at once.
 */
function bodyOf(call: MediaJobCall, image: ImageParameters): Record<string, unknown> {
  const body: Record<string, unknown> = { prompt: image.prompt, model: call.route.provider_model_id, n: image.n || 1 };
  const given: Record<(typeof OPENAI_IMAGE_PARAMETERS)[number], string> = {
    size: image.size,
    quality: image.quality,
    output_format: image.outputFormat,
    background: image.background,
    style: image.style,
  };
  for (const [field, value] of Object.entries(given)) if (value) body[field] = value;
  return body;
}

/**
 * OpenAI's ImageEditParams as the official SDK sends them, multipart: the
 * fields of a generation (no `style`, which edits do not take), one image as
 * `image` or several as repeated `image[]`, and the mask as `mask`.
 */
function editFormOf(call: MediaJobCall, image: ImageParameters, edits: EditFile[]): FormData {
  const form = new FormData();
  for (const [field, value] of Object.entries(bodyOf(call, image))) if (field !== "style") form.set(field, String(value));
  const images = edits.filter((file) => !file.mask);
  const part = images.length === 1 ? "image" : "image[]";
  for (const file of images) form.append(part, new Blob([file.bytes], { type: file.mediaType }), file.filename || "image");
  const mask = edits.find((file) => file.mask);
  if (mask) form.set("mask", new Blob([mask.bytes], { type: mask.mediaType }), mask.filename || "mask.png");
  return form;
}

/**
 * The images of a 2xx answer; an answer without them is the job's end, failed:
 * thrown, it would leave no job id saved and the task would pay for a new
 * generation at every poll.
 */
function outputsOf(json: unknown): JobState {
  const answer = imagesResponse.safeParse(json);
  if (!answer.success || answer.data.data.length === 0) return unreadableAnswer("no images (data is missing or empty)");
  const outputs: JobOutput[] = [];
  for (const item of answer.data.data) {
    if (item.b64_json) {
      const bytes = Buffer.from(item.b64_json, "base64");
      outputs.push({ bytes, mediaType: imageTypeOf(bytes, answer.data.output_format) });
    } else if (item.url) {
      outputs.push({ url: item.url });
    } else {
      return unreadableAnswer("an image with neither url nor b64_json");
    }
  }
  // Token counts that cannot be read are none: the route's per-image price, or nothing, is charged (never a failure of paid images).
  const usage = imagesUsage.safeParse(answer.data.usage);
  return { state: "succeeded", outputs, ...(usage.success && { tokens: imageTokensOf(usage.data) }) };
}

const unreadableAnswer = (what: string): JobState => ({ state: "failed", code: "upstream_error", message: `The provider's answer to the image request had ${what}; nothing was charged.` });

/** The bytes' type by their signature (a compatible vendor may not say), else the answer's output_format, else PNG. */
function imageTypeOf(bytes: Buffer, outputFormat: string | null | undefined): string {
  return imageTypeBySignature(bytes) ?? (outputFormat === "jpeg" || outputFormat === "webp" ? `image/${outputFormat}` : "image/png");
}
