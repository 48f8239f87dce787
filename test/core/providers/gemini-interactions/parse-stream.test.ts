// Interactions answers (SSE bytes as Google's Interactions stream frames them,
// and whole Interaction JSON) into block events. The fixture is hand-written
// from @google/genai 3.3.0's types (InteractionSSEEvent, StepDeltaData, Usage),
// not recorded. Every case's events are also checked against the block
// lifecycle (test/support/block-lifecycle.ts).
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createEventTranslator, parseEvent } from "../../../../core/providers/gemini-interactions/parse-stream.ts";
import { readServerSentEvents } from "../../../../core/providers/read-sse.ts";
import { UpstreamError } from "../../../../core/providers/types.ts";
import { BlockType, FinishReason, Modality } from "../../../../gen/router/v1/inference_pb.js";
import { expectWellFormedBlocks } from "../../../support/block-lifecycle.ts";
import { viewsOf, type EventView } from "../../../support/event-view.ts";
import { upstreamRecording } from "../../../support/upstream-recording.ts";

/** The stream's frames: `event:` and `data:` lines, as the Interactions API writes them, and the closing [DONE]. */
const sse = (...events: Record<string, unknown>[]) =>
  events.map((event, position) => `event: ${String(event.event_type)}\ndata: ${JSON.stringify({ ...event, event_id: String(position) })}\n\n`).join("") + "data: [DONE]\n\n";

async function translateSse(body: string, splitAt = 41): Promise<{ events: EventView[]; complete: boolean }> {
  // Cut the bytes mid-event, as a network would.
  const bytes = Buffer.from(body);
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += splitAt) pieces.push(bytes.subarray(offset, offset + splitAt));
  const translator = createEventTranslator();
  const events: EventView[] = [];
  for await (const { data } of readServerSentEvents(Readable.from(pieces))) {
    const event = parseEvent(data);
    if (event) events.push(...viewsOf(translator.translate(event)));
  }
  const complete = translator.complete();
  if (complete) events.push(...viewsOf(translator.end()));
  expectWellFormedBlocks(events, { truncated: !complete });
  return { events, complete };
}

function translateJson(answer: unknown): EventView[] {
  const translator = createEventTranslator();
  const events = viewsOf(translator.translate(parseEvent(JSON.stringify(answer))!));
  expect(translator.complete()).toBe(true);
  const all = [...events, ...viewsOf(translator.end())];
  expectWellFormedBlocks(all);
  return all;
}

const USAGE = { total_input_tokens: 7, total_output_tokens: 4, total_tokens: 11 };
const created = { event_type: "interaction.created", interaction: { id: "v1_abc", status: "in_progress" } };
const completed = (status = "completed", usage: object = USAGE) => ({ event_type: "interaction.completed", interaction: { id: "v1_abc", status, usage } });
const bytesOf = (base64: string) => Buffer.from(base64, "base64");

describe("a streamed answer", () => {
  it("a thought with its signature, then text, an image and a video in two pieces, with usage by modality", async () => {
    const { events, complete } = await translateSse(upstreamRecording("gemini-interactions/thought-text-image-video.sse"));
    expect(complete).toBe(true);
    expect(events).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.REASONING },
      { type: "block_delta", index: 0, text: "**Planning the clip**\n\n" },
      { type: "block_delta", index: 0, text: "A short sunrise shot." },
      { type: "block_delta", index: 0, text: "", signature: "Q2lRQmpaNmZleGFtcGxl" },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, blockType: BlockType.TEXT },
      { type: "block_delta", index: 1, text: "Here is a still " },
      { type: "block_delta", index: 1, text: "and the clip." },
      // The annotations delta holds none; the image stops the text and comes whole.
      { type: "block_stop", index: 1 },
      { type: "block_start", index: 2, blockType: BlockType.IMAGE, mimeType: "image/png" },
      { type: "block_delta", index: 2, text: "", data: bytesOf("iVBORw0KGgo=") },
      { type: "block_stop", index: 2 },
      // The video's two pieces are one block, its bytes decoded.
      { type: "block_start", index: 3, blockType: BlockType.VIDEO, mimeType: "video/mp4" },
      { type: "block_delta", index: 3, text: "", data: Buffer.from("\x00\x00\x00\x18ftypmp42", "latin1") },
      { type: "block_delta", index: 3, text: "", data: Buffer.from("\x00\x00\x00\x08mdat", "latin1") },
      { type: "block_stop", index: 3 },
      {
        type: "usage",
        usage: {
          inputTokens: 21,
          cachedInputTokens: 0,
          cacheWriteTokens: 0,
          // Thoughts are output beside total_output_tokens.
          outputTokens: 1686,
          reasoningTokens: 120,
          inputByModality: [{ modality: Modality.TEXT, tokens: 21 }],
          outputByModality: [
            { modality: Modality.TEXT, tokens: 8 },
            { modality: Modality.IMAGE, tokens: 1290 },
            { modality: Modality.VIDEO, tokens: 268 },
          ],
        },
      },
      { type: "finish", reason: FinishReason.STOP, rawReason: "completed" },
    ]);
  });

  it("a function call's arguments from its fragments, a second call's from its step alone; requires_action is tool_calls", async () => {
    const { events } = await translateSse(
      sse(
        created,
        { event_type: "step.start", index: 0, step: { type: "function_call", id: "fc_1", name: "get_weather", arguments: {} } },
        { event_type: "step.delta", index: 0, delta: { type: "arguments_delta", arguments: '{"city":' } },
        { event_type: "step.delta", index: 0, delta: { type: "arguments_delta", arguments: '"Paris"}' } },
        { event_type: "step.stop", index: 0 },
        { event_type: "step.start", index: 1, step: { type: "function_call", id: "fc_2", name: "get_time", arguments: { city: "London" } } },
        { event_type: "step.stop", index: 1 },
        completed("requires_action"),
      ),
    );
    expect(events.slice(0, 9)).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.TOOL_CALL, id: "fc_1", toolCallId: "fc_1", toolName: "get_weather" },
      { type: "block_delta", index: 0, text: '{"city":' },
      { type: "block_delta", index: 0, text: '"Paris"}' },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, blockType: BlockType.TOOL_CALL, id: "fc_2", toolCallId: "fc_2", toolName: "get_time" },
      { type: "block_delta", index: 1, text: '{"city":"London"}' },
      { type: "block_stop", index: 1 },
      expect.objectContaining({ type: "usage" }),
      { type: "finish", reason: FinishReason.TOOL_CALLS, rawReason: "requires_action" },
    ]);
  });

  it("a thought that is only a signature is a reasoning block, so the next turn can send it back", async () => {
    const { events } = await translateSse(
      sse(created, { event_type: "step.start", index: 0, step: { type: "thought", signature: "c2ln" } }, { event_type: "step.stop", index: 0 }, completed()),
    );
    expect(events.slice(0, 3)).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.REASONING },
      { type: "block_delta", index: 0, text: "", signature: "c2ln" },
      { type: "block_stop", index: 0 },
    ]);
  });

  it("each model output step is a text block of its own; steps of Google's tools and unknown events are skipped", async () => {
    const { events } = await translateSse(
      sse(
        created,
        { event_type: "step.start", index: 0, step: { type: "model_output", content: [{ type: "text", text: "One." }] } },
        { event_type: "step.stop", index: 0 },
        { event_type: "step.start", index: 1, step: { type: "google_search_call", id: "s1", arguments: { queries: ["x"] } } },
        { event_type: "step.delta", index: 1, delta: { type: "google_search_call", arguments: { queries: ["x"] } } },
        { event_type: "step.stop", index: 1 },
        { event_type: "step.heartbeat", index: 1 },
        { event_type: "step.start", index: 2, step: { type: "model_output" } },
        { event_type: "step.delta", index: 2, delta: { type: "text", text: "Two." } },
        { event_type: "step.delta", index: 2, delta: { type: "image", uri: "https://example.com/only-a-uri.png", mime_type: "image/png" } },
        { event_type: "step.stop", index: 2 },
        completed(),
      ),
    );
    expect(events.slice(0, 6)).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.TEXT },
      { type: "block_delta", index: 0, text: "One." },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, blockType: BlockType.TEXT },
      { type: "block_delta", index: 1, text: "Two." },
      { type: "block_stop", index: 1 },
    ]);
  });

  it.each([
    ["incomplete", FinishReason.LENGTH],
    ["budget_exceeded", FinishReason.LENGTH],
    ["failed", FinishReason.ERROR],
  ])("ends %s as %s", async (status, reason) => {
    const { events } = await translateSse(sse(created, completed(status)));
    expect(events.at(-1)).toEqual({ type: "finish", reason, rawReason: status });
  });

  it("takes the final status of a status update and the usage of a step's stop when the completed event lacks them", async () => {
    const { events, complete } = await translateSse(
      sse(
        created,
        { event_type: "step.start", index: 0, step: { type: "model_output" } },
        { event_type: "step.delta", index: 0, delta: { type: "text", text: "Hi" } },
        { event_type: "step.stop", index: 0, usage: USAGE },
        { event_type: "interaction.status_update", interaction_id: "v1_abc", status: "incomplete" },
      ),
    );
    expect(complete).toBe(true);
    expect(events.slice(-2)).toEqual([
      { type: "usage", usage: { inputTokens: 7, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 4, reasoningTokens: 0 } },
      { type: "finish", reason: FinishReason.LENGTH, rawReason: "incomplete" },
    ]);
  });

  it("is not complete before the interaction ends", async () => {
    const { complete } = await translateSse(sse(created, { event_type: "step.start", index: 0, step: { type: "model_output" } }));
    expect(complete).toBe(false);
  });

  it("a step this protocol reads, in a shape it does not know, is a bad answer rather than a guess", () => {
    const call = JSON.stringify({ event_type: "step.start", index: 0, step: { type: "function_call", id: "fc_1", arguments: "{}" } });
    expect(() => parseEvent(call)).toThrow("upstream answer has an unexpected shape");
  });

  it("an error event fails the stream with its message, retryable", () => {
    const data = JSON.stringify({ event_type: "error", error: { code: "UNAVAILABLE", message: "The model is overloaded." } });
    expect(() => parseEvent(data)).toThrow(UpstreamError);
    expect(() => parseEvent(data)).toThrow("The model is overloaded. (UNAVAILABLE)");
  });
});

describe("a whole interaction", () => {
  it("reads its steps as they are, the user's echoed input skipped", () => {
    const events = translateJson({
      id: "v1_abc",
      object: "interaction",
      status: "requires_action",
      steps: [
        { type: "user_input", content: [{ type: "text", text: "Weather?" }] },
        { type: "thought", signature: "c2ln", summary: [{ type: "text", text: "Check it." }] },
        { type: "model_output", content: [{ type: "text", text: "Checking." }] },
        { type: "function_call", id: "fc_1", name: "get_weather", arguments: { city: "Paris" } },
      ],
      usage: { ...USAGE, total_thought_tokens: 2, total_cached_tokens: 3, total_tool_use_tokens: 1 },
    });
    expect(events).toEqual([
      { type: "block_start", index: 0, blockType: BlockType.REASONING },
      { type: "block_delta", index: 0, text: "Check it." },
      { type: "block_delta", index: 0, text: "", signature: "c2ln" },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, blockType: BlockType.TEXT },
      { type: "block_delta", index: 1, text: "Checking." },
      { type: "block_stop", index: 1 },
      { type: "block_start", index: 2, blockType: BlockType.TOOL_CALL, id: "fc_1", toolCallId: "fc_1", toolName: "get_weather" },
      { type: "block_delta", index: 2, text: '{"city":"Paris"}' },
      { type: "block_stop", index: 2 },
      // Tool-use prompt tokens are input; cached ones are part of the input already.
      { type: "usage", usage: { inputTokens: 8, cachedInputTokens: 3, cacheWriteTokens: 0, outputTokens: 6, reasoningTokens: 2 } },
      { type: "finish", reason: FinishReason.TOOL_CALLS, rawReason: "requires_action" },
    ]);
  });

  it("Google's error body in place of an answer is a retryable failure", () => {
    expect(() => parseEvent(JSON.stringify({ error: { code: 500, message: "Internal error", status: "INTERNAL" } }))).toThrow("Internal error (INTERNAL)");
  });
});
