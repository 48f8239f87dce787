// The worst-case cost of a paid request, held from the balance before dispatch
// (docs/contract.md): for each attempt, its prompt at most (an upper bound from the
// request's size, capped by the route's context) plus max_tokens of completion
// at that route's prices; the hold is the dearest attempt's. Chat-specific, so
// it lives beside the plan: the meter (core/metering/) only takes the amount.
import { isMessage } from "@bufbuild/protobuf";
import { FilePartSchema, ImagePartSchema, ToolCallPartSchema, type GenerateRequest, type Message } from "../../gen/router/v1/inference_pb.js";
import { costOf, type TokenPrices } from "../billing/cost.ts";
import type { Money } from "../billing/money.ts";
import type { MeteredTokens } from "../metering/meter.ts";
import { imageUrl, textDataUriJsonBytes } from "../providers/data-uri.ts";
import { toolCallArguments } from "../providers/tool-call-arguments.ts";
import type { Attempt } from "./plan.ts";

/**
 * Tokens an image, audio clip or file may count at most. No tokenizer is at
 * hand, so bounds: a text token is at least one UTF-8 byte; providers count an
 * image as at most a few thousand tokens; media bytes are not text, so their
 * base64 is counted at a quarter of its length.
 */
const IMAGE_TOKENS = 2_000;

export function holdFor(attempts: Attempt[], promptBytes: ReadonlyMap<Attempt, number> = promptBytesOfAttempts(attempts)): Money {
  let dearest = 0n;
  for (const attempt of attempts) {
    const { prices, contextLength, maxCompletionTokens } = attempt.route;
    const completion = attempt.request.sampling?.maxTokens ?? maxCompletionTokens;
    const prompt = Math.min(promptBytes.get(attempt)!, contextLength);
    const promptPrice = promptPriceAtMost(attempt.request, prices);
    const cost = BigInt(prompt) * promptPrice + BigInt(completion) * completionPriceAtMost(prices) + prices.request;
    if (cost > dearest) dearest = cost;
  }
  return dearest;
}

/**
 * Each attempt's promptBytesOf: counted once for the hold, and kept for the
 * estimate of a cut stream. Attempts share the request's messages and tools:
 * their size is counted once (only the audio prompt differs, as routes may drop it).
 */
export function promptBytesOfAttempts(attempts: readonly Attempt[]): Map<Attempt, number> {
  const bounds = new Map<Message[], number>();
  const sizes = new Map<Attempt, number>();
  for (const attempt of attempts) {
    let bound = bounds.get(attempt.request.messages);
    if (bound === undefined) bounds.set(attempt.request.messages, (bound = promptTokensAtMost(attempt.request)));
    sizes.set(attempt, bound + audioPromptTokens(attempt.request));
  }
  return sizes;
}

/** Prompt tokens may be written to a cache only where the request sets breakpoints, and for an hour only with `ttl: "1h"`. */
function promptPriceAtMost(request: GenerateRequest, prices: TokenPrices): Money {
  const breakpoints = request.messages.flatMap((message) => message.content.flatMap((part) => (part.cacheControl ? [part.cacheControl] : [])));
  const candidates = [prices.prompt];
  if (breakpoints.length > 0) candidates.push(prices.inputCacheWrite);
  if (breakpoints.some((breakpoint) => breakpoint.ttl === "1h")) candidates.push(prices.inputCacheWrite1h);
  return candidates.reduce((dearest, price) => (price > dearest ? price : dearest));
}

/** Output may be images, audio or video at their own token prices (a video token costs more than a text one): the dearest bounds it. */
function completionPriceAtMost(prices: TokenPrices): Money {
  const candidates = [prices.completion, ...Object.values(prices.completionByModality ?? {})];
  return candidates.reduce((dearest, price) => (price > dearest ? price : dearest));
}

/** Characters per token of typical text, for estimates (not bounds). */
const CHARACTERS_PER_TOKEN = 4;

/** What a cut stream is estimated to have used, and that usage priced: one value, so a record's tokens always explain its cost. */
export interface CutStreamEstimate {
  usage: MeteredTokens;
  cost: Money;
}

/**
 * A paid stream cut before the provider reported its usage: its prompt and
 * the output relayed so far, at about four characters a token (the prompt
 * never more than the route's context), priced with costOf at the route's
 * prices (request fee included). The settlement caps the charge at the hold.
 */
export function cutStreamEstimate(route: Attempt["route"], promptBytes: number, outputCharacters: number): CutStreamEstimate {
  const usage: MeteredTokens = {
    inputTokens: Math.min(Math.ceil(promptBytes / CHARACTERS_PER_TOKEN), route.contextLength),
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: Math.ceil(outputCharacters / CHARACTERS_PER_TOKEN),
    reasoningTokens: 0,
  };
  return { usage, cost: costOf(usage, route.prices) };
}

/** The prompt's size in bytes, messages, tools and audio, for cutStreamEstimate: taken when a stream starts, so the request need not be kept. */
export function promptBytesOf(request: GenerateRequest): number {
  return promptTokensAtMost(request) + audioPromptTokens(request);
}

/** Messages and tools (the audio prompt apart, as routes may drop it). */
function promptTokensAtMost(request: GenerateRequest): number {
  let tokens = Buffer.byteLength(JSON.stringify(request.tools.map((tool) => [tool.name, tool.description, tool.parameters])));
  for (const message of request.messages) tokens += messageTokensAtMost(message);
  return tokens;
}

const audioPromptTokens = (request: GenerateRequest) => (request.media?.audioPrompt ? Buffer.byteLength(request.media.audioPrompt) : 0);

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
        tokens += Math.ceil(serializedBytes(part.value ?? "") / (part.case === "audio" || part.case === "file" ? 4 : 1));
    }
  }
  return tokens;
}

/**
 * A part's serialized size, counted as when content travelled as strings: the
 * form it travels in does not change the hold. A text document counts as its
 * base64 data URI (not built), a tool call's object as the JSON text it was
 * given as, an image in a tool result as its URL or data URI without the
 * fields that carry data (ImagePart.data, mime_type).
 */
function serializedBytes(value: object | string): number {
  let dataUris = 0;
  const json = JSON.stringify(value, (_key, field: unknown) => {
    if (isMessage(field, FilePartSchema) && field.text !== undefined) {
      dataUris += textDataUriJsonBytes(field.mimeType, field.text);
      return { ...field, text: undefined };
    }
    if (isMessage(field, ToolCallPartSchema) && field.input) return { ...field, input: undefined, arguments: toolCallArguments(field) };
    if (isMessage(field, ImagePartSchema)) return { ...field, url: imageUrl(field), data: undefined, mimeType: undefined };
    return field;
  });
  return Buffer.byteLength(json) + dataUris;
}
