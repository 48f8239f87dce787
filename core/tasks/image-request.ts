// What an image task needs before anything is held: the model (an image model
// by its output_modalities), the route that runs it (the first enabled one
// whose protocol runs media jobs, synchronous or not as response_type and
// response_format ask), the parameters checked, the input images fetched and
// measured, and the hold: n images at the route's worst-case price for the
// size asked and the inputs given (image-price.ts; none priced: nothing held).
import { create } from "@bufbuild/protobuf";
import { ImageParametersSchema, ImageResponseType, type CreateImageRequest, type ImageParameters, type ImageUpload } from "../../gen/router/v1/tasks_pb.js";
import type { Catalogue, ProviderRoute } from "../catalogue/catalogue.ts";
import { allowedValuesOf, mostImagesPerRequest } from "../catalogue/media-parameters.ts";
import type { ProviderProtocol } from "../config/schema.ts";
import type { Money } from "../billing/money.ts";
import { invalidParameter } from "../errors.ts";
import { dimensionsOfSize, type MediaJobAdapter } from "../providers/media-job.ts";
import { imageCost, imagePricesOf, largestPixels, MEGAPIXEL, sizeLimitsOf } from "./image-price.ts";
import { imageTokenHoldPerImage, imageTokenPricesOf, isPricedPerToken } from "./image-token-price.ts";
import { checkEditUploads } from "./edit-inputs.ts";
import { checkConfiguredParameters, checkGivenValue, MAX_URL_LENGTH } from "./given-parameter.ts";
import { checkInputImage, INPUT_IMAGE_LIMITS, type InputImageLimits } from "./input-image.ts";
import { mediaModelOf, noMediaProvider } from "./media-model.ts";
import { checkPrompt, promptLimitOf } from "./prompt.ts";


export interface PlannedImage {
  route: ProviderRoute;
  adapter: MediaJobAdapter;
  /** The routes tried next, in order, when `route` is synchronous and fails for now (docs/tasks.md, "Fallback"): those that take the request. */
  fallbacks: ProviderRoute[];
  /** `response_type: sync` on a model with only asynchronous providers: the create waits for the task (docs/tasks.md). */
  waitsForAsync: boolean;
  /** The most one image may cost: for the size asked, or the model's largest, on the dearest of the route and its fallbacks (what is held for each). */
  pricePerImage: Money;
  /** What the task asks of the provider: the request's parameters, n settled, and a parameter the model takes one value of set to it. */
  image: ImageParameters;
}

/** Which kind of provider the create asked for. */
type Wanted = Pick<CreateImageRequest, "responseType" | "responseFormat">;

export interface ImagePlanOptions {
  /** How input images are fetched (timeout, size cap); default INPUT_IMAGE_LIMITS. */
  imageLimits?: InputImageLimits;
  /** The input images were checked already (an Idempotency-Key's replay of a task that was made): they are not fetched again. */
  imagesChecked?: boolean;
  /** An edit's uploaded images and mask (edit-inputs.ts). */
  editUploads?: readonly ImageUpload[];
}

/** Input images a model takes when its `supported_params_details.image` does not say (`{max: N}`). */
const DEFAULT_INPUT_IMAGES = 1;

export async function planImage(
  catalogue: Catalogue,
  adapters: Partial<Record<ProviderProtocol, MediaJobAdapter>>,
  modelId: string,
  image: ImageParameters | undefined,
  wanted: Wanted = { responseType: ImageResponseType.UNSPECIFIED, responseFormat: "" },
  options: ImagePlanOptions = {},
): Promise<PlannedImage> {
  if (!modelId) throw invalidParameter("model", "model is required.");
  checkPrompt(image);
  const model = mediaModelOf(catalogue, modelId);
  if (!model.config.output_modalities.includes("image")) throw invalidParameter("model", `Model ${modelId} does not generate images.`);
  checkPrompt(image, promptLimitOf(model.config.supported_params_details), modelId);
  const { candidates, waitsForAsync } = routesFor(modelId, model.routes, adapters, wanted);
  const [route] = candidates;
  const adapter = adapters[route.provider.protocol]!;
  checkConfiguredParameters(modelId, route, givenImageParameters(image, wanted));
  const n = image.n === 0 ? 1 : image.n;
  const most = mostImagesPerRequest(adapter, model.config.supported_params_details);
  if (n < 1 || n > most) throw invalidParameter("n", most === 1 ? `${modelId} makes one image per request: n must be 1.` : `${modelId} takes n from 1 to ${most}.`);
  if (image.size && image.size !== "auto" && !isSize(image.size)) throw invalidParameter("size", "size must be auto or WIDTHxHEIGHT, for example 1024x768.");
  const details = model.config.supported_params_details;
  checkOptions(modelId, details, adapter, image);
  checkSizeLimits(modelId, details, image.size);
  checkInputImages(modelId, model.config.input_modalities, details, adapter, image.imageUrls);
  // A route that would refuse what the first one takes is no fallback.
  const fallbacks = candidates.slice(1).filter((candidate) => takes(modelId, model.config, adapters[candidate.provider.protocol]!, { ...image, n }));
  checkEditUploads(modelId, model.config.input_modalities, adapter, options.editUploads ?? []);
  // Last, as it goes over the network: everything else is refused without a fetch.
  const inputPixels = options.imagesChecked ? 0 : await measureInputImages(image.imageUrls, options.imageLimits ?? INPUT_IMAGE_LIMITS);
  const settled = withOnlyValues(create(ImageParametersSchema, { ...image, n, inputPixels: BigInt(inputPixels) }), details, adapter);
  const hasInputImages = settled.imageUrls.length > 0 || (options.editUploads?.length ?? 0) > 0;
  // A route priced per token is held for the most tokens its limits allow (image-token-price.ts).
  const priceOn = (candidate: ProviderRoute) => {
    const { pricing } = candidate.route;
    return isPricedPerToken(pricing)
      ? imageTokenHoldPerImage(imageTokenPricesOf(pricing), candidate, settled.prompt, hasInputImages)
      : imageCost(imagePricesOf(pricing), largestPixels(details, settled.size), inputPixels);
  };
  const pricePerImage = [route, ...fallbacks].map(priceOn).reduce((most, price) => (price > most ? price : most));
  return { route, adapter, fallbacks, waitsForAsync, pricePerImage, image: settled };
}

/** Whether a route's protocol takes the request as the first route's checks would (n, options, input images). */
function takes(modelId: string, config: { supported_params_details: Record<string, unknown>; input_modalities: readonly string[] }, adapter: MediaJobAdapter, image: ImageParameters): boolean {
  try {
    if (image.n > mostImagesPerRequest(adapter, config.supported_params_details)) return false;
    checkOptions(modelId, config.supported_params_details, adapter, image);
    checkInputImages(modelId, config.input_modalities, config.supported_params_details, adapter, image.imageUrls);
    return true;
  } catch {
    return false;
  }
}

/**
 * The routes that may serve the create, in the order they are tried: among
 * the model's enabled routes whose protocol makes images, synchronous ones
 * for `response_type: sync` and for `response_format: b64_json` (only a
 * synchronous answer carries the bytes), asynchronous ones for `async`, and
 * without either the synchronous ones first, then the asynchronous ones (a
 * synchronous provider failing for now falls through to them). `sync` on a
 * model with no synchronous route takes its asynchronous ones, the create
 * waiting for the task (`waitsForAsync`). A kind the model has no route of is
 * the request's fault (400); a kind whose routes are all disabled (no key) is
 * unavailable (503).
 */
function routesFor(modelId: string, routes: readonly ProviderRoute[], adapters: Partial<Record<ProviderProtocol, MediaJobAdapter>>, wanted: Wanted): { candidates: ProviderRoute[]; waitsForAsync: boolean } {
  if (wanted.responseFormat && wanted.responseFormat !== "url" && wanted.responseFormat !== "b64_json") {
    throw invalidParameter("response_format", "response_format must be url or b64_json.");
  }
  const inline = wanted.responseFormat === "b64_json";
  if (inline && wanted.responseType === ImageResponseType.ASYNC) {
    throw invalidParameter("response_format", "response_format b64_json comes with synchronous answers only; an async task's results are hosted URLs.");
  }
  const imaging = routes.filter((candidate) => adapters[candidate.provider.protocol]?.submitImage !== undefined);
  const isSync = (candidate: ProviderRoute) => adapters[candidate.provider.protocol]?.synchronousImages === true;
  const syncRoutes = imaging.filter(isSync);
  const asyncRoutes = imaging.filter((candidate) => !isSync(candidate));
  if (inline && syncRoutes.length === 0 && imaging.length > 0) {
    throw invalidParameter("response_format", `${modelId} has no synchronous image provider, so its results are hosted URLs: leave response_format out, or send url.`);
  }
  if (wanted.responseType === ImageResponseType.ASYNC && asyncRoutes.length === 0 && imaging.length > 0) {
    throw invalidParameter("response_type", `${modelId} has no asynchronous image provider: send response_type sync, or leave it out.`);
  }
  const waitsForAsync = wanted.responseType === ImageResponseType.SYNC && syncRoutes.length === 0;
  const eligible =
    inline || (wanted.responseType === ImageResponseType.SYNC && !waitsForAsync) ? syncRoutes
    : wanted.responseType === ImageResponseType.ASYNC || waitsForAsync ? asyncRoutes
    : [...syncRoutes, ...asyncRoutes];
  const enabled = eligible.filter((candidate) => candidate.enabled);
  if (enabled.length === 0) throw noMediaProvider("image", modelId, eligible);
  return { candidates: enabled, waitsForAsync };
}

/**
 * A parameter the model takes exactly one value of (its
 * `supported_params_details` lists one) is set to it when the request leaves
 * it out, so the provider makes what the catalogue prices (a flat per-image
 * price for one quality and size) rather than its own default.
 */
function withOnlyValues(image: ImageParameters, details: Record<string, unknown>, adapter: MediaJobAdapter): ImageParameters {
  const only = (param: string) => {
    const allowed = details[param];
    return adapter.imageParameters.includes(param) && Array.isArray(allowed) && allowed.length === 1 && typeof allowed[0] === "string" ? allowed[0] : undefined;
  };
  const settled = { ...image };
  if (!settled.size || settled.size === "auto") settled.size = only("size") ?? settled.size;
  if (!settled.quality || settled.quality === "auto") settled.quality = only("quality") ?? settled.quality;
  if (!settled.outputFormat) settled.outputFormat = only("output_format") ?? "";
  if (!settled.background || settled.background === "auto") settled.background = only("background") ?? settled.background;
  if (!settled.style) settled.style = only("style") ?? "";
  if (!settled.aspectRatio && !isSize(settled.size)) settled.aspectRatio = only("aspect_ratio") ?? "";
  return settled;
}

/**
 * Each optional parameter given: refused where the route's protocol does not
 * carry it (never dropped silently), and checked against the model's
 * `supported_params_details.<param>` (a list of allowed values) where the
 * catalogue has one. `auto` is every parameter's default.
 */
function checkOptions(modelId: string, details: Record<string, unknown>, adapter: MediaJobAdapter, image: ImageParameters) {
  const given: [string, string][] = [
    ["size", image.size],
    ["quality", image.quality],
    ["output_format", image.outputFormat],
    ["background", image.background],
    ["style", image.style],
    ["aspect_ratio", image.aspectRatio],
  ];
  if (image.aspectRatio && !/^\d+:\d+$/.test(image.aspectRatio)) throw invalidParameter("aspect_ratio", "aspect_ratio must be WIDTH:HEIGHT, for example 16:9.");
  if (image.aspectRatio && isSize(image.size)) throw invalidParameter("aspect_ratio", "Send size or aspect_ratio, not both.");
  for (const [param, value] of given) {
    if (!value || value === "auto") continue;
    if (!adapter.imageParameters.includes(param)) throw invalidParameter(param, `${modelId} does not take ${param}.`);
    checkGivenValue(modelId, details, param, value);
  }
  if (image.seed !== undefined) {
    if (!adapter.imageParameters.includes("seed")) throw invalidParameter("seed", `${modelId} does not take seed.`);
    checkGivenValue(modelId, details, "seed", String(image.seed));
  }
}

/** The optional parameters a create asks for, by their public names; a default value (`n` 1, `auto`, `url`) asks nothing. */
function givenImageParameters(image: ImageParameters, wanted: Wanted): string[] {
  const asked = (value: string) => value !== "" && value !== "auto";
  const given: [string, boolean][] = [
    ["n", image.n > 1],
    ["size", asked(image.size)],
    ["quality", asked(image.quality)],
    ["output_format", asked(image.outputFormat)],
    ["background", asked(image.background)],
    ["style", asked(image.style)],
    ["aspect_ratio", asked(image.aspectRatio)],
    ["seed", image.seed !== undefined],
    ["image", image.imageUrls.length > 0],
    ["response_format", wanted.responseFormat === "b64_json"],
  ];
  return given.filter(([, isGiven]) => isGiven).map(([name]) => name);
}

/**
 * A size within the model's free range (`supported_params_details.size:
 * {max_megapixels, multiple_of, min}`, as FLUX.2 takes any width and height
 * in steps of 16 up to 4 megapixels), refused by name outside it.
 */
function checkSizeLimits(modelId: string, details: Record<string, unknown>, size: string) {
  const limits = sizeLimitsOf(details);
  const dimensions = dimensionsOfSize(size);
  if (!limits || !dimensions) return;
  const { width, height } = dimensions;
  if (limits.multipleOf && (width % limits.multipleOf !== 0 || height % limits.multipleOf !== 0)) {
    throw invalidParameter("size", `${modelId} takes a width and height that are multiples of ${limits.multipleOf}.`);
  }
  if (limits.min && (width < limits.min || height < limits.min)) throw invalidParameter("size", `${modelId} takes a width and height of at least ${limits.min}.`);
  if (limits.maxMegapixels && width * height > limits.maxMegapixels * MEGAPIXEL) {
    throw invalidParameter("size", `${modelId} makes images of at most ${limits.maxMegapixels} megapixels (${limits.maxMegapixels * MEGAPIXEL} pixels); ${size} is ${width * height}.`);
  }
}

const isSize = (size: string) => dimensionsOfSize(size) !== undefined;

/**
 * Input images: only for a model that takes images in (`input_modalities` has
 * `image`) on a protocol that carries them, and at most as many as the
 * model's `supported_params_details.image: {max}` (else one).
 */
function checkInputImages(modelId: string, inputModalities: readonly string[], details: Record<string, unknown>, adapter: MediaJobAdapter, urls: readonly string[]) {
  if (urls.length === 0) return;
  const listed = allowedValuesOf(details, "image");
  if (!inputModalities.includes("image") || !adapter.imageParameters.includes("image") || listed?.length === 0) throw invalidParameter("image", `${modelId} does not take input images.`);
  for (const url of urls) checkGivenValue(modelId, {}, "image", url, MAX_URL_LENGTH);
  const limit = details.image && typeof details.image === "object" ? (details.image as { max?: unknown }).max : undefined;
  const most = typeof limit === "number" ? limit : DEFAULT_INPUT_IMAGES;
  if (urls.length > most) throw invalidParameter("image", most === 1 ? `${modelId} takes one input image.` : `${modelId} takes at most ${most} input images.`);
}

/** Fetches and checks each input image (a JPEG or PNG of a sane shape, input-image.ts); answers their pixels added up. */
async function measureInputImages(urls: readonly string[], limits: InputImageLimits): Promise<number> {
  let pixels = 0;
  for (const url of urls) {
    const { width, height } = await checkInputImage(url, limits);
    pixels += width * height;
  }
  return pixels;
}
