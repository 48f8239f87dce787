// Images priced per token: which routes are, the hold's worst case and the measured cost.
import { describe, expect, it } from "vitest";
import { parseMoney } from "../../../core/billing/money.ts";
import { imageTokenHoldPerImage, imageTokenPricesOf, isPricedPerToken, measuredImageCost } from "../../../core/tasks/image-token-price.ts";

const pricing = { prompt: "0.000005", completion: "0.00001", request: "0", completion_image: "0.000032", prompt_image: "0.000008" };
const prices = imageTokenPricesOf(pricing);
const limits = { contextLength: 32000, maxCompletionTokens: 6240 };

describe("image token prices", () => {
  it("apply to a route with completion_image and no per-image price; a per-image price wins", () => {
    expect(isPricedPerToken(pricing)).toBe(true);
    expect(isPricedPerToken({ ...pricing, image_output: "0.034" })).toBe(false);
    expect(isPricedPerToken({ ...pricing, image_output_per_megapixel: "0.01" })).toBe(false);
    expect(isPricedPerToken({ prompt: "0.000005", completion: "0.00001", request: "0" })).toBe(false);
  });

  it("hold each image's most output tokens at the dearer output price, and a prompt's UTF-8 bytes (at most the context) as input tokens", () => {
    const output = 6240n * parseMoney("0.000032");
    // "héllo": 6 bytes, so at most 6 tokens.
    expect(imageTokenHoldPerImage(prices, limits, "héllo", false)).toBe(output + 6n * parseMoney("0.000005"));
    expect(imageTokenHoldPerImage(prices, { ...limits, contextLength: 4 }, "héllo", false)).toBe(output + 4n * parseMoney("0.000005"));
    // Input images: the whole context at the dearer input price.
    expect(imageTokenHoldPerImage(prices, limits, "x", true)).toBe(output + 32000n * parseMoney("0.000008"));
    // Text output dearer than image output: held at the text price.
    const dearText = imageTokenPricesOf({ ...pricing, completion: "0.0001" });
    expect(imageTokenHoldPerImage(dearText, limits, "", false)).toBe(6240n * parseMoney("0.0001"));
  });

  it("charge the output tokens of the images delivered only, and the hold's share of each without reported tokens", () => {
    const tokens = { inputText: 10, inputImage: 0, outputImage: 300, outputText: 0 };
    expect(measuredImageCost(prices, tokens, 3, 3, 0n)).toBe(10n * prices.promptText + 300n * prices.completionImage);
    expect(measuredImageCost(prices, tokens, 2, 3, 0n)).toBe(10n * prices.promptText + 200n * prices.completionImage);
    expect(measuredImageCost(prices, undefined, 2, 3, 7n)).toBe(14n);
  });
});
