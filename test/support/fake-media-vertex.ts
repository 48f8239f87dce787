// A fake of Veo on Vertex AI, for tests (docs/media-protocols.md, "Vertex").
// Base URL {origin}/v1/projects/{project}/locations/{location}, as
// https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}.
//   POST {base}/publishers/google/models/{model}:predictLongRunning
//        {instances: [{prompt, image?}], parameters?}: {name} of the operation,
//        projects/.../publishers/google/models/{model}/operations/{id}.
//   POST {base}/publishers/google/models/{model}:fetchPredictOperation {operationName}:
//        one poll. Unfinished, the operation is {name} alone (proto3 JSON leaves
//        `done: false` out); finished, {name, done: true, response: {"@type",
//        raiMediaFilteredCount, videos: [{bytesBase64Encoded, mimeType}]}} (or gcsUri
//        when parameters.storageUri was given), or {name, done: true, error: {code,
//        message}}.
// Every call needs `Authorization: Bearer <token>` with the fake's token (Google's 401
// UNAUTHENTICATED otherwise). Prompts pick failures (fake-media-common.ts): FAIL_PROMPT
// ends with error {code: 13}, MODERATE_PROMPT and REFUSE_PROMPT with no videos and
// raiMediaFilteredCount 1 (reasons in raiMediaFilteredReasons), STALL_PROMPT never ends.
import type http from "node:http";
import { JobBook, type FakeJob, type FakeMediaUpstream, type KnownFields, type MediaFakeOptions, safely, sendJson, splitPath, TINY_MP4, unknownField } from "./fake-media-common.ts";
import { startRecordingServer, type RecordedRequest } from "./recording-server.ts";

export const VERTEX_TOKEN = "ya29.fake-access-token";
export const VERTEX_PROJECT = "test-project";
export const VERTEX_LOCATION = "us-central1";
export const VERTEX_FAILURE_MESSAGE = "Video generation failed due to an internal error. Please try again later.";
export const VERTEX_RAI_REASON = "Unable to show generated videos. All videos were filtered out because they violated Vertex AI's usage guidelines. You will not be charged for blocked videos. Support codes: 58061214";
const RESPONSE_TYPE = "type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse";

export interface VertexOptions extends MediaFakeOptions {
  token?: string;
  project?: string;
  location?: string;
  /** The video answered inline for a job's prompt (default TINY_MP4). */
  videoOf?: (prompt: string) => Buffer;
}

const names = (list: string) => Object.fromEntries(list.split(" ").map((name) => [name, true as const]));
const IMAGE_FIELDS = names("bytesBase64Encoded gcsUri mimeType");
/** The request fields of Veo's predictLongRunning and fetchPredictOperation, as Google's reference lists them. */
const PREDICT_FIELDS: KnownFields = {
  instances: { prompt: true, image: IMAGE_FIELDS, lastFrame: IMAGE_FIELDS, video: true, referenceImages: true },
  parameters: names("aspectRatio compressionQuality durationSeconds enhancePrompt generateAudio negativePrompt personGeneration resolution sampleCount seed storageUri"),
};
const FETCH_FIELDS: KnownFields = { operationName: true };

function googleError(res: http.ServerResponse, code: number, status: string, message: string) {
  sendJson(res, code, { error: { code, message, status } });
}

export async function startFakeVertex(options: VertexOptions = {}): Promise<FakeMediaUpstream> {
  const token = options.token ?? VERTEX_TOKEN;
  const project = options.project ?? VERTEX_PROJECT;
  const location = options.location ?? VERTEX_LOCATION;
  const basePath = `/v1/projects/${project}/locations/${location}`;
  const jobs = new JobBook(options);

  const upstream = await startRecordingServer(
    basePath,
    safely((request, res) => {
      if (refusedAuth(request, res, token)) return;
      const { pathname } = splitPath(request.path);
      const call = new RegExp(`^${basePath}/publishers/google/models/([^/:]+):(predictLongRunning|fetchPredictOperation)$`).exec(pathname);
      if (request.method !== "POST" || !call) return googleError(res, 404, "NOT_FOUND", `The requested URL ${pathname} was not found on this server.`);
      const [, model, method] = call;
      // Google's JSON mapping refuses a field the message does not have.
      const unknown = unknownField(request.body, method === "predictLongRunning" ? PREDICT_FIELDS : FETCH_FIELDS);
      if (unknown) return googleError(res, 400, "INVALID_ARGUMENT", `Invalid JSON payload received. Unknown name "${unknown.split(".").at(-1)}" at '${unknown.split(".").slice(0, -1).join(".")}': Cannot find field.`);
      if (method === "predictLongRunning") return predictLongRunning(model, request.body, res);
      fetchPredictOperation(model, request.body, res);
    }),
  );

  function predictLongRunning(model: string, body: Record<string, any>, res: http.ServerResponse) {
    const instance = Array.isArray(body.instances) ? body.instances[0] : undefined;
    if (!instance || typeof instance !== "object") return googleError(res, 400, "INVALID_ARGUMENT", "Invalid JSON payload received. instances is required.");
    if (typeof instance.prompt !== "string" && !instance.image) return googleError(res, 400, "INVALID_ARGUMENT", "Either a text prompt or an image is required.");
    const parameters = (body.parameters ?? {}) as Record<string, any>;
    const sampleCount = parameters.sampleCount ?? 1;
    if (!Number.isInteger(sampleCount) || sampleCount < 1 || sampleCount > 4) return googleError(res, 400, "INVALID_ARGUMENT", "sampleCount must be between 1 and 4.");
    const operationId = `00000000-0000-4000-9000-${String(jobs.jobs.size + 1).padStart(12, "0")}`;
    const name = `projects/${project}/locations/${location}/publishers/google/models/${model}/operations/${operationId}`;
    jobs.create(name, model, instance.prompt ?? "", { sampleCount, storageUri: parameters.storageUri, operationId });
    sendJson(res, 200, { name });
  }

  function fetchPredictOperation(model: string, body: Record<string, any>, res: http.ServerResponse) {
    if (typeof body.operationName !== "string") return googleError(res, 400, "INVALID_ARGUMENT", "operationName is required.");
    const job = jobs.jobs.get(body.operationName);
    if (!job || job.model !== model) return googleError(res, 404, "NOT_FOUND", `Operation ${body.operationName} not found.`);
    const phase = jobs.poll(job);
    if (phase === "queued" || phase === "running" || phase === "stalled") return sendJson(res, 200, { name: job.id });
    if (phase === "failed") return sendJson(res, 200, { name: job.id, done: true, error: { code: 13, message: VERTEX_FAILURE_MESSAGE } });
    if (phase === "moderated" || phase === "refused") {
      return sendJson(res, 200, { name: job.id, done: true, response: { "@type": RESPONSE_TYPE, raiMediaFilteredCount: job.details.sampleCount, raiMediaFilteredReasons: [VERTEX_RAI_REASON] } });
    }
    sendJson(res, 200, { name: job.id, done: true, response: { "@type": RESPONSE_TYPE, raiMediaFilteredCount: 0, videos: videosOf(job) } });
  }

  function videosOf(job: FakeJob) {
    return Array.from({ length: job.details.sampleCount }, (_, index) =>
      job.details.storageUri
        ? { gcsUri: `${String(job.details.storageUri).replace(/\/$/, "")}/${job.details.operationId}/sample_${index}.mp4`, mimeType: "video/mp4" }
        : { bytesBase64Encoded: (options.videoOf?.(job.prompt) ?? TINY_MP4).toString("base64"), mimeType: "video/mp4" },
    );
  }

  return { ...upstream, origin: new URL(upstream.url).origin, jobs, polls: (jobId) => jobs.jobs.get(jobId)?.polls ?? 0 };
}

function refusedAuth(request: RecordedRequest, res: http.ServerResponse, token: string): boolean {
  const authorization = request.headers.authorization;
  const help = "Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.";
  if (authorization === undefined) {
    googleError(res, 401, "UNAUTHENTICATED", `Request is missing required authentication credential. ${help}`);
    return true;
  }
  if (authorization !== `Bearer ${token}`) {
    googleError(res, 401, "UNAUTHENTICATED", `Request had invalid authentication credentials. ${help}`);
    return true;
  }
  return false;
}
