// Translates Gemini GenerateContentResponses into the hub's block events. A
// streamed SSE chunk is a GenerateContentResponse too (holding the new parts
// only), so one translator reads both the stream and a whole JSON answer.
//
// Parts map to blocks:
// - `{text, thought: true}`: reasoning text;
// - `thoughtSignature` (on any part): a reasoning delta `{text: "", signature}`,
//   emitted just before the part it came with (into the open reasoning block
//   when the thoughts precede it), so convert-request can put it back on that part;
// - `functionCall`: one whole tool-call block (Gemini never splits a call);
// - `text`: answer text, consecutive parts (across chunks) continuing one block;
// - `inlineData` (generated images, music or speech): one whole image or audio block with its bytes;
// - `executableCode` / `codeExecutionResult`: a whole server tool call (`code_execution`) and its result;
// - grounding's `webSearchQueries`: a whole server tool call (`web_search`), its sources annotations.
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { BlockType } from "../../../gen/router/v1/inference_pb.js";
import { BlockWriter, type AnnotationInit } from "../block-writer.ts";
import { convertUsage, geminiUsageSchema, type GeminiUsage } from "./convert-usage.ts";
import { blockedPromptFinish, mapFinishReason } from "./map-finish-reason.ts";
import type { Translator } from "../http-exchange.ts";

const partSchema = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  thoughtSignature: z.string().optional(),
  functionCall: z
    .looseObject({ id: z.string().optional(), name: z.string(), args: z.record(z.string(), z.unknown()).nullish() })
    .optional(),
  inlineData: z.looseObject({ mimeType: z.string(), data: z.string() }).optional(),
  // The code execution tool: the code the model ran, then its result.
  executableCode: z.looseObject({}).optional(),
  codeExecutionResult: z.looseObject({}).optional(),
});

const groundingMetadataSchema = z.looseObject({
  // The searches Google Search grounding ran for the answer.
  webSearchQueries: z.array(z.string()).nullish(),
  groundingChunks: z
    .array(
      z.looseObject({
        web: z.looseObject({ uri: z.string().optional(), title: z.string().optional() }).optional(),
        retrievedContext: z.looseObject({ uri: z.string().optional(), title: z.string().optional() }).optional(),
      }),
    )
    .nullish(),
  groundingSupports: z
    .array(
      z.looseObject({
        segment: z
          .looseObject({ startIndex: z.number().int().optional(), endIndex: z.number().int().optional(), text: z.string().optional() })
          .optional(),
        groundingChunkIndices: z.array(z.number().int()).nullish(),
      }),
    )
    .nullish(),
});

export const responseSchema = z.looseObject({
  candidates: z
    .array(
      z.looseObject({
        content: z.looseObject({ parts: z.array(partSchema).nullish() }).nullish(),
        finishReason: z.string().nullish(),
        groundingMetadata: groundingMetadataSchema.nullish(),
      }),
    )
    .nullish(),
  promptFeedback: z.looseObject({ blockReason: z.string().nullish() }).nullish(),
  usageMetadata: geminiUsageSchema.nullish(),
});

export type GeminiResponse = z.infer<typeof responseSchema>;
type GroundingMetadata = z.infer<typeof groundingMetadataSchema>;

export type ResponseTranslator = Translator<GeminiResponse>;

export function createResponseTranslator(): ResponseTranslator {
  // Text and reasoning blocks continue across parts and chunks; tool-call and media blocks come whole.
  const blocks = new BlockWriter();
  // Gemini's calls often carry no id: ours are unique across answers, so the
  // calls of a conversation's turns never share one (clients and other
  // providers key tool results by id).
  const idPrefix = randomBytes(6).toString("hex");
  let generatedIds = 0;
  const newId = (kind: string) => `${kind}_${idPrefix}_${++generatedIds}`;
  // The id of the latest code execution call, which its result answers.
  let codeCallId = "";
  // Written as one call at the end, so a search reported mid-answer does not split its text into two blocks.
  let searchQueries: string[] | undefined;
  let hasToolCalls = false;
  let finishRaw: string | undefined;
  let blockReason: string | undefined;
  let usage: GeminiUsage | undefined;
  // The answer's text so far, to turn grounding byte offsets into character indexes.
  let answerText = "";
  const citedKeys = new Set<string>();

  function translatePart(part: z.infer<typeof partSchema>) {
    if (part.thought) {
      if (!part.text && !part.thoughtSignature) return;
      const index = blocks.continueBlock(BlockType.REASONING);
      if (part.text) blocks.text(index, part.text);
      if (part.thoughtSignature) blocks.signature(index, part.thoughtSignature);
      return;
    }
    if (part.thoughtSignature) blocks.signature(blocks.continueBlock(BlockType.REASONING), part.thoughtSignature);
    if (part.functionCall) {
      const { id, name, args } = part.functionCall;
      hasToolCalls = true;
      blocks.wholeBlock(BlockType.TOOL_CALL, { toolCallId: id || newId("call"), toolName: name }, JSON.stringify(args ?? {}));
      return;
    }
    if (part.executableCode) {
      codeCallId = newId("code");
      blocks.wholeBlock(BlockType.SERVER_TOOL_CALL, { id: codeCallId, serverToolName: "code_execution" }, JSON.stringify(part.executableCode));
      return;
    }
    if (part.codeExecutionResult) {
      const opening = { serverToolName: "code_execution", serverToolCallId: codeCallId };
      blocks.wholeBlock(BlockType.SERVER_TOOL_RESULT, opening, JSON.stringify(part.codeExecutionResult));
      return;
    }
    if (part.inlineData) {
      const { mimeType, data } = part.inlineData;
      blocks.wholeBlock(mediaBlockType(mimeType), { mimeType }, "", Buffer.from(data, "base64"));
      return;
    }
    if (part.text) {
      blocks.text(blocks.continueBlock(BlockType.TEXT), part.text);
      answerText += part.text;
    }
  }

  /** One annotation per cited source and passage; sources no passage cites stand alone. */
  function annotate(metadata: GroundingMetadata) {
    // Streamed chunks may repeat the metadata: the latest list of searches wins.
    if (metadata.webSearchQueries?.length) searchQueries = metadata.webSearchQueries;
    const sources = (metadata.groundingChunks ?? []).map((chunk) => chunk.web ?? chunk.retrievedContext);
    const cited = new Set<number>();
    const emit = (citation: AnnotationInit) => {
      const key = `${citation.url}|${citation.startIndex ?? ""}|${citation.endIndex ?? ""}`;
      if (citedKeys.has(key)) return;
      citedKeys.add(key);
      blocks.annotation(citation);
    };
    for (const support of metadata.groundingSupports ?? []) {
      for (const sourceIndex of support.groundingChunkIndices ?? []) {
        const source = sources[sourceIndex];
        if (!source?.uri) continue;
        cited.add(sourceIndex);
        const citation: AnnotationInit = { url: source.uri, title: source.title ?? "" };
        const { startIndex, endIndex, text } = support.segment ?? {};
        // Segment offsets are UTF-8 bytes (the API reference), counted over the answer's text.
        if (endIndex !== undefined) {
          citation.startIndex = characterIndex(answerText, startIndex ?? 0);
          citation.endIndex = characterIndex(answerText, endIndex);
        }
        if (text) citation.content = text;
        emit(citation);
      }
    }
    sources.forEach((source, sourceIndex) => {
      if (source?.uri && !cited.has(sourceIndex)) emit({ url: source.uri, title: source.title ?? "" });
    });
  }

  return {
    translate(response) {
      // Every streamed chunk repeats the usage so far; the last one is complete (converted at the end).
      if (response.usageMetadata) usage = response.usageMetadata;
      const candidate = response.candidates?.[0];
      if (!candidate) {
        if (response.promptFeedback?.blockReason) blockReason = response.promptFeedback.blockReason;
        return blocks.take();
      }
      for (const part of candidate.content?.parts ?? []) translatePart(part);
      if (candidate.groundingMetadata) annotate(candidate.groundingMetadata);
      if (candidate.finishReason) finishRaw = candidate.finishReason;
      return blocks.take();
    },
    complete: () => (finishRaw !== undefined || blockReason !== undefined) && usage !== undefined,
    end() {
      const raw = finishRaw ?? "STOP";
      if (searchQueries) blocks.wholeBlock(BlockType.SERVER_TOOL_CALL, { id: newId("search"), serverToolName: "web_search" }, JSON.stringify({ queries: searchQueries }));
      const finish = finishRaw === undefined && blockReason !== undefined ? blockedPromptFinish(blockReason) : { reason: mapFinishReason(raw, hasToolCalls), rawReason: raw };
      blocks.end(usage && convertUsage(usage), finish);
      return blocks.take();
    },
  };
}

/** The string index of the character that starts at `byteOffset` of the UTF-8 encoding of `text`. */
export function characterIndex(text: string, byteOffset: number): number {
  let bytes = 0;
  let index = 0;
  for (const char of text) {
    if (bytes >= byteOffset) return index;
    const codePoint = char.codePointAt(0)!;
    bytes += codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
    index += char.length;
  }
  return index;
}

/** Generated media: audio (music and speech models) or images. */
function mediaBlockType(mimeType: string): BlockType {
  return mimeType.startsWith("audio/") ? BlockType.AUDIO : BlockType.IMAGE;
}
