// What one generated image costs on a route: a flat `image_output`, and/or a
// price per megapixel of the image (BFL's FLUX.2: the first megapixel at one
// price, each further one at another, and the input images' megapixels at a
// third). A megapixel is 1024x1024 pixels, counted in whole megapixels rounded
// up, so that BFL's "1 MP" image (1024x1024) and its largest (2048x2048, "4 MP")
// are exactly 1 and 4. docs/tasks.md, "Billing".
import type { ModelProviderConfig } from "../config/schema.ts";
import { parseMoney, type Money } from "../billing/money.ts";
import { dimensionsOfSize } from "../providers/media-job.ts";

export const MEGAPIXEL = 1024 * 1024;

/** The largest image held for when neither the request nor the catalogue says how large (FLUX.2's 4 MP). */
const DEFAULT_LARGEST_PIXELS = 4 * MEGAPIXEL;

export interface ImagePrices {
  perImage: Money;
  firstMegapixel: Money;
  perMegapixel: Money;
  inputPerMegapixel: Money;
}

/** Whole megapixels, rounded up; 0 pixels are 0 megapixels. */
const megapixelsOf = (pixels: number) => Math.ceil(pixels / MEGAPIXEL);

const money = (decimal: string | undefined) => (decimal ? parseMoney(decimal) : 0n);

export function imagePricesOf(pricing: ModelProviderConfig["pricing"]): ImagePrices {
  const perMegapixel = money(pricing.image_output_per_megapixel);
  return {
    perImage: money(pricing.image_output),
    // Without a price of its own, the first megapixel costs what each further one does.
    firstMegapixel: pricing.image_output_first_megapixel ? parseMoney(pricing.image_output_first_megapixel) : perMegapixel,
    perMegapixel,
    inputPerMegapixel: money(pricing.image_input_per_megapixel),
  };
}

/**
 * One image of `outputPixels`, made from input images of `inputPixels` in all.
 * The inputs are priced with each image made: the one protocol that takes
 * input images (bfl) makes one image per job (maxImagesPerJob 1: n images are
 * n jobs, each sending the inputs), so that is once per job.
 */
export function imageCost(prices: ImagePrices, outputPixels: number, inputPixels: number): Money {
  const output = Math.max(1, megapixelsOf(outputPixels));
  const sized = prices.firstMegapixel + prices.perMegapixel * BigInt(output - 1);
  return prices.perImage + (prices.firstMegapixel > 0n || prices.perMegapixel > 0n ? sized : 0n) + prices.inputPerMegapixel * BigInt(megapixelsOf(inputPixels));
}

/**
 * The most pixels an image of this request may have: the size asked
 * (`WIDTHxHEIGHT`), else the largest the model's `supported_params_details.size`
 * allows (a list of sizes, or `{max_megapixels}`), else DEFAULT_LARGEST_PIXELS.
 */
export function largestPixels(details: Record<string, unknown>, size: string): number {
  const asked = pixelsOfSize(size);
  if (asked) return asked;
  const allowed = details.size;
  if (Array.isArray(allowed)) {
    const listed = allowed.map((value) => pixelsOfSize(String(value)) ?? 0);
    if (listed.some((pixels) => pixels > 0)) return Math.max(...listed);
  }
  const limits = sizeLimitsOf(details);
  return limits?.maxMegapixels ? limits.maxMegapixels * MEGAPIXEL : DEFAULT_LARGEST_PIXELS;
}

/** `WIDTHxHEIGHT` as a pixel count; undefined for `auto`, empty or anything else. */
function pixelsOfSize(size: string): number | undefined {
  const dimensions = dimensionsOfSize(size);
  return dimensions ? dimensions.width * dimensions.height : undefined;
}

/** A free size range in the catalogue: `supported_params_details.size: {max_megapixels, multiple_of, min}`. */
export interface SizeLimits {
  maxMegapixels?: number;
  multipleOf?: number;
  min?: number;
}

export function sizeLimitsOf(details: Record<string, unknown>): SizeLimits | undefined {
  const size = details.size;
  if (!size || typeof size !== "object" || Array.isArray(size)) return undefined;
  const record = size as Record<string, unknown>;
  const number = (value: unknown) => (typeof value === "number" && value > 0 ? value : undefined);
  return { maxMegapixels: number(record.max_megapixels), multipleOf: number(record.multiple_of), min: number(record.min) };
}
