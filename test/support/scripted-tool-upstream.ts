// A fake upstream that drives one real tool call of an agent: offered a tool
// named `call.name`, it calls it with `call.input`; given the tool's result, it
// answers with that result's text after ANSWER_PREFIX. It speaks Anthropic's
// Messages API or OpenAI's chat completions (JSON or streamed, as asked) and,
// like the other fakes, first refuses what the real API refuses
// (anthropic-request-rules.ts, openai-request-rules.ts). The other fakes call
// any tool with {"city": "Paris"}, which a real agent's own tools refuse.
import type http from "node:http";
import { refusalOf } from "./anthropic-request-rules.ts";
import { authRefusal, bodyRefusal } from "./openai-request-rules.ts";
import { startRecordingServer, type FakeUpstream } from "./recording-server.ts";

type Json = Record<string, any>;

export const ANSWER_PREFIX = "The tool said: ";
export const SCRIPTED_CALL_ID = "toolu_01Scripted";

export interface ScriptedCall {
  name: string;
  input: Json;
}

export function startScriptedToolUpstream(protocol: "anthropic" | "openai-compatible", call: ScriptedCall): Promise<FakeUpstream> {
  return startRecordingServer("/v1", ({ path, headers, body }, res) => {
    const expected = protocol === "anthropic" ? "/v1/messages" : "/v1/chat/completions";
    const refusal = path !== expected ? { status: 404, body: { error: { message: `unknown path ${path}` } } } : protocol === "anthropic" ? refusalOf(headers, body) : (authRefusal(headers) ?? bodyRefusal(body));
    if (refusal) {
      res.writeHead(refusal.status, { "content-type": "application/json" });
      res.end(JSON.stringify(refusal.body));
      return;
    }
    if (protocol === "anthropic") answerAnthropic(body, call, res);
    else answerOpenAI(body, call, res);
  });
}

/** The text of the tool result in the request's last turn, or undefined when it answers no tool. */
function anthropicResult(body: Json): string | undefined {
  const last = (body.messages as Json[]).at(-1)!;
  const result = Array.isArray(last.content) ? (last.content as Json[]).find((block) => block.type === "tool_result") : undefined;
  if (!result) return undefined;
  return typeof result.content === "string" ? result.content : (result.content as Json[]).map((block) => block.text ?? "").join("");
}

function answerAnthropic(body: Json, call: ScriptedCall, res: http.ServerResponse) {
  const result = anthropicResult(body);
  const offered = ((body.tools ?? []) as Json[]).some((tool) => tool.name === call.name);
  const block = result === undefined && offered ? { type: "tool_use", id: SCRIPTED_CALL_ID, name: call.name, input: call.input } : { type: "text", text: ANSWER_PREFIX + (result ?? "") };
  const stopReason = block.type === "tool_use" ? "tool_use" : "end_turn";
  const usage = { input_tokens: 10, output_tokens: 5 };
  const message = { id: "msg_scripted", type: "message", role: "assistant", model: body.model, content: [block], stop_reason: stopReason, stop_sequence: null, usage };
  if (body.stream !== true) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(message));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (type: string, data: Json) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  send("message_start", { message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
  if (block.type === "tool_use") {
    send("content_block_start", { index: 0, content_block: { ...block, input: {} } });
    send("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
  } else {
    send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    send("content_block_delta", { index: 0, delta: { type: "text_delta", text: block.text } });
  }
  send("content_block_stop", { index: 0 });
  send("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  send("message_stop", {});
  res.end();
}

function answerOpenAI(body: Json, call: ScriptedCall, res: http.ServerResponse) {
  const last = (body.messages as Json[]).at(-1)!;
  const result = last.role === "tool" ? (typeof last.content === "string" ? last.content : (last.content as Json[]).map((part) => part.text ?? "").join("")) : undefined;
  const offered = ((body.tools ?? []) as Json[]).some((tool) => tool.function?.name === call.name);
  const toolCall = result === undefined && offered ? { id: SCRIPTED_CALL_ID, type: "function", function: { name: call.name, arguments: JSON.stringify(call.input) } } : undefined;
  const text = toolCall ? null : ANSWER_PREFIX + (result ?? "");
  const finish = toolCall ? "tool_calls" : "stop";
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  const base = { id: "chatcmpl-scripted", created: 1700000000, model: body.model };
  if (body.stream !== true) {
    res.writeHead(200, { "content-type": "application/json" });
    const message = { role: "assistant", content: text, ...(toolCall && { tool_calls: [toolCall] }) };
    res.end(JSON.stringify({ ...base, object: "chat.completion", choices: [{ index: 0, message, finish_reason: finish }], usage }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: Json, finishReason: string | null = null) =>
    res.write(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`);
  chunk({ role: "assistant", content: "" });
  chunk(toolCall ? { tool_calls: [{ index: 0, ...toolCall }] } : { content: text });
  chunk({}, finish);
  if (body.stream_options?.include_usage) res.write(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [], usage })}\n\n`);
  res.end("data: [DONE]\n\n");
}
