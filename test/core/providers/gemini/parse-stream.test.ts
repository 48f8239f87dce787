// Gemini answers (SSE bytes as Google sends them, and whole JSON answers) into block events.
// Every fixture's events are also checked against the block lifecycle
// (test/support/block-lifecycle.ts): one block open at a time, each closed once.
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { characterIndex, createResponseTranslator, responseSchema } from "../../../../core/providers/gemini/parse-stream.ts";
import { readServerSentEvents } from "../../../../core/providers/read-sse.ts";
import { blockTrace, viewsOf, type EventView } from "../../../support/event-view.ts";
import { BlockType, FinishReason, Modality } from "../../../../gen/router/v1/inference_pb.js";
import { expectWellFormedBlocks } from "../../../support/block-lifecycle.ts";
import { upstreamRecording } from "../../../support/upstream-recording.ts";

/** Google separates events with CRLF pairs; no pings, no [DONE]: the body just ends. */
const sse = (...chunks: unknown[]) => chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`).join("");

async function translateSse(body: string, splitAt = 37): Promise<{ events: EventView[]; complete: boolean }> {
  // Cut the bytes mid-event, as a network would.
  const bytes = Buffer.from(body);
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += splitAt) pieces.push(bytes.subarray(offset, offset + splitAt));
  const translator = createResponseTranslator();
  const events: EventView[] = [];
  for await (const event of readServerSentEvents(Readable.from(pieces))) {
    events.push(...viewsOf(translator.translate(responseSchema.parse(JSON.parse(event.data)))));
  }
  const complete = translator.complete();
  if (complete) events.push(...viewsOf(translator.end()));
  expectWellFormedBlocks(events, { truncated: !complete });
  return { events, complete };
}

function translateJson(answer: unknown): EventView[] {
  const translator = createResponseTranslator();
  const events = viewsOf(translator.translate(responseSchema.parse(answer)));
  expect(translator.complete()).toBe(true);
  const all = [...events, ...viewsOf(translator.end())];
  expectWellFormedBlocks(all);
  return all;
}

const chunk = (parts: unknown[], finishReason?: string) => ({
  candidates: [{ content: { parts, role: "model" }, index: 0, ...(finishReason && { finishReason }) }],
  usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 5, totalTokenCount: 10 },
});

describe("a streamed answer", () => {
  it("thoughts, then the text with its signature, continued across chunks", async () => {
    // Four chunks of gemini-2.5-flash: a thought, then text whose first part carries the signature.
    const body = upstreamRecording("gemini/thoughts-then-signed-text.sse");
    const { events, complete } = await translateSse(body);
    expect(complete).toBe(true);
    expect(events).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.REASONING },
      { type: "block_delta", index: 0, text: "**Greeting**\n\nThe user says hi." },
      { type: "block_delta", index: 0, text: "", signature: "c2lnLWE=" },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, blockType: BlockType.TEXT },
      { type: "block_delta", index: 1, text: "Hello" },
      { type: "block_delta", index: 1, text: " there, " },
      { type: "block_delta", index: 1, text: "friend!" },
      { type: "block_stop", index: 1 },
      {
        type: "usage",
        usage: { inputTokens: 9, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 115, reasoningTokens: 111, inputByModality: [{ modality: Modality.TEXT, tokens: 9 }] },
      },
      { type: "finish", reason: FinishReason.STOP, rawReason: "STOP" },
    ]);
  });

  it("Gemini 3: a trailing signature on an empty text part gets a reasoning block of its own", async () => {
    const body = sse(
      { candidates: [{ content: { parts: [{ text: "Hi!" }], role: "model" }, index: 0 }], usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } },
      {
        candidates: [{ content: { parts: [{ text: "", thoughtSignature: "c2lnLWI=" }], role: "model" }, finishReason: "STOP", index: 0 }],
        usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 47, thoughtsTokenCount: 40, cachedContentTokenCount: 4 },
        modelVersion: "gemini-3-flash-preview",
      },
    );
    const { events } = await translateSse(body);
    expect(events).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.TEXT },
      { type: "block_delta", index: 0, text: "Hi!" },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, blockType: BlockType.REASONING },
      { type: "block_delta", index: 1, text: "", signature: "c2lnLWI=" },
      { type: "block_stop", index: 1 },
      { type: "usage", usage: { inputTokens: 5, cachedInputTokens: 4, cacheWriteTokens: 0, outputTokens: 42, reasoningTokens: 40 } },
      { type: "finish", reason: FinishReason.STOP, rawReason: "STOP" },
    ]);
  });

  it("parallel function calls: whole calls, the signature on the first, ids kept or generated", async () => {
    const body = sse({
      candidates: [
        {
          content: {
            parts: [
              { functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "c2lnLWM=" },
              { functionCall: { id: "fc-7", name: "get_weather", args: { city: "Lyon" } } },
              { functionCall: { name: "get_time", args: {} } },
            ],
            role: "model",
          },
          finishReason: "STOP",
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 50, candidatesTokenCount: 30, totalTokenCount: 80 },
      modelVersion: "gemini-3-pro-preview",
    });
    const { events } = await translateSse(body, 1000);
    expect(events).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.REASONING },
      { type: "block_delta", index: 0, text: "", signature: "c2lnLWM=" },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, blockType: BlockType.TOOL_CALL, id: expect.stringMatching(/^call_[0-9a-f]{12}_1$/), toolCallId: expect.stringMatching(/^call_[0-9a-f]{12}_1$/), toolName: "get_weather" },
      { type: "block_delta", index: 1, text: '{"city":"Paris"}' },
      { type: "block_stop", index: 1 },
      { type: "block_start", index: 2, blockType: BlockType.TOOL_CALL, id: "fc-7", toolCallId: "fc-7", toolName: "get_weather" },
      { type: "block_delta", index: 2, text: '{"city":"Lyon"}' },
      { type: "block_stop", index: 2 },
      { type: "block_start", index: 3, blockType: BlockType.TOOL_CALL, id: expect.stringMatching(/^call_[0-9a-f]{12}_2$/), toolCallId: expect.stringMatching(/^call_[0-9a-f]{12}_2$/), toolName: "get_time" },
      { type: "block_delta", index: 3, text: "{}" },
      { type: "block_stop", index: 3 },
      { type: "usage", usage: { inputTokens: 50, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 30, reasoningTokens: 0 } },
      { type: "finish", reason: FinishReason.TOOL_CALLS, rawReason: "STOP" },
    ]);
  });

  it("grounding: one annotation per cited passage, byte offsets turned into characters", async () => {
    // "Über" takes 5 bytes in UTF-8 and 4 characters; the second sentence runs from byte 21 to 34, characters 20 to 33.
    const answer = "Über 10 km of road. Paris is big.";
    const body = sse(
      { candidates: [{ content: { parts: [{ text: answer.slice(0, 10) }], role: "model" }, index: 0 }] },
      {
        candidates: [
          {
            content: { parts: [{ text: answer.slice(10) }], role: "model" },
            finishReason: "STOP",
            index: 0,
            groundingMetadata: {
              webSearchQueries: ["paris size"],
              searchEntryPoint: { renderedContent: "<div></div>" },
              groundingChunks: [
                { web: { uri: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/a", title: "roads.example" } },
                { web: { uri: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/b", title: "paris.example" } },
                { web: { uri: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/c", title: "unused.example", blockIndex: 0 } },
              ],
              groundingSupports: [
                { segment: { endIndex: 20, text: "Über 10 km of road." }, groundingChunkIndices: [0] },
                { segment: { startIndex: 21, endIndex: 34, text: "Paris is big." }, groundingChunkIndices: [0, 1] },
              ],
            },
          },
        ],
        usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 9, toolUsePromptTokenCount: 300, totalTokenCount: 321 },
      },
    );
    const { events } = await translateSse(body);
    expect(events.filter((event) => event.type === "annotation")).toEqual([
      { type: "annotation", annotation: { url: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/a", title: "roads.example", startIndex: 0, endIndex: 19, content: "Über 10 km of road.", blockIndex: 0 } },
      { type: "annotation", annotation: { url: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/a", title: "roads.example", startIndex: 20, endIndex: 33, content: "Paris is big.", blockIndex: 0 } },
      { type: "annotation", annotation: { url: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/b", title: "paris.example", startIndex: 20, endIndex: 33, content: "Paris is big.", blockIndex: 0 } },
      { type: "annotation", annotation: { url: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/c", title: "unused.example", blockIndex: 0 } },
    ]);
    expect(answer.slice(20, 33)).toBe("Paris is big.");
    // The search results fed to the model are input too.
    expect(events.find((event) => event.type === "usage")).toEqual({
      type: "usage",
      usage: { inputTokens: 312, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 9, reasoningTokens: 0 },
    });
  });

  it("a stream without a finish reason is incomplete", async () => {
    const body = sse({ candidates: [{ content: { parts: [{ text: "Hel" }], role: "model" }, index: 0 }], usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } });
    expect((await translateSse(body)).complete).toBe(false);
  });
});

describe("blocks close before the next kind of content", () => {
  it("text, then a function call in the same chunk: the text block is stopped first", async () => {
    const { events } = await translateSse(sse(chunk([{ text: "Let me check." }, { functionCall: { name: "get_weather", args: { city: "Paris" } } }], "STOP")));
    expect(blockTrace(events)).toEqual(["start 0 TEXT", "delta 0 Let me check.", "stop 0", "start 1 TOOL_CALL get_weather", 'delta 1 {"city":"Paris"}', "stop 1"]);
  });

  it("text continued across chunks, then a function call in a later chunk", async () => {
    const { events } = await translateSse(sse(chunk([{ text: "Let me " }]), chunk([{ text: "check." }]), chunk([{ functionCall: { name: "get_weather", args: {} } }], "STOP")));
    expect(blockTrace(events)).toEqual(["start 0 TEXT", "delta 0 Let me ", "delta 0 check.", "stop 0", "start 1 TOOL_CALL get_weather", "delta 1 {}", "stop 1"]);
  });

  it("thoughts, then text, then signed function calls, across chunks", async () => {
    const { events } = await translateSse(
      sse(
        chunk([{ text: "Two cities.", thought: true }]),
        chunk([{ text: "Checking both." }]),
        chunk(
          [
            { functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "c2ln" },
            { functionCall: { name: "get_weather", args: { city: "Rome" } } },
          ],
          "STOP",
        ),
      ),
    );
    expect(blockTrace(events)).toEqual([
      "start 0 REASONING",
      "delta 0 Two cities.",
      "stop 0",
      "start 1 TEXT",
      "delta 1 Checking both.",
      "stop 1",
      // The signature that came with the first call gets a reasoning block of its own, just before it.
      "start 2 REASONING",
      "delta 2  sig:c2ln",
      "stop 2",
      "start 3 TOOL_CALL get_weather",
      'delta 3 {"city":"Paris"}',
      "stop 3",
      "start 4 TOOL_CALL get_weather",
      'delta 4 {"city":"Rome"}',
      "stop 4",
    ]);
  });

  it("a function call, then text: the text opens a new block", async () => {
    const { events } = await translateSse(sse(chunk([{ functionCall: { name: "f", args: {} } }]), chunk([{ text: "Done." }], "STOP")));
    expect(blockTrace(events)).toEqual(["start 0 TOOL_CALL f", "delta 0 {}", "stop 0", "start 1 TEXT", "delta 1 Done.", "stop 1"]);
  });

  it("text, an image, then more text: three blocks one after another", () => {
    const events = translateJson(chunk([{ text: "Here:" }, { inlineData: { mimeType: "image/png", data: "iVBORw0K" } }, { text: "Enjoy." }], "STOP"));
    expect(blockTrace(events)).toEqual(["start 0 TEXT", "delta 0 Here:", "stop 0", "start 1 IMAGE", "delta 1 <6 bytes>", "stop 1", "start 2 TEXT", "delta 2 Enjoy.", "stop 2"]);
  });
});

describe("a whole JSON answer", () => {
  it("reads the same parts as a stream", () => {
    const events = translateJson({
      candidates: [
        {
          content: { parts: [{ text: "Thinking.", thought: true }, { text: "Hello world", thoughtSignature: "c2ln" }], role: "model" },
          finishReason: "STOP",
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2, totalTokenCount: 10, thoughtsTokenCount: 4 },
      modelVersion: "gemini-2.5-pro",
      responseId: "x",
    });
    expect(events.map((event) => event.type)).toEqual(["block_start", "block_delta", "block_delta", "block_stop", "block_start", "block_delta", "block_stop", "usage", "finish"]);
  });

  it("MAX_TOKENS spent on thoughts: no content, a length finish", () => {
    const events = translateJson({
      candidates: [{ content: { role: "model" }, finishReason: "MAX_TOKENS", index: 0 }],
      usageMetadata: { promptTokenCount: 4, totalTokenCount: 104, thoughtsTokenCount: 100 },
    });
    expect(events).toEqual([
      { type: "usage", usage: { inputTokens: 4, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 100, reasoningTokens: 100 } },
      { type: "finish", reason: FinishReason.LENGTH, rawReason: "MAX_TOKENS" },
    ]);
  });

  it("a blocked prompt: no candidates, a content-filter finish", () => {
    const events = translateJson({
      promptFeedback: { blockReason: "PROHIBITED_CONTENT" },
      usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 },
      modelVersion: "gemini-2.5-flash",
    });
    expect(events).toEqual([
      { type: "usage", usage: { inputTokens: 8, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0, reasoningTokens: 0 } },
      { type: "finish", reason: FinishReason.CONTENT_FILTER, rawReason: "PROHIBITED_CONTENT" },
    ]);
  });

  it("relays a generated image as one whole image block with its bytes", () => {
    const events = translateJson({
      candidates: [{ content: { parts: [{ text: "Here:" }, { inlineData: { mimeType: "image/png", data: "iVBORw0K" } }], role: "model" }, finishReason: "STOP" }],
      usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 1290, totalTokenCount: 1294 },
    });
    expect(events.filter((event) => event.type.startsWith("block"))).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.TEXT },
      { type: "block_delta", index: 0, text: "Here:" },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, blockType: BlockType.IMAGE, mimeType: "image/png" },
      { type: "block_delta", index: 1, text: "", data: Buffer.from("iVBORw0K", "base64") },
      { type: "block_stop", index: 1 },
    ]);
  });
});

describe("server tools", () => {
  it("code execution: the code as a server tool call, its result answering it, then the text", () => {
    const events = translateJson(
      chunk(
        [
          { executableCode: { language: "PYTHON", code: "print(6*7)" } },
          { codeExecutionResult: { outcome: "OUTCOME_OK", output: "42\n" } },
          { text: "It is 42." },
        ],
        "STOP",
      ),
    );
    const starts = events.flatMap((e) => (e.type === "block_start" ? [e] : []));
    expect(starts).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.SERVER_TOOL_CALL, id: expect.stringMatching(/^code_[0-9a-f]{12}_1$/), serverToolName: "code_execution" },
      { type: "block_start", index: 1, blockType: BlockType.SERVER_TOOL_RESULT, serverToolName: "code_execution", serverToolCallId: (starts[0] as { id: string }).id },
      { type: "block_start", index: 2, blockType: BlockType.TEXT },
    ]);
    const textOf = (index: number) => events.flatMap((e) => (e.type === "block_delta" && e.index === index ? [e.text] : [])).join("");
    expect(JSON.parse(textOf(0))).toEqual({ language: "PYTHON", code: "print(6*7)" });
    expect(JSON.parse(textOf(1))).toEqual({ outcome: "OUTCOME_OK", output: "42\n" });
  });

  it("grounding's searches are one web_search call after the answer's text, however many chunks repeat them", async () => {
    const grounded = (text: string, finishReason?: string) => ({
      ...chunk([{ text }], finishReason),
      candidates: [{ ...chunk([{ text }], finishReason).candidates[0], groundingMetadata: { webSearchQueries: ["paris weather"], groundingChunks: [] } }],
    });
    const body = [grounded("Sunny"), grounded(" today", "STOP")].map((c) => `data: ${JSON.stringify(c)}\n\n`).join("");
    const { events } = await translateSse(body);
    expectWellFormedBlocks(events);
    const calls = events.filter((e) => e.type === "block_start" && e.blockType === BlockType.SERVER_TOOL_CALL);
    expect(calls).toEqual([{ type: "block_start", index: 1, blockType: BlockType.SERVER_TOOL_CALL, id: expect.stringMatching(/^search_/), serverToolName: "web_search" }]);
    expect(events.find((e) => e.type === "block_delta" && e.index === 1)).toMatchObject({ text: JSON.stringify({ queries: ["paris weather"] }) });
    // The text stays one block.
    expect(events.filter((e) => e.type === "block_start" && e.blockType === BlockType.TEXT)).toHaveLength(1);
  });
});

describe("characterIndex", () => {
  it.each([
    ["abc", 2, 2],
    ["Über", 2, 1],
    ["Über", 3, 2],
    ["a😀b", 5, 3],
    ["日本", 6, 2],
    ["abc", 99, 3],
  ])("%s at byte %i is character %i", (text, byteOffset, expected) => {
    expect(characterIndex(text, byteOffset)).toBe(expected);
  });
});
