// Translates OpenAI-style chunks (stream `delta`s, or a whole JSON `message`,
// which is the same shape) into the hub's block events. Vendors put reasoning
// in `reasoning` or `reasoning_content`; both are read.
import { z } from "zod";
import { BlockType } from "../../../gen/router/v1/inference_pb.js";
import { BlockWriter } from "../block-writer.ts";
import { convertUsage, openAiUsageSchema, type OpenAiUsage } from "./convert-usage.ts";
import { mapFinishReason } from "./map-finish-reason.ts";
import type { Translator } from "../http-exchange.ts";

const toolCallDeltaSchema = z.looseObject({
  index: z.number().int().nonnegative().optional(),
  id: z.string().nullish(),
  function: z.looseObject({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});

/** OpenAI's web-search citations (`url_citation`), on the message or a stream delta. */
const annotationSchema = z.looseObject({
  type: z.string(),
  url_citation: z
    .looseObject({ url: z.string(), title: z.string().nullish(), start_index: z.number().int().nullish(), end_index: z.number().int().nullish() })
    .nullish(),
});

const deltaSchema = z.looseObject({
  content: z.string().nullish(),
  // The model's refusal to answer, in words (OpenAI).
  refusal: z.string().nullish(),
  annotations: z.array(annotationSchema).nullish(),
  reasoning: z.string().nullish(),
  reasoning_content: z.string().nullish(),
  tool_calls: z.array(toolCallDeltaSchema).nullish(),
});

export const chunkSchema = z.looseObject({
  choices: z
    .array(z.looseObject({ delta: deltaSchema.nullish(), message: deltaSchema.nullish(), finish_reason: z.string().nullish() }))
    .nullish(),
  usage: openAiUsageSchema.nullish(),
  // Perplexity lists its sources as URLs on the completion (and repeats them on every chunk).
  citations: z.array(z.string()).nullish(),
});

export type OpenAiChunk = z.infer<typeof chunkSchema>;

/**
 * The hot chunk shapes (a text, reasoning or refusal delta, a finish reason, no
 * usage, tool calls, annotations or citations), checked by hand: `chunkSchema`
 * accepts every value this accepts, with the same meaning, and the raw value
 * is kept. Anything else (and every refusal) goes to the schema.
 */
export function isPlainChunk(json: unknown): json is OpenAiChunk {
  if (!isRecord(json) || json.usage != null || json.citations != null) return false;
  const choices = json.choices;
  if (choices == null) return true;
  if (!Array.isArray(choices)) return false;
  for (const choice of choices) {
    if (!isRecord(choice)) return false;
    const finish = choice.finish_reason;
    if (finish != null && typeof finish !== "string") return false;
    if (!isPlainDelta(choice.delta) || !isPlainDelta(choice.message)) return false;
  }
  return true;
}

function isPlainDelta(delta: unknown): boolean {
  if (delta == null) return true;
  if (!isRecord(delta) || delta.annotations != null || delta.tool_calls != null) return false;
  return isNullishString(delta.content) && isNullishString(delta.refusal) && isNullishString(delta.reasoning) && isNullishString(delta.reasoning_content);
}

function isNullishString(value: unknown): boolean {
  return value == null || typeof value === "string";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export type ChunkTranslator = Translator<OpenAiChunk>;

export function createChunkTranslator(): ChunkTranslator {
  return new OpenAiChunkTranslator();
}

/** One object per answer, its state in fields: a stream keeps no closures for it. */
class OpenAiChunkTranslator implements ChunkTranslator {
  // Text, reasoning and refusal blocks continue until another kind of content
  // starts. Tool calls are joined by their `index`, and the protocol lets a
  // provider come back to an earlier call, so they stay open side by side
  // until other content or the end.
  private readonly blocks = new BlockWriter();
  private finishRaw: string | undefined;
  private usage: OpenAiUsage | undefined;
  // Made at the first citation (Perplexity): most answers cite nothing.
  private citedUrls: Set<string> | undefined;

  translate(chunk: OpenAiChunk) {
    const { blocks } = this;
    if (chunk.usage) this.usage = chunk.usage;
    for (const url of chunk.citations ?? []) {
      this.citedUrls ??= new Set();
      if (!this.citedUrls.has(url)) blocks.annotation({ url, title: "" });
      this.citedUrls.add(url);
    }
    const choice = chunk.choices?.[0];
    if (!choice) return blocks.take();
    const delta = choice.delta ?? choice.message;
    const reasoning = delta?.reasoning ?? delta?.reasoning_content;
    if (reasoning) blocks.text(blocks.continueBlock(BlockType.REASONING), reasoning);
    if (delta?.content) blocks.text(blocks.continueBlock(BlockType.TEXT), delta.content);
    if (delta?.refusal) blocks.text(blocks.continueBlock(BlockType.REFUSAL), delta.refusal);
    // After the text they cite (a whole message carries both), so they tie to its block.
    for (const annotation of delta?.annotations ?? []) {
      const citation = annotation.url_citation;
      if (annotation.type !== "url_citation" || !citation) continue;
      blocks.annotation({ url: citation.url, title: citation.title ?? "", startIndex: citation.start_index ?? undefined, endIndex: citation.end_index ?? undefined });
    }
    for (const [position, call] of (delta?.tool_calls ?? []).entries()) {
      const key = call.index ?? position;
      const index = blocks.openIndex(key) ?? blocks.startBlock(BlockType.TOOL_CALL, { toolCallId: call.id ?? "", toolName: call.function?.name ?? "" }, key);
      if (call.function?.arguments) blocks.text(index, call.function.arguments);
    }
    if (choice.finish_reason) this.finishRaw = choice.finish_reason;
    return blocks.take();
  }

  complete(): boolean {
    return this.finishRaw !== undefined && this.usage !== undefined;
  }

  end() {
    const raw = this.finishRaw ?? "stop";
    this.blocks.end(this.usage && convertUsage(this.usage), { reason: mapFinishReason(raw), rawReason: raw });
    return this.blocks.take();
  }
}
