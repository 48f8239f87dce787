// OpenAI's videos API (docs/media-protocols.md, "OpenAI videos", the spec's
// progress style), which OpenAI-compatible video vendors copy: POST
// {base_url}/videos as multipart/form-data (as the official SDK sends it),
// GET {base_url}/videos/{id} until `completed` or `failed`, then the MP4 at
// GET {base_url}/videos/{id}/content, with the key.
import { z } from "zod";
import type { VideoParameters } from "../../../gen/router/v1/tasks_pb.js";
import { baseUrlOf } from "../base-url.ts";
import { checkShape } from "../http-exchange.ts";
import type { JobState, MediaJobCall, SubmittedJob } from "../media-job.ts";
import { refusedJob } from "../refused-job.ts";
import { callOpenAiMedia, failedState, POLL_REFUSALS, SUBMISSION_REFUSALS } from "./media-error.ts";

/** The public video parameters this API carries: `seconds` and `size` are its own fields, `image` its input_reference URL. */
export const OPENAI_VIDEO_PARAMETERS = ["image", "seconds", "size"] as const;

const video = z.object({
  id: z.string(),
  status: z.string(),
  progress: z.number().nullish(),
  seconds: z.string().nullish(),
  error: z.object({ code: z.string().nullish(), message: z.string().nullish() }).loose().nullish(),
});

export async function submitOpenAiVideo(call: MediaJobCall, parameters: VideoParameters): Promise<SubmittedJob> {
  const base = baseUrlOf(call.provider);
  const answer = await callOpenAiMedia(`${base}/videos`, {
    method: "POST",
    headers: { authorization: `Bearer ${call.apiKey}` },
    body: formOf(call, parameters),
    signal: call.signal,
    timeoutMs: call.provider.timeout_ms,
  }, SUBMISSION_REFUSALS);
  if (answer.refused) {
    // Refused at creation (the prompt, by moderation, or the parameters): no job exists, so the id is the router's own.
    return refusedJob(failedState(answer.refused, true));
  }
  const created = checkShape(video, answer.json);
  return { jobId: created.id, pollingUrl: `${base}/videos/${encodeURIComponent(created.id)}` };
}

export async function pollOpenAiVideo(call: MediaJobCall, job: SubmittedJob): Promise<JobState> {
  const answer = await callOpenAiMedia(job.pollingUrl, { method: "GET", headers: { authorization: `Bearer ${call.apiKey}` }, signal: call.signal, timeoutMs: call.provider.timeout_ms }, POLL_REFUSALS);
  // The provider no longer knows the video (404), or will not say (401, 403): polling again would not change it.
  // Anything else (a 5xx, a 429) was thrown and is polled again: the video goes on at the provider meanwhile.
  if (answer.refused) return failedState(answer.refused);
  const polled = checkShape(video, answer.json);
  const progress = polled.progress == null ? undefined : Math.min(1, Math.max(0, polled.progress / 100));
  switch (polled.status) {
    case "queued":
      return { state: "queued", progress };
    case "completed":
      return {
        state: "succeeded",
        outputs: [
          {
            // The bytes are behind the key (the headers go with the download only, never stored).
            url: `${job.pollingUrl}/content`,
            headers: { authorization: `Bearer ${call.apiKey}`, accept: "application/binary" },
            mediaType: "video/mp4",
            upstreamId: polled.id,
            durationSeconds: Number(polled.seconds) || undefined,
          },
        ],
      };
    case "failed":
      return failedState({ code: polled.error?.code ?? "", message: polled.error?.message || "The video generation failed.", moderationStage: "" });
    default:
      // in_progress, and words the API may add: work goes on.
      return { state: "running", progress };
  }
}

/** VideoCreateParams as multipart fields: `seconds` a string, an image URL as `input_reference[image_url]` (the SDK's encoding of {image_url}). */
function formOf(call: MediaJobCall, parameters: VideoParameters): FormData {
  const form = new FormData();
  form.set("prompt", parameters.prompt);
  form.set("model", call.route.provider_model_id);
  if (parameters.seconds > 0) form.set("seconds", String(parameters.seconds));
  if (parameters.size) form.set("size", parameters.size);
  if (parameters.imageUrl) form.set("input_reference[image_url]", parameters.imageUrl);
  return form;
}
