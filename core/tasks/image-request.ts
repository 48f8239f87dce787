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
import { checkGivenValue, MAX_URL_LENGTH } from "./given-parameter.ts";
import { checkInputImage, INPUT_IMAGE_LIMITS, type InputImageLimits } from "./input-image.ts";
import { mediaModelOf, noMediaProvider } from "./media-model.ts";
import { checkPrompt, promptLimitOf } from "./prompt.ts";


export interface PlannedImage {
  route: ProviderRoute;
  adapter: MediaJobAdapter;
  /** The most one image may cost: for the size asked, or the model's largest (what is held for each). */
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
  const route = routeFor(modelId, model.routes, adapters, wanted);
  const adapter = adapters[route.provider.protocol]!;
  const n = image.n === 0 ? 1 : image.n;
  const most = mostImagesPerRequest(adapter, model.config.supported_params_details);
  if (n < 1 || n > most) throw invalidParameter("n", most === 1 ? `${modelId} makes one image per request: n must be 1.` : `n must be between 1 and ${most}.`);
  if (image.size && image.size !== "auto" && !isSize(image.size)) throw invalidParameter("size", "size must be auto or WIDTHxHEIGHT, for example 1024x768.");
  const details = model.config.supported_params_details;
  checkOptions(modelId, details, adapter, image);
  checkSizeLimits(modelId, details, image.size);
  checkInputImages(modelId, model.config.input_modalities, details, adapter, image.imageUrls);
  checkEditUploads(modelId, model.config.input_modalities, adapter, options.editUploads ?? []);
  // Last, as it goes over the network: everything else is refused without a fetch.
  const inputPixels = options.imagesChecked ? 0 : await measureInputImages(image.imageUrls, options.imageLimits ?? INPUT_IMAGE_LIMITS);
  const settled = withOnlyValues(create(ImageParametersSchema, { ...image, n, inputPixels: BigInt(inputPixels) }), details, adapter);
  const pricing = route.route.pricing;
  // A route priced per token is held for the most tokens its limits allow (image-token-price.ts).
  const pricePerImage = isPricedPerToken(pricing)
    ? imageTokenHoldPerImage(imageTokenPricesOf(pricing), route, settled.prompt, settled.imageUrls.length > 0 || (options.editUploads?.length ?? 0) > 0)
    : imageCost(imagePricesOf(pricing), largestPixels(details, settled.size), inputPixels);
  return { route, adapter, pricePerImage, image: settled };
}

/**
 * The route that serves the create: among the model's routes whose protocol
 * makes images, synchronous ones for `response_type: sync` and for
 * `response_format: b64_json` (only a synchronous answer carries the bytes),
 * asynchronous ones for `async`, and without either a synchronous one first.
 * A kind the model has no route of is the request's fault (400); a kind whose
 * routes are all disabled (no key) is unavailable (503).
 */
function routeFor(modelId: string, routes: readonly ProviderRoute[], adapters: Partial<Record<ProviderProtocol, MediaJobAdapter>>, wanted: Wanted): ProviderRoute {
  if (wanted.responseFormat && wanted.responseFormat !== "url" && wanted.responseFormat !== "b64_json") {
    throw invalidParameter("response_format", "response_format must be url or b64_json.");
  }
  const inline = wanted.responseFormat === "b64_json";
  if (inline && wanted.responseType === ImageResponseType.ASYNC) {
    throw invalidParameter("response_format", "response_format b64_json comes with synchronous answers only; an async task's results are hosted URLs.");
  }
  const imaging = routes.filter((candidate) => adapters[candidate.provider.protocol]?.submitImage !== undefined);
  const isSync = (candidate: ProviderRoute) => adapters[candidate.provider.protocol]?.synchronousImages === true;
  const sync = inline || wanted.responseType === ImageResponseType.SYNC;
  const eligible = sync ? imaging.filter(isSync) : wanted.responseType === ImageResponseType.ASYNC ? imaging.filter((candidate) => !isSync(candidate)) : imaging;
  if (eligible.length === 0 && imaging.length > 0) {
    if (wanted.responseType !== ImageResponseType.UNSPECIFIED) {
      const kind = sync ? "synchronous" : "asynchronous";
      throw invalidParameter("response_type", `${modelId} has no ${kind} image provider: send response_type ${sync ? "async" : "sync"}, or leave it out.`);
    }
    throw invalidParameter("response_format", `${modelId} has no synchronous image provider, so its results are hosted URLs: leave response_format out, or send url.`);
  }
  const enabled = eligible.filter((candidate) => candidate.enabled);
  const route = enabled.find(isSync) ?? enabled[0];
  if (!route) throw noMediaProvider("image", modelId, eligible);
  return route;
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
