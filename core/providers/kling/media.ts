// The official Kling API's video generation (docs/media-protocols.md, "Kling"):
// every call carries a fresh HS256 JWT (iss the access key, signed with the
// secret key); POST {base_url}/v1/videos/text2video, or image2video when an
// image is given, answers data.task_id; the job is polled at
// GET {base_url}/v1/videos/{kind}/{task_id} until data.task_status is succeed
// (task_result.videos[{id, url, duration}]) or failed (task_status_msg).
// Kling reports no progress figure. The spec's "data style".
import { SignJWT } from "jose";
import { z } from "zod";
import { VideoResultStyle, type VideoParameters } from "../../../gen/router/v1/tasks_pb.js";
import { baseUrlOf } from "../base-url.ts";
import { checkShape } from "../http-exchange.ts";
import { mediaJson } from "../media-http.ts";
import type { JobState, MediaJobAdapter, MediaJobCall, SubmittedJob, VideoRefusal } from "../media-job.ts";
import { refusedJob } from "../refused-job.ts";
import { UpstreamError } from "../types.ts";

/** How long each token is valid: Kling's documented example (30 minutes); one is made per request anyway. */
const TOKEN_SECONDS = 1800;
/** nbf this far back, as Kling's example does, so a clock a little ahead of Kling's is not refused (1003). */
const NOT_BEFORE_SKEW_SECONDS = 5;

/** Kling's error codes that end a submission rather than being tried again (docs/media-protocols.md). */
const CONTENT_SECURITY = 1301;
/** 1100 account exception, 1101 arrears, 1102 resource pack used up: sent with 429, yet no wait cures them. */
const ACCOUNT_REFUSALS = new Set([1100, 1101, 1102]);
/** 1203: the resource does not exist (an unknown or deleted task). */
const NOT_FOUND = 1203;

const envelope = z.object({ code: z.number(), message: z.string().nullish(), request_id: z.string().nullish(), data: z.unknown() });
const created = z.object({ task_id: z.string() }).loose();
const task = z
  .object({
    task_id: z.string(),
    task_status: z.string(),
    task_status_msg: z.string().nullish(),
    task_result: z
      .object({ videos: z.array(z.object({ id: z.string().nullish(), url: z.string(), duration: z.union([z.string(), z.number()]).nullish() }).loose()).nullish() })
      .loose()
      .nullish(),
  })
  .loose();

export interface KlingMediaOptions {
  /** The clock the tokens are dated by (tests move it). */
  now?: () => number;
}

export function createKlingMediaAdapter(options: KlingMediaOptions = {}): MediaJobAdapter {
  const now = options.now ?? Date.now;
  const authorization = async (call: MediaJobCall) => ({ authorization: `Bearer ${await klingToken(call.apiKey, call.secretKey ?? "", now())}` });
  return {
    maxImagesPerJob: 0,
    imageParameters: [],
    // Kling carries no seed, and its resolution follows the mode (std 720p, pro 1080p).
    videoParameters: ["image", "length", "aspectRatio", "mode", "generateAudio"],
    videoResultStyle: VideoResultStyle.DATA,
    checkVideo: imageFrameRefusal,
    async submitVideo(call, video): Promise<SubmittedJob> {
      const kind = video.imageUrl ? "image2video" : "text2video";
      const base = baseUrlOf(call.provider);
      const answer = await klingCall(`${base}/v1/videos/${kind}`, { method: "POST", headers: await authorization(call), body: bodyOf(call, video), signal: call.signal, timeoutMs: call.provider.timeout_ms });
      if (answer.ok) {
        const { task_id } = checkShape(created, answer.data);
        return { jobId: task_id, pollingUrl: `${base}/v1/videos/${kind}/${encodeURIComponent(task_id)}` };
      }
      // Refusals that will not change on a retry end the task at once with Kling's words; the others
      // (429 rate limits, 5xx) are retried by the task service.
      // No task exists at Kling: the upstream id is the router's own (Kling's request_id may be absent, and is no task's id).
      if (answer.code === CONTENT_SECURITY) return refusedJob({ state: "failed", code: "request_moderated", message: answer.message });
      if (ACCOUNT_REFUSALS.has(answer.code)) return refusedJob({ state: "failed", code: "upstream_error", message: answer.message });
      throw answer.error;
    },
    async poll(call, job): Promise<JobState> {
      const answer = await klingCall(job.pollingUrl, { method: "GET", headers: await authorization(call), signal: call.signal, timeoutMs: call.provider.timeout_ms });
      if (!answer.ok) {
        if (answer.code === NOT_FOUND) return { state: "failed", code: "upstream_error", message: `Kling no longer knows the task (${answer.message}).` };
        throw answer.error;
      }
      const state = checkShape(task, answer.data);
      switch (state.task_status) {
        case "submitted":
          return { state: "queued" };
        case "processing":
          return { state: "running" };
        case "succeed": {
          const videos = state.task_result?.videos ?? [];
          if (videos.length === 0) throw new UpstreamError("Kling answered succeed without task_result.videos", { retryable: true, reason: "invalid_shape" });
          return { state: "succeeded", outputs: videos.map((video) => ({ url: video.url, mediaType: "video/mp4", upstreamId: video.id ?? undefined, durationSeconds: secondsOf(video.duration) })) };
        }
        case "failed": {
          const message = state.task_status_msg || "Kling failed the task without saying why.";
          // Kling has no separate status for moderated output: its message names its risk control.
          return { state: "failed", code: /risk control|content security/i.test(message) ? "content_moderated" : "upstream_error", message };
        }
        default:
          // A status word outside the documented four is taken as work in progress.
          return { state: "running" };
      }
    },
  };
}

/** A token as Kling's documentation builds it: HS256 over {iss: access key, exp, nbf}, signed with the secret key. */
export function klingToken(accessKey: string, secretKey: string, nowMs: number): Promise<string> {
  const seconds = Math.floor(nowMs / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(accessKey)
    .setExpirationTime(seconds + TOKEN_SECONDS)
    .setNotBefore(seconds - NOT_BEFORE_SKEW_SECONDS)
    .sign(new TextEncoder().encode(secretKey));
}

/** The public parameters in Kling's names and forms: `duration` a string of seconds, `sound` on or off. */
function bodyOf(call: MediaJobCall, video: VideoParameters): Record<string, unknown> {
  const body: Record<string, unknown> = { model_name: call.route.provider_model_id, prompt: video.prompt };
  const unfit = imageFrameRefusal(video);
  if (unfit) throw new UpstreamError(unfit.message, { status: 400, retryable: false, reason: "invalid_request" });
  if (video.imageUrl) {
    body.image = video.imageUrl;
  } else if (video.aspectRatio) {
    body.aspect_ratio = video.aspectRatio;
  }
  if (video.length > 0) body.duration = String(video.length);
  if (video.mode) body.mode = video.mode;
  if (video.generateAudio !== undefined) body.sound = video.generateAudio ? "on" : "off";
  return body;
}

/** image2video takes its frame from the image and has no aspect_ratio: refused (at create, by planVideo) rather than dropped. */
function imageFrameRefusal(video: VideoParameters): VideoRefusal | undefined {
  if (video.imageUrl && video.aspectRatio) return { param: "aspectRatio", message: "Kling's image-to-video takes its aspect ratio from the image: aspectRatio cannot be given with image." };
  return undefined;
}

function secondsOf(duration: string | number | null | undefined): number | undefined {
  const seconds = Number(duration);
  return duration !== null && duration !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

type KlingAnswer = { ok: true; data: unknown } | { ok: false; code: number; message: string; error: UpstreamError };

/**
 * One call: Kling's envelope {code, message, request_id, data}. A refusal (an
 * HTTP error, or a code other than 0) comes back with Kling's code and words
 * and the UpstreamError to throw when the caller does not handle that code.
 */
async function klingCall(url: string, request: Parameters<typeof mediaJson>[1]): Promise<KlingAnswer> {
  let refusal: { code: number; message: string } | undefined;
  try {
    const answer = checkShape(envelope, await mediaJson(url, request, (status, text) => describe(status, (refusal = refusalOf(text)))));
    if (answer.code === 0) return { ok: true, data: answer.data };
    const message = `Kling refused (code ${answer.code}): ${answer.message ?? ""}`.trim();
    return { ok: false, code: answer.code, message, error: new UpstreamError(message, { retryable: true, reason: `kling_${answer.code}` }) };
  } catch (error) {
    if (refusal && error instanceof UpstreamError) return { ok: false, ...refusal, message: error.message, error };
    throw error;
  }
}

function refusalOf(text: string): { code: number; message: string } | undefined {
  try {
    const body = JSON.parse(text) as { code?: unknown; message?: unknown };
    if (typeof body.code !== "number") return undefined;
    return { code: body.code, message: typeof body.message === "string" ? body.message : "" };
  } catch {
    return undefined;
  }
}

function describe(status: number, refusal: { code: number; message: string } | undefined): string {
  return refusal ? `Kling ${status} (code ${refusal.code}): ${refusal.message}` : `Kling answered ${status}`;
}
