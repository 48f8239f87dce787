// Veo on Vertex AI (docs/media-protocols.md, "Vertex AI Veo"): POST
// {base_url}/publishers/google/models/{model}:predictLongRunning answers a
// long-running operation's name; the operation is read with POST
// .../{model}:fetchPredictOperation {operationName} until `done`, then holds
// either a google.rpc.Status `error` or a response whose videos come inline as
// base64 (no storageUri is sent), with Responsible AI filtering counted in
// raiMediaFilteredCount. Auth: an OAuth2 bearer token (access-token.ts).
import { z } from "zod";
import { VideoResultStyle, type VideoParameters } from "../../../gen/router/v1/tasks_pb.js";
import { baseUrlOf } from "../base-url.ts";
import { checkShape } from "../http-exchange.ts";
import { mediaJson } from "../media-http.ts";
import type { JobOutput, JobState, MediaJobAdapter, MediaJobCall, SubmittedJob } from "../media-job.ts";
import { mediaOnlyCapabilities, type ProtocolCapabilities } from "../capabilities.ts";
import { applicationDefaultCredentialsConfigured, createAccessTokens, projectOf, type AccessTokens } from "./access-token.ts";
import { fetchImageInput } from "./image-input.ts";

/** The project the bundled default's base_url names until the deployment puts its own there. */
export const PLACEHOLDER_PROJECT = "your-project-id";

/**
 * Media-only, and usable without `api_key_env` when application default
 * credentials are configured, for a provider whose base_url names a real
 * project: credentials set for another reason must not switch on models
 * that would hold credits and then fail at Google.
 */
export const vertexCapabilities: ProtocolCapabilities = {
  ...mediaOnlyCapabilities,
  ambientCredentials: {
    variable: "GOOGLE_APPLICATION_CREDENTIALS",
    present: (env, provider) => applicationDefaultCredentialsConfigured(env) && !["", PLACEHOLDER_PROJECT].includes(projectOf(provider.base_url ?? "")),
  },
};

const operation = z.object({
  name: z.string(),
  done: z.boolean().optional(),
  error: z.object({ code: z.number().optional(), message: z.string().optional() }).loose().optional(),
  response: z
    .object({
      raiMediaFilteredCount: z.number().optional(),
      raiMediaFilteredReasons: z.array(z.string()).optional(),
      videos: z.array(z.object({ bytesBase64Encoded: z.string().optional(), gcsUri: z.string().optional(), mimeType: z.string().optional() }).loose()).optional(),
    })
    .loose()
    .optional(),
});

export function createVertexMediaAdapter(tokens: AccessTokens = createAccessTokens()): MediaJobAdapter {
  const headersOf = async (call: MediaJobCall) => ({ authorization: `Bearer ${await tokens(call.apiKey, projectOf(call.provider.base_url ?? ""))}` });
  return {
    maxImagesPerJob: 0,
    imageParameters: [],
    videoParameters: ["image", "length", "resolution", "aspectRatio", "seed", "generateAudio"],
    videoResultStyle: VideoResultStyle.BASE64,
    // Google shows an operation by its full name and by its last segment (the console, gcloud's --operation): both find the task.
    jobIdAliases: (jobId) => {
      const short = /\/operations\/([^/]+)$/.exec(jobId)?.[1];
      return short ? [short] : [];
    },
    async submitVideo(call, video) {
      const models = `${baseUrlOf(call.provider)}/publishers/google/models/${call.route.provider_model_id}`;
      const body = await bodyOf(call, video);
      const json = await mediaJson(`${models}:predictLongRunning`, { method: "POST", headers: await headersOf(call), body, signal: call.signal, timeoutMs: call.provider.timeout_ms }, describeError);
      const answer = checkShape(z.object({ name: z.string() }), json);
      return { jobId: answer.name, pollingUrl: `${models}:fetchPredictOperation` };
    },
    async poll(call: MediaJobCall, job: SubmittedJob): Promise<JobState> {
      const json = await mediaJson(job.pollingUrl, { method: "POST", headers: await headersOf(call), body: { operationName: job.jobId }, signal: call.signal, timeoutMs: call.provider.timeout_ms }, describeError);
      return stateOf(checkShape(operation, json));
    },
  };
}

/** The request: one instance (the prompt, and the input image inline), one sample. */
async function bodyOf(call: MediaJobCall, video: VideoParameters): Promise<Record<string, unknown>> {
  const instance: Record<string, unknown> = { prompt: video.prompt };
  if (video.imageUrl) instance.image = await fetchImageInput(video.imageUrl, { signal: call.signal, timeoutMs: call.provider.timeout_ms, allowPrivateAddresses: call.allowPrivateAddresses });
  const parameters: Record<string, unknown> = { sampleCount: 1 };
  if (video.length) parameters.durationSeconds = video.length;
  if (video.aspectRatio) parameters.aspectRatio = video.aspectRatio;
  if (video.resolution) parameters.resolution = video.resolution;
  // Veo's seed is a uint32: the gateway's decoder and planVideo refuse anything past 2^32-1, so Number() is exact.
  if (video.seed !== undefined) parameters.seed = Number(video.seed);
  if (video.generateAudio !== undefined) parameters.generateAudio = video.generateAudio;
  return { instances: [instance], parameters };
}

type Operation = z.infer<typeof operation>;

function stateOf(answer: Operation): JobState {
  // proto3 JSON leaves `done: false` out, and Veo reports no progress figure.
  if (!answer.done) return { state: "running" };
  if (answer.error) return { state: "failed", code: "upstream_error", message: answer.error.message || `Vertex AI ended the operation with code ${answer.error.code ?? "unknown"}.` };
  const videos = answer.response?.videos ?? [];
  const outputs = videos.flatMap((video): JobOutput[] => (video.bytesBase64Encoded ? [{ bytes: Buffer.from(video.bytesBase64Encoded, "base64"), mediaType: video.mimeType || "video/mp4" }] : []));
  if (outputs.length > 0) return { state: "succeeded", outputs };
  const filtered = answer.response?.raiMediaFilteredCount ?? 0;
  if (filtered > 0) {
    const reasons = answer.response?.raiMediaFilteredReasons ?? [];
    return { state: "failed", code: "content_moderated", message: reasons.length > 0 ? reasons.join(" ") : `Vertex AI filtered ${filtered} generated video(s) under its Responsible AI rules.` };
  }
  // A gcsUri needs the bucket's credentials; the adapter sends no storageUri, so Veo should never answer one.
  if (videos.some((video) => video.gcsUri)) return { state: "failed", code: "upstream_error", message: "Vertex AI answered Cloud Storage URIs where inline videos were expected." };
  return { state: "failed", code: "upstream_error", message: "Vertex AI finished the operation without a video." };
}

/** Google's {"error": {code, message, status}}. */
function describeError(status: number, text: string): string {
  try {
    const error = (JSON.parse(text) as { error?: { message?: string; status?: string } }).error;
    if (error?.message) return `Vertex AI ${status}${error.status ? ` ${error.status}` : ""}: ${error.message}`;
  } catch {
    // not JSON: the status says enough
  }
  return `Vertex AI answered ${status}`;
}
