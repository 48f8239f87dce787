// The token counts of an OpenAI images answer (`usage`, GPT image models only):
// input as text and image tokens, output as image and text tokens. A route
// priced per token is charged from them (docs/tasks.md, "Billing").
import { z } from "zod";
import type { ImageTokens } from "../media-job.ts";

const count = z.number().int().nonnegative();

/** OpenAI's ImagesResponse.Usage; `output_tokens_details` is newer (gpt-image-1.5 and later) and optional. */
export const imagesUsage = z
  .object({
    input_tokens: count,
    input_tokens_details: z.object({ text_tokens: count.nullish(), image_tokens: count.nullish() }).loose().nullish(),
    output_tokens: count,
    output_tokens_details: z.object({ text_tokens: count.nullish(), image_tokens: count.nullish() }).loose().nullish(),
  })
  .loose();

/**
 * The counts by kind. Where the answer does not break a total down, input
 * tokens are text (the prompt) and output tokens image (what the API makes);
 * a breakdown larger than its total is taken as the total.
 */
export function imageTokensOf(usage: z.output<typeof imagesUsage>): ImageTokens {
  const inputImage = Math.min(usage.input_tokens_details?.image_tokens ?? 0, usage.input_tokens);
  const outputText = Math.min(usage.output_tokens_details?.text_tokens ?? 0, usage.output_tokens);
  return { inputText: usage.input_tokens - inputImage, inputImage, outputImage: usage.output_tokens - outputText, outputText };
}
