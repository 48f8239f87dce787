// Translates OpenAI-style chunks (stream `delta`s, or a whole JSON `message`,
// which is the same shape) into the hub's block events. Vendors put reasoning
// in `reasoning` or `reasoning_content`; both are read.
import { z } from "zod";
import { BlockType } from "../../../gen/router/v1/inference_pb.js";
import type { TokenUsage, UpstreamEvent } from "../types.ts";
import { convertUsage, openAiUsageSchema } from "./convert-usage.ts";
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

export type ChunkTranslator = Translator<OpenAiChunk>;

export function createChunkTranslator(): ChunkTranslator {
  let nextIndex = 0;
  // Text and reasoning blocks never overlap: a new kind of content closes the
  // open one. Tool calls are joined by their `index`, and the protocol lets a
  // provider come back to an earlier call, so they stay open side by side
  // until other content or the end.
  let open: { key: string; index: number } | undefined;
  const openTools = new Map<string, number>();
  let finishRaw: string | undefined;
  let usage: TokenUsage | undefined;
  const citedUrls = new Set<string>();

  function blockFor(key: string, start: Omit<Extract<UpstreamEvent, { type: "block_start" }>, "type" | "index">, out: UpstreamEvent[]): number {
    if (open?.key === key) return open.index;
    closeOpen(out);
    open = { key, index: nextIndex++ };
    out.push({ type: "block_start", index: open.index, ...start });
    return open.index;
  }

  function toolBlockFor(key: string, start: Omit<Extract<UpstreamEvent, { type: "block_start" }>, "type" | "index">, out: UpstreamEvent[]): number {
    const known = openTools.get(key);
    if (known !== undefined) return known;
    if (open) out.push({ type: "block_stop", index: open.index });
    open = undefined;
    const index = nextIndex++;
    openTools.set(key, index);
    out.push({ type: "block_start", index, ...start });
    return index;
  }

  function closeOpen(out: UpstreamEvent[]) {
    if (open) out.push({ type: "block_stop", index: open.index });
    open = undefined;
    for (const index of openTools.values()) out.push({ type: "block_stop", index });
    openTools.clear();
  }

  return {
    translate(chunk) {
      const out: UpstreamEvent[] = [];
      if (chunk.usage) usage = convertUsage(chunk.usage);
      for (const url of chunk.citations ?? []) {
        if (!citedUrls.has(url)) out.push({ type: "annotation", annotation: { url, title: "" } });
        citedUrls.add(url);
      }
      const choice = chunk.choices?.[0];
      if (!choice) return out;
      const delta = choice.delta ?? choice.message;
      for (const annotation of delta?.annotations ?? []) {
        const citation = annotation.url_citation;
        if (annotation.type !== "url_citation" || !citation) continue;
        out.push({
          type: "annotation",
          annotation: { url: citation.url, title: citation.title ?? "", startIndex: citation.start_index ?? undefined, endIndex: citation.end_index ?? undefined },
        });
      }
      const reasoning = delta?.reasoning ?? delta?.reasoning_content;
      if (reasoning) {
        out.push({ type: "block_delta", index: blockFor("reasoning", { blockType: BlockType.REASONING }, out), text: reasoning });
      }
      if (delta?.content) {
        out.push({ type: "block_delta", index: blockFor("text", { blockType: BlockType.TEXT }, out), text: delta.content });
      }
      for (const [position, call] of (delta?.tool_calls ?? []).entries()) {
        const key = `tool:${call.index ?? position}`;
        const start = { blockType: BlockType.TOOL_CALL, toolCallId: call.id ?? "", toolName: call.function?.name ?? "" };
        const index = toolBlockFor(key, start, out);
        if (call.function?.arguments) out.push({ type: "block_delta", index, text: call.function.arguments });
      }
      if (choice.finish_reason) finishRaw = choice.finish_reason;
      return out;
    },
    complete: () => finishRaw !== undefined && usage !== undefined,
    end() {
      const out: UpstreamEvent[] = [];
      closeOpen(out);
      if (usage) out.push({ type: "usage", usage });
      const raw = finishRaw ?? "stop";
      out.push({ type: "finish", reason: mapFinishReason(raw), rawReason: raw });
      return out;
    },
  };
}
