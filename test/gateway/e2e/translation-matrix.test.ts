// The translation matrix: every public format {chat completions, Responses,
// Messages} x every upstream protocol x {JSON, stream} x each feature, through
// the official SDKs (openai for chat and Responses, @anthropic-ai/sdk for
// Messages), against fake upstreams that speak each protocol and record what
// they received. Each cell asserts both what went upstream and what the client
// got. A row writes its request once, as a chat completions body; the Responses
// driver sends the same request as Responses input items, the Messages driver
// as an Anthropic Messages body, and every driver reads the answer back into
// one view (ClientAnswer), so each row's assertions serve every format.
//
// Every answer, chunk and event is also validated against the published
// schemas: OpenAI's OpenAPI document, and the Anthropic SDK's types
// (anthropic-schema.ts). Test names are `<format> > <protocol> > <mode> > <feature>`: `npm run
// docs:matrix` turns this file's results into docs/translation-matrix.md.
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it as vitestIt } from "vitest";
import { expectAnthropicValid } from "../../support/anthropic-schema.ts";
import { expectEventIdsInStreamOrder, expectGenaiValid } from "../../support/genai-interactions-schema.ts";
import { FAKE_CALL_IDS } from "../../support/fake-gemini-interactions-upstream.ts";
import { STRUCTURED_ANSWER, type FakeUpstream } from "../../support/fake-openai-upstream.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../support/harness.ts";
import { expectValid } from "../../support/openai-schema.ts";
import {
  closeProtocolUpstreams,
  costFemtos,
  dollarsOf,
  protocolConfig,
  PROTOCOLS,
  startProtocolUpstreams,
  urlsOf,
  type Protocol,
  type Tokens,
} from "../../support/protocol-upstreams.ts";

type Json = Record<string, any>;
type Format = "chat" | "responses" | "messages" | "interactions";
const FORMATS: Format[] = ["chat", "responses", "messages", "interactions"];
/**
 * Rows a format cannot ask, with why: their cells are declared (skipped, drawn
 * as — in docs/translation-matrix.md), never left out of the table unsaid.
 */
const NOT_ASKABLE: Partial<Record<Format, Record<string, string>>> = {
  responses: { "cached prompt": "Responses has no cache_control" },
  interactions: { "cached prompt": "Interactions has no cache_control (system_instruction is a string)" },
};
const UPSTREAM_MODEL: Record<Protocol, string> = { "openai-compatible": "gpt-test", anthropic: "claude-test", gemini: "gemini-test", "gemini-interactions": "gemini-ix-test" };

// ---- what each fake upstream reports, and the cost the router must compute from it ----

function expectedTokens(protocol: Protocol, feature: { reasoning?: boolean; cacheControl?: boolean }): Tokens {
  switch (protocol) {
    case "openai-compatible":
      return { prompt: 12, cached: 2, cacheWrite: 0, completion: 4, reasoning: 1 };
    case "anthropic":
      // Anthropic counts cache reads and writes apart from input_tokens (10); the router adds them up.
      return feature.cacheControl
        ? { prompt: 15, cached: 2, cacheWrite: 3, completion: 5, reasoning: 0 }
        : { prompt: 10, cached: 0, cacheWrite: 0, completion: 5, reasoning: 0 };
    case "gemini":
    case "gemini-interactions":
      // Thought tokens are reported apart from candidates (total_output_tokens); the router counts them as completion.
      return feature.reasoning
        ? { prompt: 10, cached: 2, cacheWrite: 0, completion: 8, reasoning: 3 }
        : { prompt: 10, cached: 2, cacheWrite: 0, completion: 5, reasoning: 0 };
  }
}

function expectedCost(tokens: Tokens): number {
  return dollarsOf(costFemtos(tokens));
}

// ---- one answer, JSON or streamed, as the client saw it ----

interface ClientAnswer {
  content: string | null;
  reasoning: string;
  signature: string | undefined;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: string;
  usage: Json;
  warnings: string;
}

// ---- the drivers: one request, written as a chat completions body, sent through each format ----

interface Clients {
  openai: OpenAI;
  anthropic: Anthropic;
  google: GoogleGenAI;
}

type Driver = (clients: Clients, chatBody: Json) => Promise<ClientAnswer>;

const DRIVERS: Record<Format, { json: Driver; stream: Driver }> = {
  chat: { json: chatJson, stream: chatStreaming },
  responses: { json: responsesJson, stream: responsesStreaming },
  messages: { json: messagesJson, stream: messagesStreaming },
  interactions: { json: interactionsJson, stream: interactionsStreaming },
};

async function chatJson({ openai: client }: Clients, params: Json): Promise<ClientAnswer> {
  const { data, response } = await client.chat.completions.create(params as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
  expectValid("CreateChatCompletionResponse", data, "JSON answer");
  const message = data.choices[0].message as OpenAI.ChatCompletionMessage & { reasoning?: { text: string; signature?: string } };
  return {
    content: message.content,
    reasoning: message.reasoning?.text ?? "",
    signature: message.reasoning?.signature,
    toolCalls: chatToolCalls(message.tool_calls),
    finishReason: data.choices[0].finish_reason,
    usage: data.usage as Json,
    warnings: response.headers.get("x-router-warnings") ?? "",
  };
}

/** Streams through the SDK's helper, which assembles content and tool calls; reasoning is read from the raw chunks. */
async function chatStreaming({ openai: client }: Clients, params: Json): Promise<ClientAnswer> {
  const runner = client.chat.completions.stream({ ...(params as OpenAI.ChatCompletionCreateParamsNonStreaming), stream: true });
  let reasoning = "";
  let signature: string | undefined;
  let usage: Json = {};
  const chunks: unknown[] = [];
  runner.on("chunk", (chunk) => {
    chunks.push(chunk);
    const delta = chunk.choices[0]?.delta as Json | undefined;
    reasoning += delta?.reasoning?.text ?? "";
    signature = delta?.reasoning?.signature ?? signature;
    if (chunk.usage) usage = chunk.usage;
  });
  const completion = await runner.finalChatCompletion();
  for (const chunk of chunks) expectValid("CreateChatCompletionStreamResponse", chunk, "stream chunk");
  const message = completion.choices[0].message;
  return {
    content: message.content,
    reasoning,
    signature,
    toolCalls: chatToolCalls(message.tool_calls),
    finishReason: completion.choices[0].finish_reason,
    usage,
    warnings: "",
  };
}

function chatToolCalls(calls: OpenAI.ChatCompletionMessageToolCall[] | undefined): ClientAnswer["toolCalls"] {
  return (calls ?? []).map((call) => {
    const fn = (call as OpenAI.ChatCompletionMessageFunctionToolCall).function;
    return { id: call.id, name: fn.name, arguments: fn.arguments };
  });
}

async function responsesJson({ openai: client }: Clients, chatBody: Json): Promise<ClientAnswer> {
  const body = toResponsesBody(chatBody) as OpenAI.Responses.ResponseCreateParamsNonStreaming;
  const { data, response } = await client.responses.create(body).withResponse();
  expectValid("Response", data, "JSON answer");
  return responseView(data, response.headers.get("x-router-warnings") ?? "");
}

/** Streams through the SDK's helper; every event is checked, numbered from 0, and the last one is the response finalResponse gives. */
async function responsesStreaming({ openai: client }: Clients, chatBody: Json): Promise<ClientAnswer> {
  const body = toResponsesBody(chatBody) as OpenAI.Responses.ResponseCreateParamsNonStreaming;
  const stream = client.responses.stream({ ...body, stream: true });
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  const final = JSON.parse(JSON.stringify(await stream.finalResponse())) as OpenAI.Responses.Response;
  for (const event of events) expectValid("ResponseStreamEvent", event, "stream event");
  expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
  expect(events.at(-1)).toMatchObject({ type: "response.completed", response: { id: final.id } });
  expectValid("Response", final, "final response");
  return responseView(final, "");
}

/**
 * A Response read as the chat answer it corresponds to: the text of its
 * message items, its reasoning summary and signature (encrypted_content
 * `sig@<protocol>:<signature>`), its function calls, a finish reason (tool_calls when it
 * called, length when cut, else stop), and usage under chat's names.
 */
function responseView(response: OpenAI.Responses.Response, warnings: string): ClientAnswer {
  const items = response.output;
  const messages = items.filter((item) => item.type === "message");
  const reasoning = items.filter((item) => item.type === "reasoning");
  const calls = items.filter((item) => item.type === "function_call");
  const usage = response.usage as OpenAI.Responses.ResponseUsage & { cost: number; input_tokens_details: { cache_write_tokens: number } };
  return {
    content: messages.length === 0 ? null : messages.flatMap((item) => item.content).map((part) => (part.type === "output_text" ? part.text : "")).join(""),
    reasoning: reasoning.flatMap((item) => item.summary).map((part) => part.text).join(""),
    signature: reasoning.map((item) => item.encrypted_content?.replace(/^sig:/, "")).find(Boolean),
    toolCalls: calls.map((call) => ({ id: call.call_id, name: call.name, arguments: call.arguments })),
    finishReason: calls.length > 0 ? "tool_calls" : response.incomplete_details?.reason === "max_output_tokens" ? "length" : "stop",
    usage: {
      prompt_tokens: usage.input_tokens,
      completion_tokens: usage.output_tokens,
      total_tokens: usage.total_tokens,
      prompt_tokens_details: { cached_tokens: usage.input_tokens_details.cached_tokens, cache_write_tokens: usage.input_tokens_details.cache_write_tokens },
      completion_tokens_details: { reasoning_tokens: usage.output_tokens_details.reasoning_tokens },
      cost: usage.cost,
    },
    warnings,
  };
}

/**
 * A chat completions body as the Responses request that asks the same: a
 * leading system message as `instructions`, messages as input items (an
 * assistant's tool calls as function_call items, tool messages as
 * function_call_output), `max_tokens` as `max_output_tokens`, flat function
 * tools, `response_format` as `text.format`. Router fields pass as they are.
 * A field Responses has no counterpart for fails the row (write it for chat only).
 */
function toResponsesBody(chat: Json): Json {
  const { messages, max_tokens, tools, response_format, ...rest } = chat;
  for (const field of ["stop", "stream_options", "n", "logprobs"]) if (field in rest) throw new Error(`Responses has no ${field}: send this row's ${field} for chat only`);
  const body: Json = { ...rest };
  let input = messages as Json[];
  if (input[0]?.role === "system" && typeof input[0].content === "string") {
    body.instructions = input[0].content;
    input = input.slice(1);
  }
  body.input = input.flatMap(toInputItems);
  if (max_tokens !== undefined) body.max_output_tokens = max_tokens;
  if (tools !== undefined) body.tools = (tools as Json[]).map((tool) => ({ type: "function", ...tool.function }));
  if (response_format !== undefined) body.text = { format: response_format.type === "json_schema" ? { type: "json_schema", ...response_format.json_schema } : response_format };
  return body;
}

function toInputItems(message: Json): Json[] {
  switch (message.role) {
    case "assistant":
      return [
        ...(message.content ? [{ role: "assistant", content: message.content }] : []),
        ...((message.tool_calls ?? []) as Json[]).map((call) => ({ type: "function_call", call_id: call.id, name: call.function.name, arguments: call.function.arguments })),
      ];
    case "tool":
      return [{ type: "function_call_output", call_id: message.tool_call_id, output: message.content }];
    default:
      return [{ role: message.role, content: typeof message.content === "string" ? message.content : (message.content as Json[]).map(toInputPart) }];
  }
}

function toInputPart(part: Json): Json {
  if (part.cache_control !== undefined) throw new Error("Responses has no cache_control: send this row for chat only");
  switch (part.type) {
    case "text":
      return { type: "input_text", text: part.text };
    case "image_url":
      return { type: "input_image", image_url: part.image_url.url, ...(part.image_url.detail && { detail: part.image_url.detail }) };
    default:
      throw new Error(`no Responses input part for a chat ${part.type} part`);
  }
}

async function messagesJson({ anthropic: client }: Clients, chatBody: Json): Promise<ClientAnswer> {
  const { data, response } = await client.messages.create(toMessagesBody(chatBody)).withResponse();
  expectAnthropicValid("Message", data, "JSON answer");
  return messageView(data, data.usage as Json, response.headers.get("x-router-warnings") ?? "");
}

/**
 * Streams through messages.stream(): every event checked against the SDK's
 * types, and the message finalMessage() accumulates is read back; the router's
 * usage fields (cost) come from message_delta, which the accumulator does not keep.
 */
async function messagesStreaming({ anthropic: client }: Clients, chatBody: Json): Promise<ClientAnswer> {
  const stream = client.messages.stream(toMessagesBody(chatBody));
  const events: Anthropic.MessageStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  const final = JSON.parse(JSON.stringify(await stream.finalMessage())) as Anthropic.Message;
  for (const event of events) expectAnthropicValid("RawMessageStreamEvent", event, `${event.type} event`);
  expect(events[0].type).toBe("message_start");
  expect(events.at(-1)!.type).toBe("message_stop");
  const delta = events.at(-2) as Anthropic.RawMessageDeltaEvent;
  expect(delta.type).toBe("message_delta");
  expectAnthropicValid("Message", final, "final message");
  return messageView(final, { ...final.usage, ...delta.usage }, "");
}

/**
 * A Message read as the chat answer it corresponds to: its text blocks, its
 * thinking and signature, its tool_use blocks as tool calls (input as JSON
 * arguments), a finish reason (tool_use is tool_calls, max_tokens length), and
 * usage under chat's names (Anthropic counts cache reads and writes apart from
 * input_tokens; chat's prompt_tokens include them).
 */
function messageView(message: Anthropic.Message, usage: Json, warnings: string): ClientAnswer {
  const blocks = message.content;
  const texts = blocks.filter((block) => block.type === "text");
  const thinking = blocks.filter((block) => block.type === "thinking");
  const prompt = usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0);
  return {
    content: texts.length === 0 ? null : texts.map((block) => block.text).join(""),
    reasoning: thinking.map((block) => block.thinking).join(""),
    signature: thinking.map((block) => block.signature).find(Boolean),
    toolCalls: blocks.filter((block) => block.type === "tool_use").map((block) => ({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) })),
    finishReason: message.stop_reason === "tool_use" ? "tool_calls" : message.stop_reason === "max_tokens" ? "length" : "stop",
    usage: {
      prompt_tokens: prompt,
      completion_tokens: usage.output_tokens,
      total_tokens: prompt + usage.output_tokens,
      prompt_tokens_details: { cached_tokens: usage.cache_read_input_tokens ?? 0, cache_write_tokens: usage.cache_creation_input_tokens ?? 0 },
      completion_tokens_details: { reasoning_tokens: usage.output_tokens_details?.thinking_tokens ?? 0 },
      cost: usage.cost,
    },
    warnings,
  };
}

/**
 * A chat completions body as the Messages request that asks the same: system
 * messages as `system` (blocks keep their cache_control), image_url parts as
 * image blocks, an assistant's tool calls as tool_use blocks, a run of tool
 * messages as one user turn of tool_result blocks, `stop` as
 * `stop_sequences`, tools with `input_schema`, `reasoning.effort` as
 * `output_config.effort`, `response_format` as `output_config.format`.
 * `max_tokens` is required here: 1024 when the row sets none. Router fields
 * pass as they are.
 */
function toMessagesBody(chat: Json): Anthropic.MessageCreateParamsNonStreaming {
  const { messages, max_tokens, stop, tools, tool_choice, reasoning, response_format, ...rest } = chat;
  for (const field of ["stream_options", "n", "logprobs", "seed"]) if (field in rest) throw new Error(`Messages has no ${field}: send this row's ${field} for chat only`);
  const body: Json = { ...rest, max_tokens: max_tokens ?? 1024 };
  const system = (messages as Json[]).filter((message) => message.role === "system");
  if (system.length > 0) body.system = system.flatMap((message) => (typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content));
  body.messages = [];
  for (const message of (messages as Json[]).filter((message) => message.role !== "system")) {
    const turn = toMessageTurn(message);
    const last = body.messages.at(-1);
    // Tool results answering one assistant turn are one user turn.
    if (message.role === "tool" && last?.role === "user" && last.content.every((block: Json) => block.type === "tool_result")) last.content.push(...turn.content);
    else body.messages.push(turn);
  }
  if (stop !== undefined) body.stop_sequences = stop;
  if (tools !== undefined) body.tools = (tools as Json[]).map(({ function: fn }) => ({ name: fn.name, description: fn.description, input_schema: fn.parameters }));
  if (tool_choice !== undefined) body.tool_choice = tool_choice === "required" ? { type: "any" } : { type: tool_choice };
  if (reasoning?.effort !== undefined) body.output_config = { ...body.output_config, effort: reasoning.effort };
  if (response_format?.type === "json_schema") body.output_config = { ...body.output_config, format: { type: "json_schema", schema: response_format.json_schema.schema } };
  return body as Anthropic.MessageCreateParamsNonStreaming;
}

function toMessageTurn(message: Json): Json {
  switch (message.role) {
    case "assistant":
      return {
        role: "assistant",
        content: [
          ...(message.content ? [{ type: "text", text: message.content }] : []),
          ...((message.tool_calls ?? []) as Json[]).map((call) => ({ type: "tool_use", id: call.id, name: call.function.name, input: JSON.parse(call.function.arguments) })),
        ],
      };
    case "tool":
      return { role: "user", content: [{ type: "tool_result", tool_use_id: message.tool_call_id, content: message.content }] };
    default:
      return { role: "user", content: typeof message.content === "string" ? message.content : (message.content as Json[]).map(toMessageBlock) };
  }
}

function toMessageBlock(part: Json): Json {
  switch (part.type) {
    case "text":
      return part;
    case "image_url": {
      const data = /^data:([^;]+);base64,(.*)$/.exec(part.image_url.url);
      return { type: "image", source: data ? { type: "base64", media_type: data[1], data: data[2] } : { type: "url", url: part.image_url.url } };
    }
    default:
      throw new Error(`no Messages block for a chat ${part.type} part`);
  }
}

async function interactionsJson({ google: client }: Clients, chatBody: Json): Promise<ClientAnswer> {
  const interaction = (await client.interactions.create(toInteractionsBody(chatBody) as never)) as Json;
  expectGenaiValid("Interaction", interaction, "JSON answer");
  expectInteraction(interaction);
  return interactionView(interaction);
}

/**
 * Streams through the SDK: event ids in stream order, the last event
 * interaction.completed. The answer is read from the step events themselves
 * (steps opened by step.start, filled by step.delta), and must equal the
 * completed interaction's steps; usage comes from interaction.completed.
 */
async function interactionsStreaming({ google: client }: Clients, chatBody: Json): Promise<ClientAnswer> {
  const stream = await client.interactions.create({ ...toInteractionsBody(chatBody), stream: true } as never);
  const events: Json[] = [];
  for await (const event of stream as unknown as AsyncIterable<Json>) events.push(event);
  for (const event of events) expectGenaiValid("InteractionSSEEvent", event, `${event.event_type} event`);
  expectEventIdsInStreamOrder(events);
  expect(events[0]).toMatchObject({ event_type: "interaction.created", interaction: { status: "in_progress" } });
  const last = events.at(-1)!;
  expect(last.event_type).toBe("interaction.completed");
  expectGenaiValid("Interaction", last.interaction, "completed interaction");
  expectInteraction(last.interaction);
  const steps: Json[] = [];
  const argumentText = new Map<Json, string>();
  for (const event of events) {
    if (event.event_type === "step.start") steps[event.index] = structuredClone(event.step);
    if (event.event_type === "step.delta") applyStepDelta(steps[event.index], event.delta, argumentText);
  }
  for (const [step, text] of argumentText) step.arguments = JSON.parse(text);
  expect(steps).toEqual(last.interaction.steps);
  return interactionView({ ...last.interaction, steps });
}

/** One step.delta onto the step it fills, as a client assembles it (a call's arguments arrive as JSON text, parsed at the end). */
function applyStepDelta(step: Json, delta: Json, argumentText: Map<Json, string>): void {
  switch (delta.type) {
    case "text": {
      const lastBlock = step.content?.at(-1);
      if (lastBlock?.type === "text") lastBlock.text += delta.text;
      else step.content = [...(step.content ?? []), { type: "text", text: delta.text }];
      return;
    }
    case "thought_summary": {
      const lastBlock = step.summary?.at(-1);
      if (lastBlock?.type === "text") lastBlock.text += delta.content.text;
      else step.summary = [...(step.summary ?? []), { ...delta.content }];
      return;
    }
    case "thought_signature":
      step.signature = delta.signature;
      return;
    case "arguments_delta":
      argumentText.set(step, (argumentText.get(step) ?? "") + delta.arguments);
      return;
    default:
      throw new Error(`no step for a ${delta.type} delta`);
  }
}

/** The resource's own shape: what every interaction answer must carry. */
function expectInteraction(interaction: Json): void {
  expect(interaction).toMatchObject({ object: "interaction", status: "completed", id: expect.any(String), steps: expect.any(Array), outputs: expect.any(Array) });
  expect(new Date(interaction.created).toISOString()).toBe(interaction.created);
  expect(new Date(interaction.updated).toISOString()).toBe(interaction.updated);
  const outputs = interaction.steps.filter((step: Json) => step.type === "model_output").at(-1)?.content ?? [];
  expect(interaction.outputs).toEqual(outputs);
  expect(interaction.usage.chat_id).toBe(interaction.id);
  expect(interaction.usage.total_tokens).toBe(interaction.usage.total_input_tokens + interaction.usage.total_output_tokens + interaction.usage.total_thought_tokens);
}

/**
 * An Interaction read as the chat answer it corresponds to: the text of its
 * model_output steps, its thought summaries and signature (another protocol's
 * prefixed `<protocol>:`), its function_call steps as tool calls (arguments
 * as JSON), a finish reason (tool_calls when it called, else stop), and usage
 * under chat's names (thought tokens are output; the format has no count of
 * cache writes).
 */
function interactionView(interaction: Json): ClientAnswer {
  const steps = interaction.steps as Json[];
  const texts = steps.filter((step) => step.type === "model_output").flatMap((step) => step.content ?? []);
  const thoughts = steps.filter((step) => step.type === "thought");
  const calls = steps.filter((step) => step.type === "function_call");
  const usage = interaction.usage as Json;
  return {
    content: texts.length === 0 ? null : texts.map((block) => block.text ?? "").join(""),
    reasoning: thoughts.flatMap((step) => step.summary ?? []).map((block: Json) => block.text).join(""),
    signature: thoughts.map((step) => step.signature?.replace(/^[a-z-]+:/, "")).find(Boolean),
    toolCalls: calls.map((call) => ({ id: call.id, name: call.name, arguments: JSON.stringify(call.arguments) })),
    finishReason: calls.length > 0 ? "tool_calls" : "stop",
    usage: {
      prompt_tokens: usage.total_input_tokens,
      completion_tokens: usage.total_output_tokens + usage.total_thought_tokens,
      total_tokens: usage.total_tokens,
      prompt_tokens_details: { cached_tokens: usage.total_cached_tokens, cache_write_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: usage.total_thought_tokens },
      cost: usage.cost,
    },
    warnings: "",
  };
}

/**
 * A chat completions body as the Interactions request that asks the same: a
 * leading system message as `system_instruction`, messages as steps (user
 * content as user_input, an assistant's tool calls as function_call steps,
 * tool messages as function_result steps), `max_tokens`, `temperature`,
 * `stop`, `tool_choice` and `reasoning.effort` into `generation_config`
 * (`required` is `any`, effort is `thinking_level`), flat function tools,
 * a json_schema as `response_format` JSON with its schema. Router fields pass
 * as they are. A field Interactions has no counterpart for fails the row.
 */
function toInteractionsBody(chat: Json): Json {
  const { messages, max_tokens, temperature, stop, tools, tool_choice, reasoning, response_format, ...rest } = chat;
  for (const field of ["stream_options", "n", "logprobs"]) if (field in rest) throw new Error(`Interactions has no ${field}: send this row's ${field} for chat only`);
  const body: Json = { ...rest };
  let input = messages as Json[];
  if (input[0]?.role === "system") {
    if (typeof input[0].content !== "string") throw new Error("Interactions' system_instruction is a string: send this row for chat only");
    body.system_instruction = input[0].content;
    input = input.slice(1);
  }
  body.input = input.flatMap(toInteractionSteps);
  const config: Json = {};
  if (max_tokens !== undefined) config.max_output_tokens = max_tokens;
  if (temperature !== undefined) config.temperature = temperature;
  if (stop !== undefined) config.stop_sequences = stop;
  if (tool_choice !== undefined) config.tool_choice = tool_choice === "required" ? "any" : tool_choice;
  if (reasoning?.effort !== undefined) config.thinking_level = reasoning.effort;
  if (Object.keys(config).length > 0) body.generation_config = config;
  if (tools !== undefined) body.tools = (tools as Json[]).map((tool) => ({ type: "function", ...tool.function }));
  if (response_format?.type === "json_schema") body.response_format = { type: "text", mime_type: "application/json", schema: response_format.json_schema.schema };
  return body;
}

function toInteractionSteps(message: Json): Json[] {
  switch (message.role) {
    case "assistant":
      return [
        ...(message.content ? [{ type: "model_output", content: [{ type: "text", text: message.content }] }] : []),
        ...((message.tool_calls ?? []) as Json[]).map((call) => ({ type: "function_call", id: call.id, name: call.function.name, arguments: JSON.parse(call.function.arguments) })),
      ];
    case "tool":
      return [{ type: "function_result", call_id: message.tool_call_id, result: message.content }];
    default:
      return [{ type: "user_input", content: typeof message.content === "string" ? [{ type: "text", text: message.content }] : (message.content as Json[]).map(toInteractionContent) }];
  }
}

function toInteractionContent(part: Json): Json {
  if (part.cache_control !== undefined) throw new Error("Interactions has no cache_control: send this row for chat only");
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "image_url": {
      const data = /^data:([^;]+);base64,(.*)$/.exec(part.image_url.url);
      return data ? { type: "image", mime_type: data[1], data: data[2] } : { type: "image", uri: part.image_url.url };
    }
    default:
      throw new Error(`no Interactions content for a chat ${part.type} part`);
  }
}

describe("translation matrix", () => {
  let upstreams: Record<Protocol, FakeUpstream>;
  let gateway: Gateway;
  let clients: Clients;

  beforeAll(async () => {
    upstreams = await startProtocolUpstreams();
    gateway = await startGateway(protocolConfig(urlsOf(upstreams), "matrix", UPSTREAM_MODEL));
    clients = {
      openai: new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 }),
      // As Claude Code calls it: x-api-key, the gateway root as the base URL (the SDK adds /v1/messages).
      anthropic: new Anthropic({ apiKey: TEST_KEY, baseURL: gateway.url, maxRetries: 0 }),
      // x-goog-api-key, the gateway root as the base URL (the SDK adds /{apiVersion}/interactions).
      google: new GoogleGenAI({ apiKey: TEST_KEY, httpOptions: { baseUrl: gateway.url, apiVersion: "v1" } }),
    };
  });
  afterAll(async () => {
    await gateway?.close();
    if (upstreams) await closeProtocolUpstreams(upstreams);
  });

  /**
   * Sends one request, written as a chat completions body, through `format`,
   * and returns the answer as the client saw it, plus the one upstream request it caused.
   */
  async function ask(format: Format, protocol: Protocol, stream: boolean, body: Json): Promise<{ answer: ClientAnswer; sent: Json }> {
    const upstream = upstreams[protocol];
    const before = upstream.requests.length;
    const params = { model: `matrix/${protocol}`, ...body };
    const answer = await DRIVERS[format][stream ? "stream" : "json"](clients, params);
    expect(upstream.requests.length - before).toBe(1);
    const sent = upstream.requests.at(-1)!;
    expectRouterFieldsNotSent(sent.body);
    if (protocol === "openai-compatible") expectValid("CreateChatCompletionRequest", sent.body, "upstream request");
    return { answer, sent: sent.body };
  }

  function expectRouterFieldsNotSent(body: Json) {
    const serialised = JSON.stringify(body);
    for (const field of ["request_tags", "provider", "models", "cache", "matrix-tag"]) {
      expect(body).not.toHaveProperty(field);
      if (field === "matrix-tag") expect(serialised).not.toContain(field);
    }
  }

  function expectUsage(answer: ClientAnswer, tokens: Tokens) {
    expect(answer.usage).toMatchObject({
      prompt_tokens: tokens.prompt,
      completion_tokens: tokens.completion,
      total_tokens: tokens.prompt + tokens.completion,
      prompt_tokens_details: { cached_tokens: tokens.cached, cache_write_tokens: tokens.cacheWrite },
      completion_tokens_details: { reasoning_tokens: tokens.reasoning },
      cost: expectedCost(tokens),
    });
  }

  const weatherTool = {
    type: "function" as const,
    function: {
      name: "get_weather",
      description: "Current weather of a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  };
  const timeTool = {
    type: "function" as const,
    function: {
      name: "get_time",
      description: "Local time of a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  };
  /** What each fake calls when offered two tools: the first, then the second, each with its own city. */
  const PARALLEL_CALLS = [
    { name: "get_weather", args: { city: "Paris" }, result: '{"celsius":21}' },
    { name: "get_time", args: { city: "London" }, result: '{"time":"14:00"}' },
  ];
  /** The ids the OpenAI, Anthropic and Gemini Interactions fakes give the two calls; Gemini sends none, so the router makes them. */
  const PARALLEL_IDS: Partial<Record<Protocol, string[]>> = {
    "openai-compatible": ["call_fake1", "call_fake2"],
    anthropic: ["toolu_01FakeCall", "toolu_02FakeCall"],
    "gemini-interactions": [...FAKE_CALL_IDS],
  };
  const PNG = "iVBORw0KGgo=";
  /** The schema's name upstream: Messages' output_config.format and Interactions' response_format name none, so the router names it. */
  const SCHEMA_NAME: Record<Format, string> = { chat: "answer", responses: "answer", messages: "output", interactions: "response" };
  const answerSchema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false };

  for (const format of FORMATS) {
    describe(format, () => {
      for (const protocol of PROTOCOLS) {
        describe(protocol, () => {
          for (const mode of ["JSON", "stream"] as const) describe(mode, () => defineRows(format, protocol, mode));
        });
      }
    });
  }

  /** One column of cells: every feature, sent through `format` to `protocol`, as JSON or streamed. */
  function defineRows(format: Format, protocol: Protocol, mode: "JSON" | "stream") {
    const stream = mode === "stream";
    const send = (body: Json) => ask(format, protocol, stream, body);
    /** A row's cell, or its declared skip when the format cannot ask it (NOT_ASKABLE). */
    const it = (feature: string, cell: () => Promise<void>) => {
      const reason = NOT_ASKABLE[format]?.[feature];
      if (reason === undefined) vitestIt(feature, cell);
      else vitestIt.skip(feature, () => { throw new Error(reason); });
    };

    it("plain text", async () => {
      const { answer, sent } = await send({
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Hi" },
        ],
        max_tokens: 50,
        temperature: 0.5,
        // Responses has no stop sequences.
        ...(format !== "responses" && { stop: ["END"] }),
        request_tags: ["matrix-tag"],
        provider: { allow_fallbacks: true },
      });
      expect(answer.content).toBe(`Hello from ${UPSTREAM_MODEL[protocol]}`);
      expect(answer.finishReason).toBe("stop");
      expectUsage(answer, expectedTokens(protocol, {}));
      expectPlainSent(protocol, sent, format !== "responses" ? ["END"] : undefined, format);
    });

    it("tools with a tool-result turn", async () => {
      const question = { role: "user" as const, content: "Weather in Paris?" };
      const first = await send({ messages: [question], tools: [weatherTool], tool_choice: "auto" });
      expect(first.answer.finishReason).toBe("tool_calls");
      expect(first.answer.toolCalls).toHaveLength(1);
      const [call] = first.answer.toolCalls;
      expect(call.name).toBe("get_weather");
      expect(call.id).not.toBe("");
      expect(JSON.parse(call.arguments)).toEqual({ city: "Paris" });
      expectToolsSent(protocol, first.sent);

      const second = await send({
        messages: [
          question,
          { role: "assistant", content: null, tool_calls: [{ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }] },
          { role: "tool", tool_call_id: call.id, content: '{"celsius":21}' },
        ],
        tools: [weatherTool],
      });
      expect(second.answer.finishReason).toBe("stop");
      expect(second.answer.content).toBe(`Hello from ${UPSTREAM_MODEL[protocol]}`);
      expectToolResultSent(protocol, second.sent, call.id);
    });

    it("parallel tool calls with their results", async () => {
      const question = { role: "user" as const, content: "Weather in Paris and time in London?" };
      const tools = [weatherTool, timeTool];
      const first = await send({ messages: [question], tools, tool_choice: "auto" });
      expect(first.answer.finishReason).toBe("tool_calls");
      // No text: null in a JSON answer; a stream's role chunk carries content "", as OpenAI's does.
      expect(first.answer.content ?? "").toBe("");
      expect(first.answer.toolCalls).toHaveLength(2);
      const calls = first.answer.toolCalls;
      expect(calls.map((call) => call.name)).toEqual(PARALLEL_CALLS.map((call) => call.name));
      expect(calls.map((call) => JSON.parse(call.arguments))).toEqual(PARALLEL_CALLS.map((call) => call.args));
      for (const call of calls) expect(call.id).not.toBe("");
      expect(new Set(calls.map((call) => call.id)).size).toBe(2);
      const upstreamIds = PARALLEL_IDS[protocol];
      if (upstreamIds) expect(calls.map((call) => call.id)).toEqual(upstreamIds);
      expectToolsSent(protocol, first.sent, tools);

      const second = await send({
        messages: [
          question,
          { role: "assistant", content: null, tool_calls: calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } })) },
          ...calls.map((call, position) => ({ role: "tool", tool_call_id: call.id, content: PARALLEL_CALLS[position].result })),
        ],
        tools,
      });
      expect(second.answer.finishReason).toBe("stop");
      expect(second.answer.content).toBe(`Hello from ${UPSTREAM_MODEL[protocol]}`);
      expect(second.answer.toolCalls).toEqual([]);
      expectParallelResultsSent(protocol, second.sent, calls);
    });

    it("json_schema", async () => {
      const { answer, sent } = await send({
        messages: [{ role: "user", content: "Answer as JSON" }],
        response_format: { type: "json_schema", json_schema: { name: "answer", schema: answerSchema, strict: true } },
      });
      expect(JSON.parse(answer.content!)).toEqual(JSON.parse(STRUCTURED_ANSWER));
      expectJsonSchemaSent(protocol, sent, format);
    });

    it("reasoning", async () => {
      const { answer, sent } = await send({
        messages: [{ role: "user", content: "Think hard" }],
        max_tokens: 4096,
        reasoning: { effort: "high" },
      });
      expect(answer.reasoning).toBe("Let me think.");
      expect(answer.content).toBe(`Hello from ${UPSTREAM_MODEL[protocol]}`);
      if (protocol !== "openai-compatible") expect(answer.signature).toBeTruthy();
      expectUsage(answer, expectedTokens(protocol, { reasoning: true }));
      expectReasoningSent(protocol, sent);
    });

    it("image input", async () => {
      const { answer, sent } = await send({
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "What is this?" },
              { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
            ],
          },
        ],
      });
      expect(answer.content).toBe(`Hello from ${UPSTREAM_MODEL[protocol]}`);
      expectImageSent(protocol, sent);
    });

    it("cached prompt", async () => {
      const longContext = "The whole handbook. ".repeat(50);
      const { answer, sent } = await send({
        messages: [
          { role: "system", content: [{ type: "text", text: longContext, cache_control: { type: "ephemeral" } }] },
          { role: "user", content: "Hi" },
        ],
      } as Json);
      expect(answer.content).toBe(`Hello from ${UPSTREAM_MODEL[protocol]}`);
      expectUsage(answer, expectedTokens(protocol, { cacheControl: true }));
      if (!stream && protocol !== "anthropic") expect(answer.warnings).toMatch(/cache_control breakpoints are not sent/);
      expectCachedPromptSent(protocol, sent, longContext);
    });
  }

  // ---- what each protocol must have received ----

  /** `stop`: the stop sequences asked (chat), or undefined when none may be sent (Responses has none). */
  function expectPlainSent(protocol: Protocol, sent: Json, stop: string[] | undefined, format: Format) {
    switch (protocol) {
      case "openai-compatible":
        expect(sent).toMatchObject({
          model: "gpt-test",
          messages: [
            { role: "system", content: "Be brief." },
            { role: "user", content: "Hi" },
          ],
          max_tokens: 50,
          temperature: 0.5,
        });
        expect(sent.stop).toEqual(stop);
        return;
      case "anthropic":
        expect(sent).toMatchObject({ model: "claude-test", max_tokens: 50, temperature: 0.5 });
        expect(sent.stop_sequences).toEqual(stop);
        expect(textOf(sent.system)).toBe("Be brief.");
        expect(sent.messages).toHaveLength(1);
        expect(sent.messages[0].role).toBe("user");
        expect(textOf(sent.messages[0].content)).toBe("Hi");
        return;
      case "gemini":
        expect(sent).toMatchObject({
          systemInstruction: { parts: [{ text: "Be brief." }] },
          contents: [{ role: "user", parts: [{ text: "Hi" }] }],
          generationConfig: { maxOutputTokens: 50, temperature: 0.5 },
        });
        expect(sent.generationConfig.stopSequences).toEqual(stop);
        return;
      case "gemini-interactions":
        expect(sent).toMatchObject({
          model: "gemini-ix-test",
          system_instruction: "Be brief.",
          input: [{ type: "user_input", content: [{ type: "text", text: "Hi" }] }],
          generation_config: { max_output_tokens: 50, temperature: 0.5 },
          stream: true,
          // Kept upstream as the format keeps it: Responses and Interactions store by default.
          store: format === "responses" || format === "interactions",
        });
        expect(sent.generation_config.stop_sequences).toEqual(stop);
        return;
    }
  }

  function expectToolsSent(protocol: Protocol, sent: Json, tools: (typeof weatherTool)[] = [weatherTool]) {
    const functions = tools.map((tool) => tool.function);
    switch (protocol) {
      case "openai-compatible":
        expect(sent.tools).toEqual(tools);
        expect(sent.tool_choice).toBe("auto");
        // Parallel calls are the default: the router only says so when the caller turns them off.
        expect(sent).not.toHaveProperty("parallel_tool_calls");
        return;
      case "anthropic":
        expect(sent.tools).toEqual(functions.map(({ name, description, parameters }) => ({ name, description, input_schema: parameters })));
        expect(sent.tool_choice).toEqual({ type: "auto" });
        return;
      case "gemini":
        expect(sent.tools).toEqual([{ functionDeclarations: functions.map(({ name, description, parameters }) => ({ name, description, parametersJsonSchema: parameters })) }]);
        expect(sent.toolConfig).toEqual({ functionCallingConfig: { mode: "AUTO" } });
        return;
      case "gemini-interactions":
        expect(sent.tools).toEqual(functions.map(({ name, description, parameters }) => ({ type: "function", name, description, parameters })));
        expect(sent.generation_config.tool_choice).toBe("auto");
        return;
    }
  }

  /** The follow-up turn: the assistant's two calls, then both results, in the protocol's own pairing. */
  function expectParallelResultsSent(protocol: Protocol, sent: Json, calls: ClientAnswer["toolCalls"]) {
    switch (protocol) {
      case "openai-compatible":
        // One tool message per result, each with the id of its call.
        expect(sent.messages.slice(1)).toEqual([
          { role: "assistant", content: null, tool_calls: calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } })) },
          ...calls.map((call, position) => ({ role: "tool", tool_call_id: call.id, content: PARALLEL_CALLS[position].result })),
        ]);
        return;
      case "anthropic": {
        // Both tool_use blocks in the assistant turn, and both results in the one user turn after it.
        expect(sent.messages).toHaveLength(3);
        expect(sent.messages[1].role).toBe("assistant");
        expect(sent.messages[1].content.filter((block: Json) => block.type === "tool_use")).toEqual(
          calls.map((call, position) => ({ type: "tool_use", id: call.id, name: call.name, input: PARALLEL_CALLS[position].args })),
        );
        expect(sent.messages[2].role).toBe("user");
        const results = sent.messages[2].content as Json[];
        expect(results).toHaveLength(2);
        for (const [position, call] of calls.entries()) {
          expect(results[position]).toMatchObject({ type: "tool_result", tool_use_id: call.id });
          expect(results[position]).not.toHaveProperty("is_error");
          expect(textOf(results[position].content)).toBe(PARALLEL_CALLS[position].result);
        }
        return;
      }
      case "gemini":
        // Both functionCall parts in one model content, and both functionResponse parts, named after the calls, in one user content.
        expect(sent.contents).toHaveLength(3);
        expect(sent.contents[1].role).toBe("model");
        expect(sent.contents[1].parts.map((part: Json) => part.functionCall)).toEqual(PARALLEL_CALLS.map(({ name, args }) => ({ name, args })));
        expect(sent.contents[2]).toEqual({
          role: "user",
          parts: PARALLEL_CALLS.map(({ name, result }) => ({ functionResponse: { name, response: JSON.parse(result) } })),
        });
        return;
      case "gemini-interactions":
        // The calls by id (behind Google's stand-in signature: the client sent no thought back), then a result step per call, each naming its call.
        expect(sent.input.slice(1)).toEqual([
          { type: "thought", signature: "skip_thought_signature_validator" },
          ...calls.map((call, position) => ({ type: "function_call", id: call.id, name: call.name, arguments: PARALLEL_CALLS[position].args })),
          ...calls.map((call, position) => ({ type: "function_result", call_id: call.id, name: call.name, result: PARALLEL_CALLS[position].result })),
        ]);
        return;
    }
  }

  function expectToolResultSent(protocol: Protocol, sent: Json, callId: string) {
    switch (protocol) {
      case "openai-compatible":
        expect(sent.messages.slice(1)).toEqual([
          { role: "assistant", content: null, tool_calls: [{ id: callId, type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
          { role: "tool", tool_call_id: callId, content: '{"celsius":21}' },
        ]);
        return;
      case "anthropic": {
        expect(sent.messages).toHaveLength(3);
        expect(sent.messages[1].role).toBe("assistant");
        expect(sent.messages[1].content).toContainEqual({ type: "tool_use", id: callId, name: "get_weather", input: { city: "Paris" } });
        expect(sent.messages[2].role).toBe("user");
        const [result] = sent.messages[2].content;
        expect(result).toMatchObject({ type: "tool_result", tool_use_id: callId });
        expect(textOf(result.content)).toBe('{"celsius":21}');
        return;
      }
      case "gemini":
        expect(sent.contents).toHaveLength(3);
        expect(sent.contents[1]).toMatchObject({ role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } } }] });
        expect(sent.contents[2]).toEqual({ role: "user", parts: [{ functionResponse: { name: "get_weather", response: { celsius: 21 } } }] });
        return;
      case "gemini-interactions":
        expect(sent.input.slice(1)).toEqual([
          { type: "thought", signature: "skip_thought_signature_validator" },
          { type: "function_call", id: callId, name: "get_weather", arguments: { city: "Paris" } },
          { type: "function_result", call_id: callId, name: "get_weather", result: '{"celsius":21}' },
        ]);
        return;
    }
  }

  function expectJsonSchemaSent(protocol: Protocol, sent: Json, format: Format) {
    switch (protocol) {
      case "openai-compatible":
        expect(sent.response_format).toEqual({ type: "json_schema", json_schema: { name: SCHEMA_NAME[format], schema: answerSchema, strict: true } });
        return;
      case "anthropic":
        expect(anthropicOutputSchema(sent)).toEqual(answerSchema);
        return;
      case "gemini":
        expect(sent.generationConfig).toMatchObject({ responseMimeType: "application/json", responseJsonSchema: answerSchema });
        return;
      case "gemini-interactions":
        expect(sent.response_format).toEqual({ type: "text", mime_type: "application/json", schema: answerSchema });
        return;
    }
  }

  function expectReasoningSent(protocol: Protocol, sent: Json) {
    // high = 80% of max_tokens 4096 for the budget protocols.
    switch (protocol) {
      case "openai-compatible":
        expect(sent.reasoning_effort).toBe("high");
        return;
      case "anthropic":
        expect(sent).toMatchObject({ max_tokens: 4096, thinking: { type: "enabled", budget_tokens: 3276 } });
        return;
      case "gemini":
        expect(sent.generationConfig).toMatchObject({ maxOutputTokens: 4096, thinkingConfig: { thinkingBudget: 3276, includeThoughts: true } });
        return;
      case "gemini-interactions":
        // A thinking level, from the route's effort map.
        expect(sent.generation_config).toEqual({ max_output_tokens: 4096, thinking_level: "high", thinking_summaries: "auto" });
        return;
    }
  }

  function expectImageSent(protocol: Protocol, sent: Json) {
    switch (protocol) {
      case "openai-compatible":
        expect(sent.messages[0].content).toEqual([
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
        ]);
        return;
      case "anthropic":
        expect(sent.messages[0].content).toEqual([
          { type: "text", text: "What is this?" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
        ]);
        return;
      case "gemini":
        expect(sent.contents[0].parts).toEqual([{ text: "What is this?" }, { inlineData: { mimeType: "image/png", data: PNG } }]);
        return;
      case "gemini-interactions":
        expect(sent.input[0].content).toEqual([{ type: "text", text: "What is this?" }, { type: "image", data: PNG, mime_type: "image/png" }]);
        return;
    }
  }

  function expectCachedPromptSent(protocol: Protocol, sent: Json, longContext: string) {
    const serialised = JSON.stringify(sent);
    switch (protocol) {
      case "anthropic":
        expect(sent.system).toEqual([{ type: "text", text: longContext, cache_control: { type: "ephemeral" } }]);
        return;
      default:
        // Providers that cache by themselves get the text without the breakpoint.
        expect(serialised).toContain(longContext.trim());
        expect(serialised).not.toContain("cache_control");
        return;
    }
  }
});

/** A string, or the text of a list of text blocks. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return (content as { type: string; text?: string }[]).map((block) => block.text ?? "").join("");
}

/** Where the Anthropic adapter puts the JSON schema of structured output. */
function anthropicOutputSchema(sent: Json): unknown {
  return sent.output_config?.format?.schema ?? sent.output_format?.schema;
}
