// The built-in deterministic provider: its answer is derived from the input
// (the same request always gets the same text), streamed word by word.
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import {
  BlockType,
  FinishReason,
  Role,
  ToolChoice_Mode,
  type GenerateRequest,
  type GenerateResponse,
  type Message,
} from "../../../gen/router/v1/inference_pb.js";
import type { ProtocolCapabilities } from "../capabilities.ts";
import { DEFAULT_MEDIA_TOKENS, type TokenEstimateProfile } from "../token-estimate.ts";
import { BlockWriter, dataDelta, textDelta, type UsageInit } from "../block-writer.ts";
import { UpstreamError, upstreamHttpError, type ProviderAdapter, type UpstreamCall } from "../types.ts";
import { AUDIO_TOKENS_PER_SECOND, generateClip } from "./audio-clip.ts";
import { behaviourOf, SLOW_CHUNK_DELAY_MS } from "./behaviours.ts";
import { jsonReply } from "./json-reply.ts";

/** The simulator reads nothing but its messages, tools, sampling limits and audio options. */
export const simulatorCapabilities: ProtocolCapabilities = {
  reasoning: "effort",
  cacheControl: false,
  mediaOptions: ["audio"],
  passthrough: [],
  parallelToolCalls: true,
  serverTools: [],
};

export const simulatorTokenEstimate: TokenEstimateProfile = { media: DEFAULT_MEDIA_TOKENS, openAiModelIds: false };

export function createSimulatorAdapter(): ProviderAdapter {
  return { capabilities: simulatorCapabilities, stream: simulate };
}

async function* simulate(call: UpstreamCall): AsyncGenerator<GenerateResponse> {
  const { request, route, provider, signal } = call;
  const behaviour = behaviourOf(route.provider_model_id);
  if (behaviour === "error-429") throw upstreamHttpError(429, "simulated rate limit");
  if (behaviour === "error-503") throw upstreamHttpError(503, "simulated outage");

  const delayMs = behaviour === "slow" ? Math.max(provider.chunk_delay_ms, SLOW_CHUNK_DELAY_MS) : provider.chunk_delay_ms;
  const pace = async () => {
    if (delayMs > 0) await sleep(delayMs, undefined, { signal });
    else if (signal.aborted) throw signal.reason;
  };
  const inputTokens = countInputTokens(request.messages);
  const lastText = lastUserText(request.messages);
  let outputTokens = 0;
  let reasoningTokens = 0;
  // Starts, stops and the end go through the writer; each delta is yielded as it is paced.
  const blocks = new BlockWriter();

  if (behaviour === "reasoning") {
    const thoughts = words(`Considering the request: ${lastText || "(empty)"}`);
    const index = blocks.continueBlock(BlockType.REASONING);
    yield* blocks.take();
    for (const word of thoughts) {
      await pace();
      yield textDelta(index, word);
    }
    // Like Anthropic's thinking blocks, the reasoning ends with a signature the client sends back.
    blocks.signature(index, "sim_" + createHash("sha256").update(thoughts.join("")).digest("hex").slice(0, 32));
    blocks.stopBlock(index);
    yield* blocks.take();
    reasoningTokens = thoughts.length;
    outputTokens += thoughts.length;
  }

  if (behaviour === "audio") {
    const prompt = request.media?.audioPrompt || lastText;
    const clip = generateClip(prompt, request.media?.durationSeconds);
    const caption = words(`A ${clip.seconds}-second ${clip.frequencyHz} Hz tone for: ${prompt || "(empty)"}`);
    const captionIndex = blocks.continueBlock(BlockType.TEXT);
    for (const word of caption) blocks.text(captionIndex, word);
    const index = blocks.startBlock(BlockType.AUDIO, { mimeType: "audio/wav" });
    yield* blocks.take();
    for (const piece of clip.pieces) {
      await pace();
      yield dataDelta(index, piece);
    }
    blocks.end(usage(inputTokens, caption.length + clip.seconds * AUDIO_TOKENS_PER_SECOND, 0), { reason: FinishReason.STOP, rawReason: "stop" });
    yield* blocks.take();
    return;
  }

  const tool = behaviour === "tool-call" ? chooseTool(request) : undefined;
  if (tool) {
    const args = JSON.stringify({ input: lastText });
    const half = Math.ceil(args.length / 2);
    const index = blocks.startBlock(BlockType.TOOL_CALL, { toolCallId: toolCallId(tool, args), toolName: tool });
    yield* blocks.take();
    for (const part of [args.slice(0, half), args.slice(half)]) {
      await pace();
      yield textDelta(index, part);
    }
    blocks.end(usage(inputTokens, outputTokens + words(args).length, reasoningTokens), { reason: FinishReason.TOOL_CALLS, rawReason: "tool_calls" });
    yield* blocks.take();
    return;
  }

  const reply = replyTo(request.messages, lastText);
  // Asked for JSON, the reply is JSON, in pieces of a few characters ("tokens"): compact JSON has
  // too few spaces for words, and max_tokens, usage and a cut stream count pieces.
  const json = jsonReply(request.responseFormat, reply);
  const { chunks, finish, stopSequence } = limitReply(json === undefined ? words(reply) : pieces(json), request);
  const index = blocks.continueBlock(BlockType.TEXT);
  yield* blocks.take();
  for (const [position, chunk] of chunks.entries()) {
    await pace();
    if (behaviour === "cut-mid-stream" && position === Math.floor(chunks.length / 2) && position > 0) {
      throw new UpstreamError("simulated connection cut mid-stream", { retryable: true, reason: "connection_reset" });
    }
    yield textDelta(index, chunk);
  }
  blocks.end(usage(inputTokens, outputTokens + chunks.length, reasoningTokens), {
    reason: finish === "length" ? FinishReason.LENGTH : FinishReason.STOP,
    rawReason: finish,
    stopSequence,
  });
  yield* blocks.take();
}

function usage(inputTokens: number, outputTokens: number, reasoningTokens: number): UsageInit {
  return { inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens, reasoningTokens };
}

/** JSON's "tokens": pieces of 8 characters, which concatenate back to the text. */
function pieces(text: string): string[] {
  return text.match(/[\s\S]{1,8}/g) ?? [];
}

/** One "token" per word, whitespace kept with the word so chunks concatenate back to the text. */
function words(text: string): string[] {
  return text.match(/\S+\s*/g) ?? [];
}

function textOf(message: Message): string {
  return message.content
    .map((part) => (part.part.case === "text" ? part.part.value.text : ""))
    .filter(Boolean)
    .join(" ");
}

function lastUserText(messages: Message[]): string {
  const last = messages.findLast((m) => m.role === Role.USER);
  return last ? textOf(last) : "";
}

function replyTo(messages: Message[], lastText: string): string {
  const toolResult = messages.at(-1)?.content.find((part) => part.part.case === "toolResult");
  if (toolResult?.part.case === "toolResult") {
    const resultText = toolResult.part.value.content.map((p) => (p.part.case === "text" ? p.part.value.text : "")).join(" ");
    return `The tool returned: ${resultText}`;
  }
  return lastText ? `You said: ${lastText}` : "Hello from the simulator.";
}

function countInputTokens(messages: Message[]): number {
  // A fixed overhead per message, like real chat tokenizers, plus one per word.
  return messages.reduce((sum, m) => sum + 3 + words(textOf(m)).length, 0);
}

/** Applies max_tokens and stop sequences the way an upstream would. */
function limitReply(chunks: string[], request: GenerateRequest): { chunks: string[]; finish: "stop" | "length"; stopSequence?: string } {
  const stops = request.sampling?.stop ?? [];
  let text = "";
  const kept: string[] = [];
  for (const chunk of chunks) {
    const candidate = text + chunk;
    // The stop sequence found first in the text (the earliest position) ends it.
    const found = stops
      .map((stop) => ({ stop, at: candidate.indexOf(stop) }))
      .filter(({ at }) => at >= 0)
      .sort((a, b) => a.at - b.at)[0];
    if (found) {
      const rest = candidate.slice(text.length, found.at);
      if (rest) kept.push(rest);
      return { chunks: kept, finish: "stop", stopSequence: found.stop };
    }
    text = candidate;
    kept.push(chunk);
  }
  const maxTokens = request.sampling?.maxTokens;
  if (maxTokens !== undefined && kept.length > maxTokens) return { chunks: kept.slice(0, maxTokens), finish: "length" };
  return { chunks: kept, finish: "stop" };
}

function chooseTool(request: GenerateRequest): string | undefined {
  if (request.tools.length === 0) return undefined;
  if (request.messages.at(-1)?.role === Role.TOOL) return undefined;
  const choice = request.toolChoice;
  if (choice?.mode === ToolChoice_Mode.NONE) return undefined;
  if (choice?.mode === ToolChoice_Mode.NAMED) return choice.name;
  return request.tools[0].name;
}

function toolCallId(tool: string, args: string): string {
  return "call_" + createHash("sha256").update(tool + args).digest("hex").slice(0, 24);
}
