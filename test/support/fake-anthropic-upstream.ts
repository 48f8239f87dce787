// A real HTTP server speaking Anthropic's Messages API (POST /v1/messages), for
// tests. It records every request. The model picks a failure:
//   "fail-<status>"   answers that status with Anthropic's error body
//   "cut-after-first" streams the first text delta, then destroys the connection
//   "overloaded"      opens the stream, then sends an `event: error` (overloaded_error)
//   "hang"            streams the start and one text delta, then waits until the client goes away
//   "thinking-usage"  reports output_tokens_details.thinking_tokens 3 (of output_tokens 5),
//                     as the current API does; other models leave the field out
// Before anything else it refuses, with the real API's status and error body, what
// the real API refuses (anthropic-request-rules.ts): a missing x-api-key (401) or
// anthropic-version, unknown fields, roles other than user/assistant, broken
// tool_use/tool_result pairing, and thinking with what thinking rules out (400).
// Otherwise the request's content picks the answer:
//   - `thinking` on (enabled or adaptive): a thinking block "Let me think." with a
//     signature (thinking_delta, then signature_delta) comes first;
//   - tools, and no tool_result in the last user turn: a tool_use call to the first
//     tool with input {"city":"Paris"} (input_json_delta in two pieces), stop_reason tool_use;
//     offered two or more tools, two tool_use blocks in one answer (FAKE_PARALLEL_TOOL_USES:
//     the first tool, then the second), each streamed as its own content block;
//   - output_config.format (structured output): the text {"answer":"Hello"};
//   - else "Hello from <model>" in several text deltas;
//   - stop_sequences: a text answer ends before the first one it contains, with
//     stop_reason stop_sequence and that sequence (as the API says which one).
// Usage: input_tokens 10, output_tokens 5; when any cache_control appears in the
// request, cache_creation_input_tokens 3 and cache_read_input_tokens 2 (else 0).
// A model named "*conversation*" counts input_tokens from the system prompt and
// messages, signs its thinking per request and refuses a thinking signature or
// redacted data it did not give (conversation-model.ts). Messages with
// REDACTED_THINKING_TRIGGER (the real API's test string) get a redacted_thinking
// block before the thinking.
// POST /v1/messages/count_tokens counts as fake-count-tokens.ts says.
import type http from "node:http";
import { refusalOf } from "./anthropic-request-rules.ts";
import { isConversationModel, isForeignRedacted, isForeignSignature, promptTokensOf, redactedOfTurn, signatureOfTurn } from "./conversation-model.ts";
import { answerAnthropicCount } from "./fake-count-tokens.ts";
import { startRecordingServer, type FakeUpstream } from "./recording-server.ts";

export const FAKE_THINKING = "Let me think.";
export const FAKE_SIGNATURE = "EqQBCgIYAhIM-fake-signature";
export const FAKE_TOOL_USE_ID = "toolu_01FakeCall";
/** The string Anthropic documents for testing: a request carrying it is answered with redacted thinking. */
export const REDACTED_THINKING_TRIGGER = "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB";
/** The calls of an answer offered two or more tools: to the first tool, then the second (names from the request). */
export const FAKE_PARALLEL_TOOL_USES = [
  { id: FAKE_TOOL_USE_ID, input: { city: "Paris" } },
  { id: "toolu_02FakeCall", input: { city: "London" } },
] as const;

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

export function startFakeAnthropicUpstream(): Promise<FakeUpstream> {
  return startRecordingServer("/v1", ({ method, path, headers, body }, res, onAbort) => {
    // Both endpoints are POST only.
    if (method !== "POST") return sendError(res, 404, `unknown path ${method} ${path}`);
    if (path === "/v1/messages/count_tokens") return answerAnthropicCount(headers, body, res);
    if (path !== "/v1/messages") return sendError(res, 404, `unknown path ${path}`);
    const refusal = refusalOf(headers, body) ?? foreignSignatureRefusal(body);
    if (refusal) {
      res.writeHead(refusal.status, { "content-type": "application/json" });
      res.end(JSON.stringify(refusal.body));
      return;
    }
    answer(body, res, onAbort);
  });
}

type Block = Record<string, any>;

function answer(body: Record<string, any>, res: http.ServerResponse, onAbort: () => void) {
  const model = String(body.model);
  const failure = /^fail-(\d{3})$/.exec(model);
  if (failure) return sendError(res, Number(failure[1]), `fake failure ${failure[1]}`);

  const blocks = answerBlocks(model, body);
  const stopSequence = cutAtStopSequence(blocks, body.stop_sequences);
  const cached = JSON.stringify(body).includes('"cache_control"');
  const details = model === "thinking-usage" ? { output_tokens_details: { thinking_tokens: 3 } } : {};
  const inputTokens = isConversationModel(model) ? promptTokensOf({ system: body.system, messages: body.messages }) : 10;
  const usage = { input_tokens: inputTokens, cache_creation_input_tokens: cached ? 3 : 0, cache_read_input_tokens: cached ? 2 : 0, output_tokens: 5, ...details };
  const stopReason = blocks.some((b) => b.type === "tool_use") ? "tool_use" : stopSequence ? "stop_sequence" : "end_turn";
  const message = { id: "msg_fake", type: "message", role: "assistant", model, content: blocks, stop_reason: stopReason, stop_sequence: stopSequence, usage };

  if (body.stream !== true) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(message));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
  const send = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const startDetails = model === "thinking-usage" ? { output_tokens_details: { thinking_tokens: 0 } } : {};
  send("message_start", { message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1, ...startDetails } } });
  if (model === "overloaded") {
    send("error", { error: { type: "overloaded_error", message: "Overloaded" } });
    res.end();
    return;
  }
  send("ping", {});
  if (model === "hang") {
    send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    send("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Hello" } });
    res.once("close", onAbort);
    return;
  }
  for (const [index, block] of blocks.entries()) {
    send("content_block_start", { index, content_block: emptied(block) });
    for (const delta of deltasOf(block)) {
      send("content_block_delta", { index, delta });
      if (model === "cut-after-first") {
        setImmediate(() => res.socket?.destroy());
        return;
      }
    }
    send("content_block_stop", { index });
  }
  send("message_delta", { delta: { stop_reason: stopReason, stop_sequence: stopSequence }, usage: { output_tokens: usage.output_tokens, ...details } });
  send("message_stop", {});
  res.end();
}

function answerBlocks(model: string, body: Record<string, any>): Block[] {
  const blocks: Block[] = [];
  if (body.thinking?.type === "enabled" || body.thinking?.type === "adaptive") {
    const signature = isConversationModel(model) ? signatureOfTurn("anthropic", body.messages.length) : FAKE_SIGNATURE;
    // Safety systems sometimes seal part of the thinking: a redacted_thinking block first.
    if (JSON.stringify(body.messages).includes(REDACTED_THINKING_TRIGGER)) blocks.push({ type: "redacted_thinking", data: redactedOfTurn(body.messages.length) });
    blocks.push({ type: "thinking", thinking: FAKE_THINKING, signature });
  }
  const tools = body.tools as { name: string }[] | undefined;
  const lastTurn = (body.messages as { role: string; content: unknown }[]).at(-1);
  const answeredTool = Array.isArray(lastTurn?.content) && lastTurn.content.some((block: Block) => block.type === "tool_result");
  if (tools && tools.length >= 2 && !answeredTool) {
    // Parallel tool use: several tool_use blocks in one answer.
    blocks.push(...FAKE_PARALLEL_TOOL_USES.map((call, position) => ({ type: "tool_use", id: call.id, name: tools[position].name, input: { ...call.input } })));
  } else if (tools?.length && !answeredTool) {
    blocks.push({ type: "tool_use", id: FAKE_TOOL_USE_ID, name: tools[0].name, input: { city: "Paris" } });
  } else if (body.output_config?.format) {
    blocks.push({ type: "text", text: '{"answer":"Hello"}' });
  } else {
    blocks.push({ type: "text", text: `Hello from ${model}` });
  }
  return blocks;
}

/** Cuts the text answer before the first stop sequence it contains; that sequence, or null. */
function cutAtStopSequence(blocks: Block[], stopSequences: unknown): string | null {
  const text = blocks.find((block) => block.type === "text");
  if (!text || !Array.isArray(stopSequences)) return null;
  const found = stopSequences
    .filter((sequence): sequence is string => typeof sequence === "string" && sequence !== "" && (text.text as string).includes(sequence))
    .sort((a, b) => (text.text as string).indexOf(a) - (text.text as string).indexOf(b))[0];
  if (found === undefined) return null;
  text.text = (text.text as string).slice(0, (text.text as string).indexOf(found));
  return found;
}

/** A block as content_block_start shows it: its content comes in the deltas. */
function emptied(block: Block): Block {
  switch (block.type) {
    case "redacted_thinking":
      return block;
    case "thinking":
      return { type: "thinking", thinking: "", signature: "" };
    case "tool_use":
      return { ...block, input: {} };
    default:
      return { type: "text", text: "" };
  }
}

function deltasOf(block: Block): Block[] {
  switch (block.type) {
    case "redacted_thinking":
      return [];
    case "thinking":
      return [
        { type: "thinking_delta", thinking: block.thinking },
        { type: "signature_delta", signature: block.signature },
      ];
    case "tool_use": {
      const json = JSON.stringify(block.input);
      return [
        { type: "input_json_delta", partial_json: json.slice(0, 5) },
        { type: "input_json_delta", partial_json: json.slice(5) },
      ];
    }
    default:
      return (block.text as string).split(/(?<= )/).map((text) => ({ type: "text_delta", text }));
  }
}

/** A "conversation" model checks its signatures as the real API does: one it did not give is refused. */
function foreignSignatureRefusal(body: Record<string, any>) {
  if (!isConversationModel(String(body.model))) return undefined;
  for (const [index, message] of (body.messages as { content: unknown }[]).entries()) {
    if (!Array.isArray(message.content)) continue;
    const position = message.content.findIndex((block: Block) => block.type === "thinking" && isForeignSignature("anthropic", String(block.signature)));
    if (position >= 0) {
      const error = { type: "invalid_request_error", message: `messages.${index}.content.${position}: Invalid \`signature\` in \`thinking\` block` };
      return { status: 400, body: { type: "error", error } };
    }
    const sealed = message.content.findIndex((block: Block) => block.type === "redacted_thinking" && isForeignRedacted(String(block.data)));
    if (sealed >= 0) {
      const error = { type: "invalid_request_error", message: `messages.${index}.content.${sealed}: Invalid \`data\` in \`redacted_thinking\` block` };
      return { status: 400, body: { type: "error", error } };
    }
  }
  return undefined;
}

function sendError(res: http.ServerResponse, status: number, message: string) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ type: "error", error: { type: ERROR_TYPES[status] ?? "api_error", message } }));
}
