// Pollo.ai (docs/media-protocols.md, "Pollo"): POST
// {base_url}/generation/{brand}/{model} with `x-api-key` and the model's fields
// inside `input` answers {taskId, status: "waiting"}; the task is polled at
// {base_url}/generation/{taskId}/status until its generations end, each with its
// own id, status (waiting, processing, succeed, failed), failMsg and url (kept
// by Pollo up to 14 days). Answers come flat, as Pollo's OpenAPI document shows,
// or inside {code: "SUCCESS", message, data}, as the live API was seen to answer:
// both are read. Videos only here (the fake makes no images).
import { z } from "zod";
import { VideoResultStyle, type VideoParameters } from "../../../gen/router/v1/tasks_pb.js";
import { baseUrlOf } from "../base-url.ts";
import { checkShape } from "../http-exchange.ts";
import { mediaJson } from "../media-http.ts";
import type { JobOutput, JobState, MediaJobAdapter, MediaJobCall, SubmittedJob } from "../media-job.ts";
import { UpstreamError, upstreamHttpError } from "../types.ts";

const created = z.object({ taskId: z.string().min(1) }).loose();
const generation = z
  .object({
    id: z.string(),
    status: z.string(),
    failMsg: z.string().nullish(),
    url: z.string().nullish(),
    mediaType: z.string().nullish(),
  })
  .loose();
const taskStatus = z.object({ taskId: z.string().nullish(), generations: z.array(generation).nullish() }).loose();

/** Pollo's `mediaType` words as content types, for a download that names none. */
const CONTENT_TYPES: Record<string, string> = { video: "video/mp4" };

export function createPolloMediaAdapter(): MediaJobAdapter {
  return {
    maxImagesPerJob: 0,
    imageParameters: [],
    videoParameters: ["image", "length", "resolution", "aspectRatio", "mode", "seed", "generateAudio"],
    videoResultStyle: VideoResultStyle.PER_GENERATION,
    async submitVideo(call: MediaJobCall, video: VideoParameters): Promise<SubmittedJob> {
      const json = await polloJson(`${baseOf(call)}/generation/${modelPath(call.route.provider_model_id)}`, call, { input: inputOf(video) });
      const { taskId } = checkShape(created, json);
      return { jobId: taskId, pollingUrl: `${baseOf(call)}/generation/${encodeURIComponent(taskId)}/status` };
    },
    async poll(call: MediaJobCall, job: SubmittedJob): Promise<JobState> {
      const answer = checkShape(taskStatus, await polloJson(job.pollingUrl, call));
      return stateOf(answer.generations ?? []);
    },
  };
}

/** The public video parameters under Pollo's own `input` names (numbers stay numbers: Pollo's `length` is a number). */
function inputOf(video: VideoParameters): Record<string, unknown> {
  const input: Record<string, unknown> = { prompt: video.prompt };
  if (video.imageUrl) input.image = video.imageUrl;
  if (video.length) input.length = video.length;
  if (video.resolution) input.resolution = video.resolution;
  if (video.aspectRatio) input.aspectRatio = video.aspectRatio;
  if (video.mode) input.mode = video.mode;
  // At most 2^32-1 (planVideo's check): exact as a number.
  if (video.seed !== undefined) input.seed = Number(video.seed);
  if (video.generateAudio !== undefined) input.generateAudio = video.generateAudio;
  return input;
}

/**
 * One task's state from its generations: failed as soon as one failed (with its
 * failMsg), succeeded once every one succeeded, running while any is processing
 * (or some are done and others not), else queued. Pollo gives no progress figure.
 */
function stateOf(generations: z.infer<typeof generation>[]): JobState {
  const failed = generations.find((item) => item.status === "failed");
  if (failed) {
    const message = failed.failMsg || "Pollo reported the generation failed.";
    return { state: "failed", code: isModeration(message) ? "content_moderated" : "upstream_error", message };
  }
  if (generations.length > 0 && generations.every((item) => item.status === "succeed")) {
    return { state: "succeeded", outputs: generations.map(outputOf) };
  }
  // Anything past waiting (processing, a finished generation beside an unfinished one, a word Pollo may add) is work under way.
  return { state: generations.some((item) => item.status !== "waiting") ? "running" : "queued" };
}

function outputOf(item: z.infer<typeof generation>): JobOutput {
  if (!item.url) throw new UpstreamError("Pollo answered succeed without the generation's url", { retryable: true, reason: "invalid_shape" });
  const mediaType = item.mediaType ? CONTENT_TYPES[item.mediaType] : undefined;
  return { url: item.url, upstreamId: item.id, ...(mediaType ? { mediaType } : {}) };
}

/**
 * Pollo has one failure status for every cause; its moderation refusals say so in
 * their words ("may violate our community guidelines", "sensitive content").
 */
function isModeration(message: string): boolean {
  return /community guidelines|violat|sensitive|moderat|inappropriate|nsfw/i.test(message);
}

async function polloJson(url: string, call: MediaJobCall, body?: unknown): Promise<unknown> {
  const json = await mediaJson(
    url,
    { method: body === undefined ? "GET" : "POST", headers: { "x-api-key": call.apiKey }, body, signal: call.signal, timeoutMs: call.provider.timeout_ms },
    describeError,
  );
  return unwrap(json);
}

/** The payload out of {code: "SUCCESS", message, data}, or the flat answer as it is; an envelope carrying another code is that error. */
function unwrap(json: unknown): unknown {
  if (!json || typeof json !== "object" || !("code" in json)) return json;
  const { code, message, data } = json as { code?: unknown; message?: unknown; data?: unknown };
  if (code === "SUCCESS") return data;
  const word = String(code);
  throw upstreamHttpError(TRPC_STATUS[word] ?? 502, `Pollo ${word}: ${typeof message === "string" ? message : "no message"}`);
}

/** tRPC's error codes (Pollo's API is tRPC-based) and the HTTP status tRPC gives each. */
const TRPC_STATUS: Record<string, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  TIMEOUT: 408,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNPROCESSABLE_CONTENT: 422,
  TOO_MANY_REQUESTS: 429,
  INTERNAL_SERVER_ERROR: 500,
};

/** Pollo's error body {message, code, issues?} as one line, with the fields a validation error names. */
function describeError(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown; code?: unknown; issues?: unknown };
    if (typeof body.message === "string") {
      const issues = Array.isArray(body.issues) ? body.issues.map(issueText).filter(Boolean) : [];
      return `Pollo ${status}${typeof body.code === "string" ? ` ${body.code}` : ""}: ${body.message}${issues.length ? ` (${issues.join("; ")})` : ""}`;
    }
  } catch {
    // not JSON: the status says enough
  }
  return `Pollo answered ${status}`;
}

/** One zod issue of a BAD_REQUEST: `input.length: Invalid enum value`. */
function issueText(issue: unknown): string {
  if (!issue || typeof issue !== "object") return "";
  const { path, message } = issue as { path?: unknown; message?: unknown };
  const where = Array.isArray(path) ? path.join(".") : "";
  return [where, typeof message === "string" ? message : ""].filter(Boolean).join(": ");
}

const baseOf = (call: MediaJobCall) => baseUrlOf(call.provider);

/** `{brand}/{model}` as two path segments; anything else is a catalogue mistake Pollo would 404 on. */
function modelPath(providerModelId: string): string {
  const parts = providerModelId.split("/");
  if (parts.length !== 2 || parts.some((part) => !part)) {
    throw new UpstreamError(`Pollo's provider_model_id must be "{brand}/{model}", not "${providerModelId}"`, { status: 400, retryable: false, reason: "invalid_model_id" });
  }
  return parts.map(encodeURIComponent).join("/");
}
