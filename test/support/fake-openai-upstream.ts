// A real HTTP server speaking the OpenAI chat-completions protocol, for tests.
// It records every request it receives. It serves `POST /v1/chat/completions`
// only: any other method or path is a 404 "Invalid URL", as the real API
// answers. Like the real API it first refuses (openai-request-rules.ts) a
// request without `Authorization: Bearer <key>` (401), a body not declared
// `application/json` (415), and a body that is not a CreateChatCompletionRequest
// of OpenAI's OpenAPI document, unknown fields included, save the listed vendor
// extensions (400).
// A model id ending in "-local" is served as a keyless local server (vLLM,
// Ollama) would: no key needed. Then the requested model id picks what it does:
//   "fail-<status>"   answers that HTTP status with an OpenAI error body
//   "reset"           destroys the connection before answering
//   "cut-after-first" streams one content chunk, then destroys the connection
//   "hang"            sends headers and one chunk, then waits until the client goes away
//   "tool"            answers with a tool call to the first tool in the request, always
//                     (other models call it too, unless the last message is a tool result);
//                     offered two or more tools, and the last message not a tool result, it
//                     calls the first two in one answer (PARALLEL_CALLS), streamed as OpenAI
//                     does: each call its own index, id and name first, then its arguments
//                     in two pieces
//   "end-early"       streams the role chunk, then ends cleanly without content, finish or usage
//   "html"            answers 200 with an HTML page, as a misconfigured proxy would
//   "cite"            answers with an OpenAI url_citation annotation
//   "cite-urls"       answers with Perplexity-style `citations` (URLs on every chunk)
//   "thinking-tools"  behaves like DeepSeek or Kimi in thinking mode: always reasons
//                     (reasoning_content "Let me think." before its tool call or text), and
//                     answers 400 with DeepSeek's message when an assistant turn with
//                     tool_calls in the history comes without its reasoning_content
//   "*conversation*"  as anything else, but prompt_tokens counted from the messages
//                     (conversation-model.ts)
//   anything else     answers "Hello from <model>" (as JSON or SSE, as asked); with a
//                     json_schema or json_object response_format the text is {"answer":"Hello"},
//                     and with reasoning_effort the answer starts with reasoning_content
//                     "Let me think." (as DeepSeek-style vendors send it)
import type http from "node:http";
import { isConversationModel, promptTokensOf } from "./conversation-model.ts";
import { authRefusal, bodyRefusal, contentTypeRefusal, invalidUrl, requestValidator } from "./openai-request-rules.ts";
import { startRecordingServer, type FakeUpstream, type RecordedRequest } from "./recording-server.ts";

export type { FakeUpstream, RecordedRequest } from "./recording-server.ts";

export const FAKE_USAGE = {
  prompt_tokens: 12,
  completion_tokens: 4,
  total_tokens: 16,
  prompt_tokens_details: { cached_tokens: 2 },
  completion_tokens_details: { reasoning_tokens: 1 },
};

export const STRUCTURED_ANSWER = '{"answer":"Hello"}';

/** The calls of an answer offered two or more tools: to the first tool, then the second (names from the request). */
export const PARALLEL_CALLS = [
  { id: "call_fake1", arguments: '{"city":"Paris"}' },
  { id: "call_fake2", arguments: '{"city":"London"}' },
] as const;

/** The citation of the "cite" model: the word "Hello" of its answer. */
export const CITATION = { type: "url_citation", url_citation: { url: "https://example.com/source", title: "A source", start_index: 0, end_index: 5 } };

export function startFakeUpstream(): Promise<FakeUpstream> {
  requestValidator();
  return startRecordingServer("/v1", (request, res, onAbort) => {
    const refusal = refusalOf(request);
    if (refusal) {
      res.writeHead(refusal.status, { "content-type": "application/json" });
      res.end(JSON.stringify(refusal.body));
      return;
    }
    answer(request.body, res, onAbort);
  });
}

/** What the real API (or a keyless local server, for "-local" models) would refuse. */
function refusalOf({ method, path, headers, body }: RecordedRequest) {
  if (method !== "POST" || new URL(path, "http://fake").pathname !== "/v1/chat/completions") return invalidUrl(method, path);
  const keyless = typeof body.model === "string" && body.model.endsWith("-local");
  return (keyless ? undefined : authRefusal(headers)) ?? contentTypeRefusal(headers) ?? bodyRefusal(body);
}

function answer(body: Record<string, unknown>, res: http.ServerResponse, onAbort: () => void) {
  const model = String(body.model);
  const failure = /^fail-(\d{3})$/.exec(model);
  if (failure) {
    res.writeHead(Number(failure[1]), { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: `fake failure ${failure[1]}`, type: "server_error", code: null } }));
    return;
  }
  if (model === "reset") {
    res.socket?.destroy();
    return;
  }
  if (model === "html") {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<html><body>Welcome</body></html>");
    return;
  }
  if (model === "thinking-tools" && !passesReasoningBack(body)) {
    res.writeHead(400, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: REASONING_PASSBACK_ERROR, type: "invalid_request_error", param: null, code: "invalid_request_error" } }));
    return;
  }
  const stream = body.stream === true;
  const id = "chatcmpl-fake";
  const base = { id, created: 1700000000, model };
  const tools = body.tools as { function: { name: string } }[] | undefined;
  const messages = body.messages as { role: string }[] | undefined;
  // "tool" always calls; any other model calls unless the last turn is the tool's result, as a model would.
  const wantsTool = tools?.length && (model === "tool" || messages?.at(-1)?.role !== "tool");
  // Offered several tools (and not answering a result), a model calls the first two at once.
  const parallel = wantsTool && tools.length >= 2 && messages?.at(-1)?.role !== "tool";
  const toolCalls = !wantsTool
    ? []
    : parallel
      ? PARALLEL_CALLS.map((call, position) => ({ ...call, name: tools[position].function.name }))
      : [{ id: "call_fake1", name: tools[0].function.name, arguments: '{"city":"Paris"}' }];
  const callsTools = toolCalls.length > 0;
  const format = (body.response_format as { type?: string } | undefined)?.type;
  const text = format === "json_schema" || format === "json_object" ? STRUCTURED_ANSWER : `Hello from ${model}`;
  const reasoning = body.reasoning_effort || model === "thinking-tools" ? "Let me think." : undefined;
  const annotations = model === "cite" ? [CITATION] : undefined;
  const usage = isConversationModel(model) ? countedUsage(promptTokensOf(messages)) : FAKE_USAGE;
  const citations = model === "cite-urls" ? ["https://example.org/first", "https://example.org/second"] : undefined;
  if (!stream) {
    res.writeHead(200, { "content-type": "application/json" });
    const message = callsTools
      ? { role: "assistant", content: null, reasoning_content: reasoning, tool_calls: toolCalls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } })) }
      : { role: "assistant", content: text, annotations, reasoning_content: reasoning };
    res.end(JSON.stringify({ ...base, citations, object: "chat.completion", choices: [{ index: 0, message, finish_reason: callsTools ? "tool_calls" : "stop" }], usage }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (payload: unknown) => res.write(`data: ${JSON.stringify(payload)}\n\n`);
  const chunk = (delta: unknown, finish: string | null = null) =>
    send({ ...base, citations, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] });
  chunk({ role: "assistant", content: "" });
  if (model === "hang") {
    chunk({ content: "Hello" });
    res.once("close", onAbort);
    return;
  }
  if (model === "end-early") {
    res.end();
    return;
  }
  if (model === "cut-after-first") {
    chunk({ content: "Hello" });
    setImmediate(() => res.socket?.destroy());
    return;
  }
  if (callsTools) {
    if (reasoning) chunk({ reasoning_content: reasoning });
    for (const [index, call] of toolCalls.entries()) {
      chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] });
      chunk({ tool_calls: [{ index, function: { arguments: call.arguments.slice(0, 5) } }] });
      chunk({ tool_calls: [{ index, function: { arguments: call.arguments.slice(5) } }] });
    }
    chunk({}, "tool_calls");
  } else {
    if (reasoning) chunk({ reasoning_content: reasoning });
    for (const word of text.split(/(?<= )/)) chunk({ content: word });
    if (annotations) chunk({ annotations });
    chunk({}, "stop");
  }
  const options = body.stream_options as { include_usage?: boolean } | undefined;
  if (options?.include_usage) send({ ...base, object: "chat.completion.chunk", choices: [], usage });
  res.end("data: [DONE]\n\n");
}

/** FAKE_USAGE with the prompt counted from the request. */
function countedUsage(promptTokens: number) {
  return { ...FAKE_USAGE, prompt_tokens: promptTokens, total_tokens: promptTokens + FAKE_USAGE.completion_tokens };
}

/** DeepSeek's 400 for a thinking-mode history that dropped the reasoning of a tool-call turn. */
export const REASONING_PASSBACK_ERROR = "The `reasoning_content` in the thinking mode must be passed back to the API.";

function passesReasoningBack(body: Record<string, unknown>): boolean {
  const messages = (body.messages ?? []) as { role: string; tool_calls?: unknown[]; reasoning_content?: unknown }[];
  return messages.every((message) => message.role !== "assistant" || !message.tool_calls?.length || (typeof message.reasoning_content === "string" && message.reasoning_content !== ""));
}
