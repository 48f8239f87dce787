// Black Forest Labs FLUX (docs/media-protocols.md, "BFL"): POST
// {base_url}/v1/{model} with `x-key` answers {id, polling_url}; the job is
// polled at that polling_url as given (often another host), with the same
// key, until Ready (result.sample, a URL valid about 10 minutes), Error,
// Content Moderated or Request Moderated. One image per job. Sizes go as
// width and height (FLUX1.1 [pro], FLUX.2), ratios as aspect_ratio (Kontext,
// Ultra), input images as the URLs given (input_image, input_image_2, ...:
// BFL fetches them itself).
import { z } from "zod";
import type { ImageParameters } from "../../../gen/router/v1/tasks_pb.js";
import { baseUrlOf } from "../base-url.ts";
import { checkShape } from "../http-exchange.ts";
import { mediaJson } from "../media-http.ts";
import { dimensionsOfSize, type JobState, type MediaJobAdapter, type MediaJobCall, type SubmittedJob } from "../media-job.ts";
import { UpstreamError } from "../types.ts";

const submitted = z.object({ id: z.string(), polling_url: z.string() });
const result = z.object({
  status: z.string(),
  progress: z.number().nullish(),
  result: z.object({ sample: z.string() }).loose().nullish(),
  details: z.unknown().nullish(),
});

export function createBflMediaAdapter(): MediaJobAdapter {
  return {
    maxImagesPerJob: 1,
    imageParameters: ["size", "aspect_ratio", "image", "output_format", "seed"],
    async submitImage(call, image) {
      const url = `${baseUrlOf(call.provider)}/v1/${call.route.provider_model_id}`;
      const json = await mediaJson(url, { method: "POST", headers: { "x-key": call.apiKey }, body: bodyOf(image), signal: call.signal, timeoutMs: call.provider.timeout_ms }, describeError);
      const answer = checkShape(submitted, json);
      return { jobId: answer.id, pollingUrl: answer.polling_url };
    },
    async poll(call: MediaJobCall, job: SubmittedJob): Promise<JobState> {
      const json = await mediaJson(job.pollingUrl, { method: "GET", headers: { "x-key": call.apiKey }, signal: call.signal, timeoutMs: call.provider.timeout_ms }, describeError);
      const answer = checkShape(result, json);
      switch (answer.status) {
        case "Ready":
          if (!answer.result?.sample) throw new UpstreamError("BFL answered Ready without result.sample", { retryable: true, reason: "invalid_shape" });
          return { state: "succeeded", outputs: [{ url: answer.result.sample }] };
        case "Error":
          return { state: "failed", code: "upstream_error", message: messageOf(answer.details, "The generation failed.") };
        case "Content Moderated":
          return { state: "failed", code: "content_moderated", message: messageOf(answer.details, "The generated image was flagged by moderation.") };
        case "Request Moderated":
          return { state: "failed", code: "request_moderated", message: messageOf(answer.details, "The request was flagged by moderation.") };
        case "Task not found":
          return { state: "failed", code: "upstream_error", message: "BFL no longer knows the task (Task not found)." };
        case "Pending":
          return { state: (answer.progress ?? 0) > 0 ? "running" : "queued", progress: answer.progress ?? undefined };
        default:
          // Words outside the documented six (Processing, Queued) are taken as work in progress.
          return { state: "running", progress: answer.progress ?? undefined };
      }
    },
  };
}

function bodyOf(image: ImageParameters): Record<string, unknown> {
  const body: Record<string, unknown> = { prompt: image.prompt };
  const size = dimensionsOfSize(image.size);
  if (size) {
    body.width = size.width;
    body.height = size.height;
  }
  if (image.aspectRatio) body.aspect_ratio = image.aspectRatio;
  for (const [index, url] of image.imageUrls.entries()) body[index === 0 ? "input_image" : `input_image_${index + 1}`] = url;
  if (image.seed !== undefined) body.seed = Number(image.seed);
  // BFL names JPEG `jpeg` as the public field does; it makes no webp (refused before, by the model's details).
  if (image.outputFormat) body.output_format = image.outputFormat;
  return body;
}

/** BFL's `details` as one line: its error text, or its moderation reasons. */
function messageOf(details: unknown, fallback: string): string {
  if (details && typeof details === "object") {
    const record = details as Record<string, unknown>;
    if (typeof record.error === "string") return record.error;
    const reasons = record["Moderation Reasons"];
    if (Array.isArray(reasons) && reasons.length > 0) return `Moderated: ${reasons.join(", ")}`;
    return JSON.stringify(details);
  }
  return typeof details === "string" && details ? details : fallback;
}

/** FastAPI's {"detail": ...}, a string or a list of validation errors. */
function describeError(status: number, text: string): string {
  try {
    const detail = (JSON.parse(text) as { detail?: unknown }).detail;
    if (typeof detail === "string") return `BFL ${status}: ${detail}`;
    if (Array.isArray(detail)) return `BFL ${status}: ${detail.map((item) => (item as { msg?: string }).msg ?? JSON.stringify(item)).join("; ")}`;
  } catch {
    // not JSON: the status says enough
  }
  return `BFL answered ${status}`;
}
