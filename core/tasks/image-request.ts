// What an image task needs before anything is held: the model (an image model
// by its output_modalities), the route that runs it (the first enabled one
// whose protocol runs media jobs), the parameters checked, and the hold (n
// images at the route's `image_output` price; none priced: nothing held).
import type { ImageParameters } from "../../gen/router/v1/tasks_pb.js";
import type { Catalogue, ProviderRoute } from "../catalogue/catalogue.ts";
import type { ProviderProtocol } from "../config/schema.ts";
import { parseMoney, type Money } from "../billing/money.ts";
import { Code, invalidParameter, routerError } from "../errors.ts";
import type { MediaJobAdapter } from "../providers/media-job.ts";

/** The spec's range of `n` for image generation. */
export const IMAGE_N_MAX = 10;

export interface PlannedImage {
  route: ProviderRoute;
  adapter: MediaJobAdapter;
  n: number;
  pricePerImage: Money;
}

export function planImage(
  catalogue: Catalogue,
  adapters: Partial<Record<ProviderProtocol, MediaJobAdapter>>,
  modelId: string,
  image: ImageParameters | undefined,
): PlannedImage {
  if (!modelId) throw invalidParameter("model", "model is required.");
  if (!image?.prompt) throw invalidParameter("prompt", "prompt is required.");
  const model = catalogue.get(modelId);
  if (!model) throw routerError(Code.NotFound, "model_not_found", `Model ${modelId} is not in the catalogue.`, { param: "model" });
  if (!model.config.output_modalities.includes("image")) throw invalidParameter("model", `Model ${modelId} does not generate images.`);
  const route = model.routes.find((candidate) => candidate.enabled && adapters[candidate.provider.protocol]?.submitImage !== undefined);
  if (!route) {
    throw routerError(Code.Unavailable, "no_provider_available", `No provider that runs image tasks is available for ${modelId}.`, { param: "model" });
  }
  const adapter = adapters[route.provider.protocol]!;
  const n = image.n === 0 ? 1 : image.n;
  const most = Math.min(IMAGE_N_MAX, adapter.maxImagesPerJob);
  if (n < 1 || n > most) throw invalidParameter("n", most === 1 ? `${modelId} makes one image per request: n must be 1.` : `n must be between 1 and ${most}.`);
  if (image.size && image.size !== "auto" && !/^\d+x\d+$/.test(image.size)) throw invalidParameter("size", "size must be auto or WIDTHxHEIGHT, for example 1024x768.");
  checkOptions(modelId, model.config.supported_params_details, adapter, image);
  const price = route.route.pricing.image_output;
  return { route, adapter, n, pricePerImage: price ? parseMoney(price) : 0n };
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
  ];
  for (const [param, value] of given) {
    if (!value || value === "auto") continue;
    if (!adapter.imageParameters.includes(param)) throw invalidParameter(param, `${modelId} does not take ${param}.`);
    const allowed = details[param];
    if (Array.isArray(allowed) && !allowed.includes(value)) {
      throw invalidParameter(param, allowed.length === 0 ? `${modelId} does not take ${param}.` : `${param} must be one of ${allowed.join(", ")} for ${modelId}.`);
    }
  }
  if (image.seed !== 0n && !adapter.imageParameters.includes("seed")) throw invalidParameter("seed", `${modelId} does not take seed.`);
}
