// A fake of OpenAI's media endpoints, for tests (docs/media-protocols.md, "OpenAI").
//   POST /v1/images/generations  synchronous. GPT image models (gpt-image-*) answer
//        b64_json with token usage and refuse response_format; other models (dall-e-*)
//        answer `url` (default) or b64_json, the URL dead (403, Azure SAS) after
//        assetTtlMs (default 60 minutes).
//   POST /v1/images/edits    multipart/form-data as the SDK sends it: `image` or repeated
//        `image[]` files, an optional `mask` file, and the generation's text fields
//        (each recorded in `edits`); answered as a generation, its usage counting
//        EDIT_IMAGE_TOKENS input image tokens per image.
//   POST /v1/videos               multipart/form-data (as the SDK sends it) or JSON; the
//        Video object, queued.
//   GET  /v1/videos/{id}          one poll: queued (progress 0), in_progress (50),
//        completed (100) with expires_at, or failed with error {code, message}.
//   GET  /v1/videos/{id}/content  the MP4, with the key; 404 before completion and
//        after expires_at (default one hour after completion).
// Every call needs `Authorization: Bearer <key>` with the fake's key (401 otherwise).
// Prompts pick failures (fake-media-common.ts): FAIL_PROMPT (images: a 500; videos:
// failed), MODERATE_PROMPT and REFUSE_PROMPT (images: 400, gpt-image-* with type
// image_generation_user_error, code moderation_blocked and moderation_details at the
// output or input stage, dall-e-* with code content_policy_violation; videos:
// MODERATE_PROMPT ends failed with moderation_blocked, REFUSE_PROMPT is a 400
// moderation_blocked at creation), STALL_PROMPT (videos: in_progress forever).
// answerNextWith(method, path, status, body) answers the next call matching it so once
// (an outage's 503 on a submission or a poll, a vendor's odd 200), then as usual.
import type http from "node:http";
import {
  AssetHost,
  AZURE_SAS_EXPIRED,
  JobBook,
  type FakeJob,
  type FakeMediaUpstream,
  type JobPhase,
  type MediaFakeOptions,
  outcomeOf,
  safely,
  send,
  sendJson,
  splitPath,
  TINY_MP4,
  TINY_PNG,
  unixSeconds,
} from "./fake-media-common.ts";
import { startRecordingServer, type RecordedRequest } from "./recording-server.ts";

export const OPENAI_MEDIA_KEY = "sk-media-test";
export const OPENAI_VIDEO_SECONDS = ["4", "8", "12"];
export const OPENAI_VIDEO_SIZES = ["720x1280", "1280x720", "1024x1792", "1792x1024"];
/** OpenAI's message for a prompt its safety system refuses (images and videos). */
export const OPENAI_MODERATION_MESSAGE = "Your request was rejected by the safety system. If you believe this is an error, contact us at help.openai.com and include the request ID.";
/** The older (DALL-E) refusal, code content_policy_violation. */
export const DALLE_MODERATION_MESSAGE = "Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.";
export const OPENAI_VIDEO_FAILURE_MESSAGE = "Video generation failed.";

export interface OpenAiMediaOptions extends MediaFakeOptions {
  key?: string;
  /** How long a finished video's content can be downloaded, in ms (default one hour). */
  videoTtlMs?: number;
}

type Json = Record<string, any>;

/** The input image tokens the fake reports for each image of an edit. */
export const EDIT_IMAGE_TOKENS = 323;

/** One edit as the fake received it: its text fields, and its files by part name, in order. */
export interface ReceivedEdit {
  fields: Record<string, string>;
  files: { part: string; filename: string; type: string; bytes: Buffer }[];
}

export interface FakeOpenAiMedia extends FakeMediaUpstream {
  /** The edits received, in order. */
  edits: ReceivedEdit[];
  /** The next call of `method` whose path matches `path` is answered `status` with `body` (JSON), once. */
  answerNextWith(method: string, path: RegExp, status: number, body: unknown): void;
}

function openAiError(res: http.ServerResponse, status: number, message: string, type: string, param: string | null, code: string | null) {
  sendJson(res, status, { error: { message, type, param, code } });
}

export async function startFakeOpenAiMedia(options: OpenAiMediaOptions = {}): Promise<FakeOpenAiMedia> {
  const key = options.key ?? OPENAI_MEDIA_KEY;
  const now = options.now ?? Date.now;
  const videoTtlMs = options.videoTtlMs ?? 60 * 60_000;
  const jobs = new JobBook(options);
  const cdn = new AssetHost(options.assetTtlMs ?? 60 * 60_000, AZURE_SAS_EXPIRED, options.now, options.resultFile);
  let imageCount = 0;
  const edits: ReceivedEdit[] = [];
  const oneOffAnswers: { method: string; path: RegExp; status: number; body: unknown }[] = [];

  const upstream = await startRecordingServer(
    "/v1",
    safely(async (request, res) => {
      if (cdn.serve(request, res)) return;
      if (refusedAuth(request, res, key)) return;
      const { pathname } = splitPath(request.path);
      const oneOff = oneOffAnswers.findIndex((answer) => answer.method === request.method && answer.path.test(pathname));
      if (oneOff >= 0) return sendJson(res, oneOffAnswers[oneOff].status, oneOffAnswers.splice(oneOff, 1)[0].body);
      if (request.method === "POST" && pathname === "/v1/images/generations") return generateImages(request.body, res);
      if (request.method === "POST" && pathname === "/v1/images/edits") return editImages(request, res);
      if (request.method === "POST" && pathname === "/v1/videos") return createVideo(request, res);
      const content = /^\/v1\/videos\/([^/]+)\/content$/.exec(pathname);
      if (request.method === "GET" && content) return downloadVideo(decodeURIComponent(content[1]), splitPath(request.path).query, res);
      const video = /^\/v1\/videos\/([^/]+)$/.exec(pathname);
      if (request.method === "GET" && video) return retrieveVideo(decodeURIComponent(video[1]), res);
      openAiError(res, 404, `Invalid URL (${request.method} ${pathname})`, "invalid_request_error", null, null);
    }),
  );
  const origin = new URL(upstream.url).origin;
  cdn.setOrigin(origin);

  async function editImages(request: RecordedRequest, res: http.ServerResponse) {
    const contentType = String(request.headers["content-type"] ?? "");
    if (!contentType.startsWith("multipart/form-data")) return openAiError(res, 400, "The request body must be multipart/form-data.", "invalid_request_error", null, null);
    const form = await new Response(request.raw, { headers: { "content-type": contentType } }).formData();
    const edit: ReceivedEdit = { fields: {}, files: [] };
    for (const [part, value] of form.entries()) {
      if (typeof value === "string") edit.fields[part] = value;
      else edit.files.push({ part, filename: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) });
    }
    edits.push(edit);
    const images = edit.files.filter((file) => file.part === "image" || file.part === "image[]");
    if (images.length === 0) return openAiError(res, 400, "Missing required parameter: 'image'.", "invalid_request_error", "image", "missing_required_parameter");
    const { n, ...fields } = edit.fields;
    const body: Json = { ...fields, ...(n === undefined ? {} : { n: Number(n) }) };
    generateImages(body, res, images.length * EDIT_IMAGE_TOKENS);
  }

  function generateImages(body: Json, res: http.ServerResponse, inputImageTokens = 0) {
    const model = typeof body.model === "string" ? body.model : "dall-e-2";
    const gptImage = model.startsWith("gpt-image");
    if (typeof body.prompt !== "string") return openAiError(res, 400, "Missing required parameter: 'prompt'.", "invalid_request_error", "prompt", "missing_required_parameter");
    const n = body.n ?? 1;
    if (!Number.isInteger(n) || n < 1) return openAiError(res, 400, `Invalid 'n': integer below minimum value. Expected a value >= 1, but got ${n} instead.`, "invalid_request_error", "n", "integer_below_min_value");
    if (n > 10) return openAiError(res, 400, `Invalid 'n': integer above maximum value. Expected a value <= 10, but got ${n} instead.`, "invalid_request_error", "n", "integer_above_max_value");
    if (gptImage && body.response_format !== undefined) return openAiError(res, 400, "Unknown parameter: 'response_format'.", "invalid_request_error", "response_format", "unknown_parameter");
    const outcome = outcomeOf(body.prompt);
    if ((outcome === "moderated" || outcome === "refused") && !gptImage) return openAiError(res, 400, DALLE_MODERATION_MESSAGE, "invalid_request_error", null, "content_policy_violation");
    if (outcome === "moderated" || outcome === "refused") {
      const moderation_details = { moderation_stage: outcome === "refused" ? "input" : "output", categories: ["sexual"] };
      return sendJson(res, 400, { error: { message: `${OPENAI_MODERATION_MESSAGE} safety_violations=[sexual].`, type: "image_generation_user_error", param: null, code: "moderation_blocked", moderation_details } });
    }
    if (outcome === "failed") return openAiError(res, 500, "The server had an error while processing your request. Sorry about that!", "server_error", null, null);
    const asUrl = !gptImage && body.response_format !== "b64_json";
    const data = Array.from({ length: n }, () => {
      imageCount += 1;
      return asUrl ? { url: cdn.publish(`img-${imageCount}.png`, TINY_PNG, "image/png") } : { b64_json: TINY_PNG.toString("base64") };
    });
    const answer: Json = { created: unixSeconds(now()), data };
    if (gptImage) {
      const textTokens = body.prompt.split(/\s+/).filter(Boolean).length;
      answer.background = body.background === "transparent" ? "transparent" : "opaque";
      answer.output_format = body.output_format ?? "png";
      answer.quality = body.quality === undefined || body.quality === "auto" ? "medium" : body.quality;
      answer.size = body.size === undefined || body.size === "auto" ? "1024x1024" : body.size;
      const input = textTokens + inputImageTokens;
      answer.usage = { input_tokens: input, input_tokens_details: { image_tokens: inputImageTokens, text_tokens: textTokens }, output_tokens: 272 * n, total_tokens: input + 272 * n };
    } else if (model === "dall-e-3") {
      for (const item of data as Json[]) item.revised_prompt = body.prompt;
    }
    sendJson(res, 200, answer);
  }

  async function createVideo(request: RecordedRequest, res: http.ServerResponse) {
    const body = await videoBody(request);
    if (body === undefined) return openAiError(res, 400, "The request body must be multipart/form-data or JSON.", "invalid_request_error", null, null);
    if (typeof body.prompt !== "string" || body.prompt === "") return openAiError(res, 400, "Missing required parameter: 'prompt'.", "invalid_request_error", "prompt", "missing_required_parameter");
    const seconds = body.seconds ?? "4";
    if (!OPENAI_VIDEO_SECONDS.includes(seconds)) return openAiError(res, 400, `Invalid value: '${seconds}'. Supported values are: ${OPENAI_VIDEO_SECONDS.map((value) => `'${value}'`).join(", ")}.`, "invalid_request_error", "seconds", "invalid_value");
    const size = body.size ?? "720x1280";
    if (!OPENAI_VIDEO_SIZES.includes(size)) return openAiError(res, 400, `Invalid value: '${size}'. Supported values are: ${OPENAI_VIDEO_SIZES.map((value) => `'${value}'`).join(", ")}.`, "invalid_request_error", "size", "invalid_value");
    if (outcomeOf(body.prompt) === "refused") return openAiError(res, 400, OPENAI_MODERATION_MESSAGE, "invalid_request_error", null, "moderation_blocked");
    const id = `video_fake${String(jobs.jobs.size + 1).padStart(4, "0")}`;
    const job = jobs.create(id, body.model ?? "sora-2", body.prompt, { seconds, size });
    sendJson(res, 200, videoObject(job, "queued"));
  }

  function retrieveVideo(id: string, res: http.ServerResponse) {
    const job = jobs.jobs.get(id);
    if (!job) return openAiError(res, 404, `Video with id '${id}' not found.`, "invalid_request_error", null, "video_not_found");
    sendJson(res, 200, videoObject(job, jobs.poll(job)));
  }

  function downloadVideo(id: string, query: URLSearchParams, res: http.ServerResponse) {
    const job = jobs.jobs.get(id);
    if (!job) return openAiError(res, 404, `Video with id '${id}' not found.`, "invalid_request_error", null, "video_not_found");
    if (jobs.phaseOf(job) !== "succeeded") return openAiError(res, 404, "Video is not ready yet, use GET /v1/videos/{video_id} to check status.", "invalid_request_error", null, null);
    if (now() >= job.finishedAt! + videoTtlMs) return openAiError(res, 404, `The content of video '${id}' has expired.`, "invalid_request_error", null, null);
    const variant = query.get("variant") ?? "video";
    if (variant === "video") return send(res, 200, TINY_MP4, "video/mp4");
    if (variant === "thumbnail" || variant === "spritesheet") return send(res, 200, TINY_PNG, "image/png");
    openAiError(res, 400, `Invalid value: '${variant}'. Supported values are: 'video', 'thumbnail' and 'spritesheet'.`, "invalid_request_error", "variant", "invalid_value");
  }

  function videoObject(job: FakeJob, phase: JobPhase): Json {
    const completed = phase === "succeeded";
    const failed = phase === "failed" || phase === "moderated";
    const status = completed ? "completed" : failed ? "failed" : phase === "queued" ? "queued" : "in_progress";
    return {
      id: job.id,
      object: "video",
      model: job.model,
      status,
      progress: completed ? 100 : status === "queued" ? 0 : 50,
      created_at: unixSeconds(job.createdAt),
      completed_at: completed ? unixSeconds(job.finishedAt!) : null,
      expires_at: completed ? unixSeconds(job.finishedAt! + videoTtlMs) : null,
      error: phase === "moderated" ? { code: "moderation_blocked", message: OPENAI_MODERATION_MESSAGE } : phase === "failed" ? { code: "video_generation_failed", message: OPENAI_VIDEO_FAILURE_MESSAGE } : null,
      prompt: job.prompt,
      remixed_from_video_id: null,
      seconds: job.details.seconds,
      size: job.details.size,
    };
  }

  return {
    ...upstream,
    origin,
    jobs,
    edits,
    polls: (jobId) => jobs.jobs.get(jobId)?.polls ?? 0,
    answerNextWith: (method, path, status, body) => oneOffAnswers.push({ method, path, status, body }),
  };
}

function refusedAuth(request: RecordedRequest, res: http.ServerResponse, key: string): boolean {
  const authorization = request.headers.authorization;
  if (authorization === undefined) {
    openAiError(res, 401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", "invalid_request_error", null, null);
    return true;
  }
  if (authorization !== `Bearer ${key}`) {
    openAiError(res, 401, "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", null, "invalid_api_key");
    return true;
  }
  return false;
}

/** The create-video fields, from multipart/form-data (the SDK's encoding) or JSON; undefined when neither. */
async function videoBody(request: RecordedRequest): Promise<Record<string, any> | undefined> {
  const contentType = String(request.headers["content-type"] ?? "");
  if (contentType.startsWith("application/json")) return request.body;
  if (!contentType.startsWith("multipart/form-data")) return undefined;
  const form = await new Response(request.raw, { headers: { "content-type": contentType } }).formData();
  const fields: Record<string, any> = {};
  for (const [name, value] of form.entries()) fields[name] = typeof value === "string" ? value : { file: value.name, type: value.type, size: value.size };
  return fields;
}
