// The contract between the task service (core/tasks/) and one media protocol:
// submit a job, then poll it until it ends. A protocol says only how its
// requests and answers look; the task service does the rest (leases, backoff,
// timeouts, billing, hosted copies of the outputs, the result's shape).
import type { ImageParameters, VideoParameters, VideoResultStyle } from "../../gen/router/v1/tasks_pb.js";
import type { ProviderConfig } from "./provider-config.ts";
import type { UpstreamRoute } from "./types.ts";

export interface MediaJobCall {
  provider: ProviderConfig;
  route: UpstreamRoute;
  apiKey: string;
  /** The second credential of a provider that signs its requests (Kling's secret key), from its secret_key_env. */
  secretKey?: string;
  signal: AbortSignal;
  /** tasks.fetch_private_urls: whether a URL the caller gave (an input image) may be fetched from a private address. */
  allowPrivateAddresses?: boolean;
  /** A synchronous submission's bounds besides its total (the provider's request_timeout_ms): the connection, and the answer's first byte. */
  connectTimeoutMs?: number;
  firstByteTimeoutMs?: number;
}

/** What the task keeps of a submitted job to poll it, from any instance. */
export interface SubmittedJob {
  jobId: string;
  /** Where the job's status is read: the adapter's own string (BFL answers it with the job; others build it from the id and kind). */
  pollingUrl: string;
  /** A synchronous protocol's answer, there at once: the task service takes it as the first poll's and polls no more. */
  finished?: JobState;
}

/** What the provider says of one output, besides where its bytes are. */
interface OutputDetails {
  /** The provider's own id of this output (Pollo's generation id, Kling's video id). */
  upstreamId?: string;
  /** A video's length in seconds as the provider measured it. */
  durationSeconds?: number;
}

/**
 * One result. A URL is fetched at once (it may expire); `headers` go with that
 * fetch when the bytes are behind the provider's credentials (OpenAI videos'
 * `/content`) and are never stored. Bytes given inline (base64 answers) are
 * stored as they are; `mediaType` then says what they are.
 */
export type JobOutput =
  | (OutputDetails & { url: string; headers?: Record<string, string>; mediaType?: string })
  | (OutputDetails & { bytes: Uint8Array; mediaType: string });

export type JobState =
  | { state: "queued" | "running"; progress?: number }
  /** `tokens`: the provider's token counts of the whole job, where it reports them (OpenAI's gpt-image models). */
  | { state: "succeeded"; outputs: JobOutput[]; tokens?: ImageTokens }
  /** `code`: upstream_error, content_moderated or request_moderated; `message`: the provider's words. */
  | { state: "failed"; code: string; message: string };

/** What an image job used, as OpenAI's images usage counts it: input (text and image tokens) and output (image and text tokens). */
export interface ImageTokens {
  inputText: number;
  inputImage: number;
  outputImage: number;
  outputText: number;
}

/** One uploaded file of an edit, as sent to the provider. */
export interface EditFile {
  bytes: Uint8Array;
  filename: string;
  mediaType: string;
  /** The mask, rather than an image to edit. */
  mask: boolean;
}

/** Why a protocol cannot take a video request: the parameter to name, and the words of the 400. */
export interface VideoRefusal {
  param: string;
  message: string;
}

export interface MediaJobAdapter {
  /** Most images one job makes (a request for more is refused before anything is held); 0: the protocol makes no images. */
  readonly maxImagesPerJob: number;
  /** The optional image parameters the protocol carries (`size`, `output_format`...); any other given is refused with a 400. */
  readonly imageParameters: readonly string[];
  /** Most uploaded images one edit takes (POST /api/v1/images/edits); absent or 0: the protocol edits no images (it may still take input image URLs, `image`). */
  readonly maxEditImages?: number;
  /** True when an image job's answer comes with its submission (`SubmittedJob.finished`): `response_type: sync` picks these. */

  readonly synchronousImages?: boolean;
  /** The optional video parameters (VideoParameters' public names: `image`, `length`, `seconds`, `resolution`, `aspectRatio`, `size`, `mode`, `seed`, `generateAudio`) the protocol carries; absent: it makes no videos. */
  readonly videoParameters?: readonly string[];
  /** The shape its video tasks are shown in (the spec's four result styles). */
  readonly videoResultStyle?: VideoResultStyle;
  /**
   * Other ids the provider gives the same job, which a caller may send in its
   * place (Vertex's short operation id, the last segment of the operation's
   * name): each is indexed with the job id, so `<provider>:<alias>` finds the task too.
   */
  jobIdAliases?(jobId: string): string[];
  /**
   * Refuses a combination of video parameters the protocol cannot take, each
   * of them being carried alone (Kling's image-to-video has no aspect ratio):
   * called before anything is held, its answer is a 400 naming `param`.
   */
  checkVideo?(video: VideoParameters): VideoRefusal | undefined;
  /** `edits`: an edit's uploaded images and mask, read back from the asset store (ImageParameters.edit_inputs), in order. */
  submitImage?(call: MediaJobCall, image: ImageParameters, edits?: EditFile[]): Promise<SubmittedJob>;
  submitVideo?(call: MediaJobCall, video: VideoParameters): Promise<SubmittedJob>;
  poll(call: MediaJobCall, job: SubmittedJob): Promise<JobState>;
}

/** An image `size` of the form `WIDTHxHEIGHT` as numbers; undefined for `auto`, empty or anything else. */
export function dimensionsOfSize(size: string): { width: number; height: number } | undefined {
  const match = /^(\d+)x(\d+)$/.exec(size);
  return match ? { width: Number(match[1]), height: Number(match[2]) } : undefined;
}

/**
 * The public names of the parameters a protocol's adapter carries for a model
 * that makes `output_modalities`, in publishing order, before the catalogue's
 * details narrow them (core/catalogue/media-parameters.ts): for images `n`
 * (where a job makes any), the image parameters (`image` only for a model that
 * takes images in) and `response_format`; for videos the video parameters.
 */
export function carriedMediaParameters(adapter: MediaJobAdapter, model: { output_modalities: readonly string[]; input_modalities: readonly string[] }): string[] {
  const carried: string[] = [];
  if (model.output_modalities.includes("image") && adapter.submitImage && adapter.maxImagesPerJob > 0) {
    const takesImages = model.input_modalities.includes("image");
    carried.push("n", ...adapter.imageParameters.filter((name) => name !== "image" || takesImages), "response_format");
  }
  if (model.output_modalities.includes("video") && adapter.submitVideo) carried.push(...(adapter.videoParameters ?? []));
  return carried;
}
