// An image task's token counts in OpenAI's images usage shape (the SDK's
// ImagesResponse.Usage): what the provider reported (OpenAI's gpt-image
// models), 0 for a provider that reports none. docs/tasks.md, "Billing".
import type { TaskUsage } from "../gen/router/v1/tasks_pb.js";

export function imageTokenUsage(usage: TaskUsage | undefined) {
  const input = usage?.inputTokens ?? 0;
  const output = usage?.outputTokens ?? 0;
  return {
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
    input_tokens_details: { text_tokens: usage?.inputTextTokens ?? 0, image_tokens: usage?.inputImageTokens ?? 0 },
    output_tokens_details: { image_tokens: usage?.outputImageTokens ?? 0, text_tokens: usage?.outputTextTokens ?? 0 },
  };
}

/** Whether the provider reported token counts at all. */
export const reportedTokens = (usage: TaskUsage) => usage.inputTokens > 0 || usage.outputTokens > 0;
