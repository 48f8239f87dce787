// Images priced per token (OpenAI's gpt-image models bill text and image
// input tokens and image output tokens): a route that sets `completion_image`
// and no per-image price is charged from the token counts its provider
// reports, and held for the worst case its model's limits allow.
// docs/tasks.md, "Billing".
import type { ModelProviderConfig } from "../config/schema.ts";
import { parseMoney, type Money } from "../billing/money.ts";
import type { ImageTokens } from "../providers/media-job.ts";

type Pricing = ModelProviderConfig["pricing"];

export interface ImageTokenPrices {
  promptText: Money;
  promptImage: Money;
  completionImage: Money;
  completionText: Money;
  request: Money;
}

/** Per-image prices win: a route priced per image (or megapixel) stays so, whatever token prices it also lists. */
export function isPricedPerToken(pricing: Pricing | undefined): pricing is Pricing & { completion_image: string } {
  if (!pricing?.completion_image) return false;
  const perImage = [pricing.image_output, pricing.image_output_per_megapixel, pricing.image_output_first_megapixel, pricing.image_input_per_megapixel];
  return perImage.every((price) => price === undefined);
}

export function imageTokenPricesOf(pricing: Pricing & { completion_image: string }): ImageTokenPrices {
  const promptText = parseMoney(pricing.prompt);
  return {
    promptText,
    // Without a price of its own, an input image token costs what a text one does.
    promptImage: pricing.prompt_image ? parseMoney(pricing.prompt_image) : promptText,
    completionImage: parseMoney(pricing.completion_image),
    completionText: parseMoney(pricing.completion),
    request: parseMoney(pricing.request),
  };
}

/** What the reported tokens cost: each kind at its price, plus the request fee. */
export function imageTokenCost(prices: ImageTokenPrices, tokens: ImageTokens): Money {
  return (
    BigInt(tokens.inputText) * prices.promptText +
    BigInt(tokens.inputImage) * prices.promptImage +
    BigInt(tokens.outputImage) * prices.completionImage +
    BigInt(tokens.outputText) * prices.completionText +
    prices.request
  );
}

/** What bounds one request's tokens: the route's context length (input) and most completion tokens (output, per image). */
export interface ImageTokenLimits {
  contextLength: number;
  maxCompletionTokens: number;
}

const dearest = (a: Money, b: Money) => (a > b ? a : b);

/**
 * The most one image of a request may cost. Output: the route's
 * `max_completion_tokens` at the dearer output price. Input: a prompt of B
 * UTF-8 bytes is at most B tokens (a token is at least one byte), never more
 * than the context length; with input images, the whole context length at the
 * dearer input price. The input and the request fee are counted with each of
 * the n images held, though billed once: a hold above the charge, never under.
 */
export function imageTokenHoldPerImage(prices: ImageTokenPrices, limits: ImageTokenLimits, prompt: string, withInputImages: boolean): Money {
  const output = BigInt(limits.maxCompletionTokens) * dearest(prices.completionImage, prices.completionText);
  const input = withInputImages
    ? BigInt(limits.contextLength) * dearest(prices.promptText, prices.promptImage)
    : BigInt(Math.min(Buffer.byteLength(prompt, "utf8"), limits.contextLength)) * prices.promptText;
  return output + input + prices.request;
}

/** A task's usage fields (TaskUsage) for the tokens a provider reported; all 0 when it reported none. */
export function taskTokenUsage(tokens: ImageTokens | undefined) {
  const { inputText = 0, inputImage = 0, outputImage = 0, outputText = 0 } = tokens ?? {};
  return {
    inputTokens: inputText + inputImage,
    inputTextTokens: inputText,
    inputImageTokens: inputImage,
    outputTokens: outputImage + outputText,
    outputImageTokens: outputImage,
    outputTextTokens: outputText,
  };
}

/**
 * What the images delivered of a job cost on a route priced per token: the
 * reported tokens at their prices, the output ones only for the share of the
 * images made that were delivered (one that is not an image is not stored).
 * Without reported tokens, each image delivered is charged its share of the
 * hold, the most it could have cost.
 */
export function measuredImageCost(prices: ImageTokenPrices, tokens: ImageTokens | undefined, delivered: number, made: number, holdPerImage: Money): Money {
  if (!tokens) return holdPerImage * BigInt(delivered);
  const share = (count: number) => (delivered >= made ? count : Math.ceil((count * delivered) / made));
  return imageTokenCost(prices, { ...tokens, outputImage: share(tokens.outputImage), outputText: share(tokens.outputText) });
}
