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
  type Message,
} from "../../../gen/router/v1/inference_pb.js";
import { UpstreamError, upstreamHttpError, type ProviderAdapter, type UpstreamCall, type UpstreamEvent } from "../types.ts";
import { AUDIO_TOKENS_PER_SECOND, generateClip } from "./audio-clip.ts";
import { behaviourOf, SLOW_CHUNK_DELAY_MS } from "./behaviours.ts";

export function createSimulatorAdapter(): ProviderAdapter {
  return { stream: simulate };
}

async function* simulate(call: UpstreamCall): AsyncGenerator<UpstreamEvent> {
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
  let index = 0;

  if (behaviour === "reasoning") {
    const thoughts = words(`Considering the request: ${lastText || "(empty)"}`);
    yield { type: "block_start", index, blockType: BlockType.REASONING };
    for (const word of thoughts) {
      await pace();
      yield { type: "block_delta", index, text: word };
    }
    // Like Anthropic's thinking blocks, the reasoning ends with a signature the client sends back.
    yield { type: "block_delta", index, text: "", signature: "sim_" + createHash("sha256").update(thoughts.join("")).digest("hex").slice(0, 32) };
    yield { type: "block_stop", index };
    reasoningTokens = thoughts.length;
    outputTokens += thoughts.length;
    index++;
  }

  if (behaviour === "audio") {
    const prompt = request.media?.audioPrompt || lastText;
    const clip = generateClip(prompt, request.media?.durationSeconds);
    const caption = words(`A ${clip.seconds}-second ${clip.frequencyHz} Hz tone for: ${prompt || "(empty)"}`);
    yield { type: "block_start", index, blockType: BlockType.TEXT };
    for (const word of caption) yield { type: "block_delta", index, text: word };
    yield { type: "block_stop", index };
    index++;
    yield { type: "block_start", index, blockType: BlockType.AUDIO, mimeType: "audio/wav" };
    for (const piece of clip.pieces) {
      await pace();
      yield { type: "block_delta", index, text: "", data: piece };
    }
    yield { type: "block_stop", index };
    yield usage(inputTokens, caption.length + clip.seconds * AUDIO_TOKENS_PER_SECOND, 0);
    yield { type: "finish", reason: FinishReason.STOP, rawReason: "stop" };
    return;
  }

  const tool = behaviour === "tool-call" ? chooseTool(request) : undefined;
  if (tool) {
    const args = JSON.stringify({ input: lastText });
    const half = Math.ceil(args.length / 2);
    yield { type: "block_start", index, blockType: BlockType.TOOL_CALL, toolCallId: toolCallId(tool, args), toolName: tool };
    for (const part of [args.slice(0, half), args.slice(half)]) {
      await pace();
      yield { type: "block_delta", index, text: part };
    }
    yield { type: "block_stop", index };
    yield usage(inputTokens, outputTokens + words(args).length, reasoningTokens);
    yield { type: "finish", reason: FinishReason.TOOL_CALLS, rawReason: "tool_calls" };
    return;
  }

  const { chunks, finish } = limitReply(words(replyTo(request.messages, lastText)), request);
  yield { type: "block_start", index, blockType: BlockType.TEXT };
  for (const [position, chunk] of chunks.entries()) {
    await pace();
    if (behaviour === "cut-mid-stream" && position === Math.floor(chunks.length / 2) && position > 0) {
      throw new UpstreamError("simulated connection cut mid-stream", { retryable: true, reason: "connection_reset" });
    }
    yield { type: "block_delta", index, text: chunk };
  }
  yield { type: "block_stop", index };
  yield usage(inputTokens, outputTokens + chunks.length, reasoningTokens);
  yield { type: "finish", reason: finish === "length" ? FinishReason.LENGTH : FinishReason.STOP, rawReason: finish };
}

function usage(inputTokens: number, outputTokens: number, reasoningTokens: number): UpstreamEvent {
  return { type: "usage", usage: { inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens, reasoningTokens } };
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
function limitReply(chunks: string[], request: GenerateRequest): { chunks: string[]; finish: "stop" | "length" } {
  const stops = request.sampling?.stop ?? [];
  let text = "";
  const kept: string[] = [];
  for (const chunk of chunks) {
    const candidate = text + chunk;
    const stopAt = stops.map((s) => candidate.indexOf(s)).filter((i) => i >= 0).sort((a, b) => a - b)[0];
    if (stopAt !== undefined) {
      const rest = candidate.slice(text.length, stopAt);
      if (rest) kept.push(rest);
      return { chunks: kept, finish: "stop" };
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
