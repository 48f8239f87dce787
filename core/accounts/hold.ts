// The worst-case cost of a paid request, held from the balance before dispatch
// (decisions.md): for each attempt, its prompt at most (an upper bound from the
// request's size, capped by the route's context) plus max_tokens of completion
// at that route's prices; the hold is the dearest attempt's.
import type { GenerateRequest, Message } from "../../gen/router/v1/inference_pb.js";
import type { Money } from "../billing/money.ts";
import type { Attempt } from "../routing/plan.ts";

/**
 * Tokens an image, audio clip or file may count at most. No tokenizer is at
 * hand, so bounds: a text token is at least one UTF-8 byte; providers count an
 * image as at most a few thousand tokens; media bytes are not text, so their
 * base64 is counted at a quarter of its length.
 */
const IMAGE_TOKENS = 2_000;

export function holdFor(attempts: Attempt[]): Money {
  let dearest = 0n;
  for (const attempt of attempts) {
    const { prices, contextLength, maxCompletionTokens } = attempt.route;
    const completion = attempt.request.sampling?.maxTokens ?? maxCompletionTokens;
    const prompt = Math.min(promptTokensAtMost(attempt.request), contextLength);
    const promptPrice = [prices.inputCacheWrite, prices.inputCacheWrite1h].reduce((dearest, price) => (price > dearest ? price : dearest), prices.prompt);
    const cost = BigInt(prompt) * promptPrice + BigInt(completion) * prices.completion + prices.request;
    if (cost > dearest) dearest = cost;
  }
  return dearest;
}

function promptTokensAtMost(request: GenerateRequest): number {
  let tokens = Buffer.byteLength(JSON.stringify(request.tools.map((tool) => [tool.name, tool.description, tool.parameters])));
  for (const message of request.messages) tokens += messageTokensAtMost(message);
  if (request.media?.audioPrompt) tokens += Buffer.byteLength(request.media.audioPrompt);
  return tokens;
}

function messageTokensAtMost(message: Message): number {
  let tokens = 8; // role and framing
  for (const { part } of message.content) {
    switch (part.case) {
      case "text":
        tokens += Buffer.byteLength(part.value.text);
        break;
      case "image":
        tokens += IMAGE_TOKENS;
        break;
      case "reasoning":
        tokens += Buffer.byteLength(part.value.text) + Buffer.byteLength(part.value.signature);
        break;
      default:
        // Tool calls and results, audio and files: their serialized size.
        tokens += Math.ceil(Buffer.byteLength(JSON.stringify(part.value ?? "")) / (part.case === "audio" || part.case === "file" ? 4 : 1));
    }
  }
  return tokens;
}
