// What a video task needs before anything is held: the model (a video model
// by its output_modalities), the route that runs it (the first enabled one
// whose protocol makes videos), each parameter given checked (the spec's
// values, the protocol's parameters, the catalogue's allowed values, the
// protocol's own check of their combination), the input image fetched and
// checked, and the hold: the seconds asked for at the
// route's `video_output_per_second`.
import { VideoResultStyle, type VideoParameters } from "../../gen/router/v1/tasks_pb.js";
import type { Catalogue, ProviderRoute } from "../catalogue/catalogue.ts";
import type { ProviderProtocol } from "../config/schema.ts";
import { parseMoney, type Money } from "../billing/money.ts";
import { invalidParameter } from "../errors.ts";
import type { MediaJobAdapter } from "../providers/media-job.ts";
import { MAX_SEED } from "../../wire/limits.ts";
import { videoSecondsAsked } from "../../wire/video-task.ts";
import { checkConfiguredParameters, checkGivenValue, MAX_URL_LENGTH } from "./given-parameter.ts";
import { checkInputImage, INPUT_IMAGE_LIMITS, type InputImageLimits } from "./input-image.ts";
import { mediaModelOf, noMediaProvider } from "./media-model.ts";
import { checkPrompt, promptLimitOf } from "./prompt.ts";

/** The spec's values of `length` (seconds; per model within these). */
const VIDEO_LENGTHS: readonly number[] = [4, 5, 6, 8, 10, 12];
/** The spec's values of `seconds` (the progress-style family's duration). */
const VIDEO_SECONDS: readonly number[] = [4, 8, 12];
/** Seconds held when neither the request nor the catalogue says how long a video is: the spec's longest. */
export const DEFAULT_VIDEO_SECONDS = 12;


export interface PlannedVideo {
  route: ProviderRoute;
  adapter: MediaJobAdapter;
  /** The seconds the hold covers: asked, else the model's longest, else DEFAULT_VIDEO_SECONDS. */
  heldSeconds: number;
  pricePerSecond: Money;
  resultStyle: VideoResultStyle;
}

export interface VideoPlanOptions {
  /** How the input image is fetched (timeout, size cap); default INPUT_IMAGE_LIMITS. */
  imageLimits?: InputImageLimits;
  /** The image was checked already (an Idempotency-Key's replay of a task that was made): it is not fetched again. */
  imageChecked?: boolean;
}

export async function planVideo(
  catalogue: Catalogue,
  adapters: Partial<Record<ProviderProtocol, MediaJobAdapter>>,
  modelId: string,
  video: VideoParameters | undefined,
  options: VideoPlanOptions = {},
): Promise<PlannedVideo> {
  if (!modelId) throw invalidParameter("model", "model is required.");
  checkPrompt(video);
  const model = mediaModelOf(catalogue, modelId);
  if (!model.config.output_modalities.includes("video")) throw invalidParameter("model", `Model ${modelId} does not generate videos.`);
  checkPrompt(video, promptLimitOf(model.config.supported_params_details), modelId);
  const videoRoutes = model.routes.filter((candidate) => adapters[candidate.provider.protocol]?.submitVideo !== undefined);
  const route = videoRoutes.find((candidate) => candidate.enabled);
  if (!route) throw noMediaProvider("video", modelId, videoRoutes);
  const adapter = adapters[route.provider.protocol]!;
  checkConfiguredParameters(modelId, route, Object.keys(givenVideoParameters(video)));
  if (video.length !== 0 && !VIDEO_LENGTHS.includes(video.length)) throw invalidParameter("length", `length must be one of ${VIDEO_LENGTHS.join(", ")} (seconds).`);
  if (video.seconds !== 0 && !VIDEO_SECONDS.includes(video.seconds)) throw invalidParameter("seconds", `seconds must be one of ${VIDEO_SECONDS.join(", ")}.`);
  const details = model.config.supported_params_details;
  checkOptions(modelId, details, adapter, video);
  const refusal = adapter.checkVideo?.(video);
  if (refusal) throw invalidParameter(refusal.param, refusal.message);
  // Last, as it goes over the network: everything else is refused without a fetch.
  if (video.imageUrl && !options.imageChecked) await checkInputImage(video.imageUrl, options.imageLimits ?? INPUT_IMAGE_LIMITS);
  const price = route.route.pricing.video_output_per_second;
  return {
    route,
    adapter,
    heldSeconds: videoSecondsHeld(details, video),
    pricePerSecond: price ? parseMoney(price) : 0n,
    resultStyle: adapter.videoResultStyle ?? VideoResultStyle.PROGRESS,
  };
}

/** The seconds held for a video: asked, else the longest the catalogue allows for the model, else DEFAULT_VIDEO_SECONDS. */
export function videoSecondsHeld(details: Record<string, unknown>, video: Pick<VideoParameters, "length" | "seconds">): number {
  const allowed = [details.length, details.seconds].flatMap((values) => (Array.isArray(values) ? values.map(Number).filter(Number.isFinite) : []));
  return videoSecondsAsked(video) ?? (allowed.length > 0 ? Math.max(...allowed) : DEFAULT_VIDEO_SECONDS);
}

/**
 * Each optional parameter given: refused where the route's protocol does not
 * carry it (never dropped silently), and checked against the model's
 * `supported_params_details.<param>` where the catalogue has a list (the
 * same reading as the list it publishes), else within a length. A seed is
 * a whole number from 0 to MAX_SEED.
 */
function checkOptions(modelId: string, details: Record<string, unknown>, adapter: MediaJobAdapter, video: VideoParameters) {
  const carried = adapter.videoParameters ?? [];
  if (video.seed !== undefined && (video.seed < 0n || video.seed > BigInt(MAX_SEED))) throw invalidParameter("seed", `seed must be a whole number from 0 to ${MAX_SEED}.`);
  for (const [param, value] of Object.entries(givenVideoParameters(video))) {
    if (!carried.includes(param)) throw invalidParameter(param, `${modelId} does not take ${param}.`);
    checkGivenValue(modelId, details, param, value, param === "image" ? MAX_URL_LENGTH : undefined);
  }
}

/** The optional parameters a create gives, by their public names, each as text. */
function givenVideoParameters(video: VideoParameters): Record<string, string> {
  const given: Record<string, string | undefined> = {
    image: video.imageUrl || undefined,
    length: video.length ? String(video.length) : undefined,
    seconds: video.seconds ? String(video.seconds) : undefined,
    resolution: video.resolution || undefined,
    aspectRatio: video.aspectRatio || undefined,
    size: video.size || undefined,
    mode: video.mode || undefined,
    seed: video.seed === undefined ? undefined : String(video.seed),
    generateAudio: video.generateAudio === undefined ? undefined : String(video.generateAudio),
  };
  return Object.fromEntries(Object.entries(given).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
