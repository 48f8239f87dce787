import { describe, expect, it } from "vitest";
import { ConnectError, errorDetailOf } from "../../../../core/errors.ts";
import {
  PublicFormat,
  ResponseFormat_Type,
  Role,
  ToolChoice_Mode,
} from "../../../../gen/router/v1/inference_pb.js";
import { decodeChatRequest } from "../../../../gateway/formats/chat-completions/decode-request.ts";

const context = { apiKey: "sk-test", requestId: "rtr_1" };
const base = { model: "openai/gpt-4o", messages: [{ role: "user", content: "hi" }] };
const user = (content: unknown) => ({ messages: [{ role: "user", content }] });
const tool = { type: "function", function: { name: "get_weather", parameters: { type: "object" } } };
const hello = { role: "user", content: "hi" };
const callsOf = (count: number) => Array.from({ length: count }, (_, i) => ({ id: `c${i}`, type: "function", function: { name: "f", arguments: "{}" } }));
const toolsOf = (count: number) => Array.from({ length: count }, (_, i) => ({ type: "function", function: { name: `f${i}` } }));
/** An object `levels` levels deep (itself included): {a: {a: ... {}}}. */
const nested = (levels: number) => {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < levels; level++) value = { a: value };
  return value;
};
const nestedArrays = (levels: number) => {
  let value: unknown[] = [];
  for (let level = 1; level < levels; level++) value = [value];
  return value;
};

/** A user turn, then an assistant answer with these fields. */
const assistantWith = (fields: Record<string, unknown>) => ({ messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "ok", ...fields }] });

/** The param of the 400 the body gives, or "ok" when it decodes. */
function outcome(body: unknown): string {
  try {
    decodeChatRequest(body, context);
    return "ok";
  } catch (error) {
    if (!(error instanceof ConnectError)) throw error;
    return errorDetailOf(error)?.param ?? "no detail";
  }
}

// One row per rule, at its edges: [what, fields merged into a valid body, expected param or "ok"].
const rows: Array<[string, Record<string, unknown>, string]> = [
  ["minimal body", {}, "ok"],
  ["model missing", { model: undefined }, "model"],
  ["model empty", { model: "" }, "model"],
  ["model not a string", { model: 4 }, "model"],
  ["models of strings", { models: ["a/b", "c/d:free"] }, "ok"],
  ["models with a number", { models: ["a/b", 1] }, "models[1]"],
  ["request_tags of strings", { request_tags: ["x"] }, "ok"],
  ["parallel_tool_calls false", { parallel_tool_calls: false }, "ok"],
  ["parallel_tool_calls not a boolean", { parallel_tool_calls: "no" }, "parallel_tool_calls"],
  ["request_tags not an array", { request_tags: "x" }, "request_tags"],

  ["messages missing", { messages: undefined }, "messages"],
  ["messages empty", { messages: [] }, "messages"],
  ["message not an object", { messages: ["hi"] }, "messages[0]"],
  ["role developer", { messages: [{ role: "developer", content: "be brief" }] }, "ok"],
  ["bad role", { messages: [{ role: "robot", content: "x" }] }, "messages[0].role"],
  ["content missing", { messages: [{ role: "user" }] }, "messages[0].content"],
  ["content a number", user(5), "messages[0].content"],
  ["empty string content", user(""), "ok"],
  ["text block", user([{ type: "text", text: "x" }]), "ok"],
  ["text block without text", user([{ type: "text" }]), "messages[0].content[0].text"],
  ["text block text a number", user([{ type: "text", text: 3 }]), "messages[0].content[0].text"],
  ["unknown block type", user([{ type: "video" }]), "messages[0].content[0].type"],
  ["block without type", user([{ text: "x" }]), "messages[0].content[0].type"],
  ["image block", user([{ type: "image_url", image_url: { url: "https://x/y.png", detail: "low" } }]), "ok"],
  ["image block bad detail", user([{ type: "image_url", image_url: { url: "https://x", detail: "max" } }]), "messages[0].content[0].image_url.detail"],
  ["image block without url", user([{ type: "image_url", image_url: {} }]), "messages[0].content[0].image_url.url"],
  ["audio block", user([{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }]), "ok"],
  ["audio block without format", user([{ type: "input_audio", input_audio: { data: "AAAA" } }]), "messages[0].content[0].input_audio.format"],
  ["file block by id", user([{ type: "file", file: { file_id: "f1" } }]), "ok"],
  ["file block with neither data nor id", user([{ type: "file", file: { filename: "a.pdf" } }]), "messages[0].content[0].file"],
  ["block unknown field", user([{ type: "text", text: "x", extra: 1 }]), "messages[0].content[0].extra"],
  ["cache_control ephemeral", user([{ type: "text", text: "x", cache_control: { type: "ephemeral", ttl: "1h" } }]), "ok"],
  ["cache_control persistent", user([{ type: "text", text: "x", cache_control: { type: "persistent" } }]), "messages[0].content[0].cache_control.type"],
  ["cache_control bad ttl", user([{ type: "text", text: "x", cache_control: { type: "ephemeral", ttl: "1d" } }]), "messages[0].content[0].cache_control.ttl"],
  ["name a string", { messages: [{ role: "user", content: "x", name: "ann" }] }, "ok"],
  ["name a number", { messages: [{ role: "user", content: "x", name: 1 }] }, "messages[0].name"],
  ["message unknown field", { messages: [{ role: "user", content: "x", mood: "ok" }] }, "messages[0].mood"],

  ["assistant null content with tool_calls", { messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] }] }, "ok"],
  ["assistant null content without tool_calls", { messages: [{ role: "assistant", content: null }] }, "messages[0].content"],
  ["user null content", { messages: [{ role: "user", content: null }] }, "messages[0].content"],
  ["tool call arguments not a string", { messages: [{ role: "assistant", tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: {} } }] }] }, "messages[0].tool_calls[0].function.arguments"],
  ["tool_calls on a user message", { messages: [{ role: "user", content: "x", tool_calls: [] }] }, "messages[0].tool_calls"],
  ["assistant echo with refusal, annotations, reasoning", { messages: [{ role: "assistant", content: "x", refusal: null, annotations: [], reasoning: { text: "r" } }] }, "ok"],
  ["assistant with reasoning_details of each type", assistantWith({ reasoning_details: [
    { type: "reasoning.text", text: "t", signature: "s", index: 0 },
    { type: "reasoning.encrypted", data: "opaque", index: 1 },
    { type: "reasoning.summary", summary: "in short", index: 2 },
  ] }), "ok"],
  ["reasoning_details as OpenRouter sends them, with nulls", assistantWith({ reasoning_details: [{ type: "reasoning.text", text: "t", signature: null, id: null, format: "anthropic-claude-v1", index: 0 }] }), "ok"],
  ["reasoning_details unknown type", assistantWith({ reasoning_details: [{ type: "reasoning.tool_call", index: 0 }] }), "messages[1].reasoning_details[0].type"],
  ["reasoning_details without type", assistantWith({ reasoning_details: [{ text: "t" }] }), "messages[1].reasoning_details[0].type"],
  ["reasoning_details encrypted without data", assistantWith({ reasoning_details: [{ type: "reasoning.encrypted", index: 0 }] }), "messages[1].reasoning_details[0].data"],
  ["reasoning_details unknown field", assistantWith({ reasoning_details: [{ type: "reasoning.text", text: "t", mood: 1 }] }), "messages[1].reasoning_details[0].mood"],
  ["reasoning_details negative index", assistantWith({ reasoning_details: [{ type: "reasoning.text", text: "t", index: -1 }] }), "messages[1].reasoning_details[0].index"],
  ["reasoning_details not an array", assistantWith({ reasoning_details: { type: "reasoning.text", text: "t" } }), "messages[1].reasoning_details"],
  ["reasoning_details on a user message", { messages: [{ role: "user", content: "x", reasoning_details: [] }] }, "messages[0].reasoning_details"],
  ["tool message", { messages: [{ role: "tool", tool_call_id: "c1", content: "sunny" }] }, "ok"],
  ["tool message without tool_call_id", { messages: [{ role: "tool", content: "sunny" }] }, "messages[0].tool_call_id"],
  ["tool_call_id on a user message", { messages: [{ role: "user", content: "x", tool_call_id: "c1" }] }, "messages[0].tool_call_id"],

  ["temperature -0.01", { temperature: -0.01 }, "temperature"],
  ["temperature 0", { temperature: 0 }, "ok"],
  ["temperature 2", { temperature: 2 }, "ok"],
  ["temperature 2.01", { temperature: 2.01 }, "temperature"],
  ["temperature a string", { temperature: "1" }, "temperature"],
  ["max_tokens 0", { max_tokens: 0 }, "max_tokens"],
  ["max_tokens 1", { max_tokens: 1 }, "ok"],
  ["max_tokens 1.5", { max_tokens: 1.5 }, "max_tokens"],
  ["max_completion_tokens 0", { max_completion_tokens: 0 }, "max_completion_tokens"],
  ["max_tokens and max_completion_tokens equal", { max_tokens: 10, max_completion_tokens: 10 }, "ok"],
  ["max_tokens and max_completion_tokens differ", { max_tokens: 10, max_completion_tokens: 11 }, "max_completion_tokens"],
  ["top_p -0.01", { top_p: -0.01 }, "top_p"],
  ["top_p 0", { top_p: 0 }, "ok"],
  ["top_p 1", { top_p: 1 }, "ok"],
  ["top_p 1.01", { top_p: 1.01 }, "top_p"],
  ["frequency_penalty -2.01", { frequency_penalty: -2.01 }, "frequency_penalty"],
  ["frequency_penalty -2", { frequency_penalty: -2 }, "ok"],
  ["frequency_penalty 2", { frequency_penalty: 2 }, "ok"],
  ["frequency_penalty 2.01", { frequency_penalty: 2.01 }, "frequency_penalty"],
  ["presence_penalty -2.01", { presence_penalty: -2.01 }, "presence_penalty"],
  ["presence_penalty 2", { presence_penalty: 2 }, "ok"],
  ["presence_penalty 2.01", { presence_penalty: 2.01 }, "presence_penalty"],
  ["top_k -1", { top_k: -1 }, "top_k"],
  ["top_k 0", { top_k: 0 }, "ok"],
  ["top_k 1.5", { top_k: 1.5 }, "top_k"],
  ["repetition_penalty 0", { repetition_penalty: 0 }, "repetition_penalty"],
  ["repetition_penalty 0.01", { repetition_penalty: 0.01 }, "ok"],
  ["repetition_penalty 2", { repetition_penalty: 2 }, "ok"],
  ["repetition_penalty 2.01", { repetition_penalty: 2.01 }, "repetition_penalty"],
  ["seed negative integer", { seed: -7 }, "ok"],
  ["seed 1.5", { seed: 1.5 }, "seed"],
  ["n 1", { n: 1 }, "ok"],
  ["n 2", { n: 2 }, "n"],
  ["user a string", { user: "u-1" }, "ok"],
  ["user a number", { user: 1 }, "user"],

  ["stream true", { stream: true }, "ok"],
  ["stream a string", { stream: "yes" }, "stream"],
  ["stream_options with stream", { stream: true, stream_options: { include_usage: true } }, "ok"],
  ["stream_options without stream", { stream_options: { include_usage: true } }, "stream_options"],
  ["stream_options include_usage a string", { stream: true, stream_options: { include_usage: "yes" } }, "stream_options.include_usage"],
  ["stop string", { stop: "END" }, "ok"],
  ["stop array", { stop: ["a", "b"] }, "ok"],
  ["stop array with a number", { stop: ["a", 1] }, "stop[1]"],
  ["stop a number", { stop: 1 }, "stop"],

  ["provider only", { provider: { only: ["openai"] } }, "ok"],
  ["provider order with allow_fallbacks", { provider: { order: ["a", "b"], allow_fallbacks: false } }, "ok"],
  ["provider only and order", { provider: { only: ["a"], order: ["b"] } }, "provider"],
  ["provider empty only", { provider: { only: [] } }, "provider.only"],
  ["provider empty order", { provider: { order: [] } }, "provider.order"],
  ["provider allow_fallbacks a string", { provider: { allow_fallbacks: "no" } }, "provider.allow_fallbacks"],
  ["provider sort", { provider: { sort: "price" } }, "ok"],
  ["provider unknown field", { provider: { fastest: true } }, "provider.fastest"],

  ["tools", { tools: [tool] }, "ok"],
  ["tool name with a space", { tools: [{ type: "function", function: { name: "get weather" } }] }, "tools[0].function.name"],
  ["tool name of 64 characters", { tools: [{ type: "function", function: { name: "a".repeat(64) } }] }, "ok"],
  ["tool name of 65 characters", { tools: [{ type: "function", function: { name: "a".repeat(65) } }] }, "tools[0].function.name"],
  ["tool parameters not an object", { tools: [{ type: "function", function: { name: "f", parameters: [] } }] }, "tools[0].function.parameters"],
  ["tool type other than function", { tools: [{ type: "web_search", function: { name: "f" } }] }, "tools[0].type"],
  ["tool_choice auto", { tool_choice: "auto" }, "ok"],
  ["tool_choice none", { tool_choice: "none" }, "ok"],
  ["tool_choice required with tools", { tools: [tool], tool_choice: "required" }, "ok"],
  ["tool_choice required without tools", { tool_choice: "required" }, "tool_choice"],
  ["tool_choice any", { tool_choice: "any" }, "tool_choice"],
  ["tool_choice function form", { tools: [tool], tool_choice: { type: "function", function: { name: "get_weather" } } }, "ok"],
  ["tool_choice tool form", { tools: [tool], tool_choice: { type: "tool", name: "get_weather" } }, "ok"],
  ["tool_choice function form without name", { tools: [tool], tool_choice: { type: "function", function: {} } }, "tool_choice.function.name"],
  ["tool_choice bad type", { tool_choice: { type: "auto" } }, "tool_choice.type"],
  ["tool_choice names a missing tool", { tools: [tool], tool_choice: { type: "tool", name: "other" } }, "tool_choice"],

  ["response_format text", { response_format: { type: "text" } }, "ok"],
  ["response_format json_object", { response_format: { type: "json_object" } }, "ok"],
  ["response_format json_schema", { response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" }, strict: true } } }, "ok"],
  ["response_format without type", { response_format: {} }, "response_format.type"],
  ["response_format bad type", { response_format: { type: "xml" } }, "response_format.type"],
  ["json_schema missing", { response_format: { type: "json_schema" } }, "response_format.json_schema"],
  ["json_schema missing name", { response_format: { type: "json_schema", json_schema: { schema: {} } } }, "response_format.json_schema.name"],
  ["json_schema missing schema", { response_format: { type: "json_schema", json_schema: { name: "x" } } }, "response_format.json_schema.schema"],

  ["reasoning effort high", { reasoning: { effort: "high" } }, "ok"],
  ["reasoning effort minimal", { reasoning: { effort: "minimal" } }, "ok"],
  ["reasoning effort none", { reasoning: { effort: "none" } }, "ok"],
  ["reasoning effort extreme", { reasoning: { effort: "extreme" } }, "reasoning.effort"],
  ["reasoning max_tokens 1023", { reasoning: { max_tokens: 1023 } }, "reasoning.max_tokens"],
  ["reasoning max_tokens 1024", { reasoning: { max_tokens: 1024 } }, "ok"],
  ["reasoning max_tokens 32000", { reasoning: { max_tokens: 32000 } }, "ok"],
  ["reasoning max_tokens 32001", { reasoning: { max_tokens: 32001 } }, "reasoning.max_tokens"],
  ["reasoning effort and max_tokens", { reasoning: { effort: "low", max_tokens: 2000 } }, "reasoning"],
  ["reasoning max_tokens equal to max_tokens", { max_tokens: 2000, reasoning: { max_tokens: 2000 } }, "reasoning.max_tokens"],
  ["reasoning max_tokens below max_tokens", { max_tokens: 2001, reasoning: { max_tokens: 2000 } }, "ok"],
  ["reasoning max_tokens above max_completion_tokens", { max_completion_tokens: 1500, reasoning: { max_tokens: 2000 } }, "reasoning.max_tokens"],
  ["reasoning exclude and enabled", { reasoning: { exclude: true, enabled: false } }, "ok"],
  ["reasoning enabled a string", { reasoning: { enabled: "yes" } }, "reasoning.enabled"],

  ["cache full", { cache: { expiration_time: 60, conversation_mode: "last_n_turns", last_n_turns: 2, filter_on_provider: true, filter_on_model: false, similarity_threshold: 1 } }, "ok"],
  ["cache expiration_time 0", { cache: { expiration_time: 0 } }, "cache.expiration_time"],
  ["cache bad mode", { cache: { conversation_mode: "everything" } }, "cache.conversation_mode"],
  ["cache last_n_turns mode without count", { cache: { conversation_mode: "last_n_turns" } }, "cache.last_n_turns"],
  ["cache last_n_turns 0", { cache: { conversation_mode: "last_n_turns", last_n_turns: 0 } }, "cache.last_n_turns"],
  ["cache last_n_turns with another mode", { cache: { last_n_turns: 3 } }, "cache.last_n_turns"],
  ["cache similarity_threshold 1.01", { cache: { similarity_threshold: 1.01 } }, "cache.similarity_threshold"],
  ["cache similarity_threshold 0", { cache: { similarity_threshold: 0 } }, "ok"],
  ["top-level cache_control ephemeral", { cache_control: { type: "ephemeral" } }, "ok"],
  ["top-level cache_control other type", { cache_control: { type: "always" } }, "cache_control.type"],

  ["aspectRatio 21:9", { aspectRatio: "21:9" }, "ok"],
  ["aspectRatio 2:1", { aspectRatio: "2:1" }, "aspectRatio"],
  ["prompt a string", { prompt: "rain on a tin roof" }, "ok"],
  ["prompt a number", { prompt: 1 }, "prompt"],
  ["duration 0", { duration: 0 }, "duration"],
  ["duration 1", { duration: 1 }, "ok"],

  ["unknown top-level field", { logprobs: true }, "logprobs"],

  // null is "not set" for every optional field, at every depth.
  ...(["temperature", "stop", "stream", "n", "max_tokens", "tools", "user", "seed", "provider", "reasoning", "response_format", "tool_choice"] as const).map(
    (field): [string, Record<string, unknown>, string] => [`${field} null`, { [field]: null }, "ok"],
  ),
  ["reasoning.effort null", { reasoning: { effort: null } }, "ok"],
  ["provider.order null", { provider: { order: null, allow_fallbacks: null } }, "ok"],
  ["message name null", { messages: [{ role: "user", content: "x", name: null }] }, "ok"],
  ["image detail and cache_control null", user([{ type: "image_url", image_url: { url: "https://x", detail: null }, cache_control: null }]), "ok"],
  ["tool description and strict null", { tools: [{ type: "function", function: { name: "f", description: null, strict: null } }] }, "ok"],
  ["stream_options.include_usage null", { stream: true, stream_options: { include_usage: null } }, "ok"],
  ["cache fields null", { cache: { expiration_time: null, conversation_mode: null } }, "ok"],
  ["tool_choice function form, extra null", { tools: [tool], tool_choice: { type: "function", function: { name: "get_weather" } }, parallel_tool_calls: null }, "ok"],
  ["model null is missing", { model: null }, "model"],
  ["messages null is missing", { messages: null }, "messages"],
  ["role null is missing", { messages: [{ role: null, content: "x" }] }, "messages[0].role"],
  ["image url null is missing", user([{ type: "image_url", image_url: { url: null } }]), "messages[0].content[0].image_url.url"],
  ["block type null is missing", user([{ type: null, text: "x" }]), "messages[0].content[0].type"],
  ["a null inside stop is still not a string", { stop: ["a", null] }, "stop[1]"],

  // Every array is bounded: the limit passes, one more fails.
  ["10,000 messages", { messages: Array(10_000).fill(hello) }, "ok"],
  ["10,001 messages", { messages: Array(10_001).fill(hello) }, "messages"],
  ["1,000 content blocks", user(Array(1_000).fill({ type: "text", text: "x" })), "ok"],
  ["1,001 content blocks", user(Array(1_001).fill({ type: "text", text: "x" })), "messages[0].content"],
  ["1,000 tool calls", { messages: [{ role: "assistant", tool_calls: callsOf(1_000) }] }, "ok"],
  ["1,001 tool calls", { messages: [{ role: "assistant", tool_calls: callsOf(1_001) }] }, "messages[0].tool_calls"],
  ["100,000 reasoning_details", assistantWith({ reasoning_details: Array(100_000).fill({ type: "reasoning.text", text: "t" }) }), "ok"],
  ["100,001 reasoning_details", assistantWith({ reasoning_details: Array(100_001).fill({ type: "reasoning.text", text: "t" }) }), "messages[1].reasoning_details"],
  ["100,000 redacted reasoning blocks", assistantWith({ reasoning: { text: "", redacted: Array(100_000).fill("x") } }), "ok"],
  ["100,001 redacted reasoning blocks", assistantWith({ reasoning: { text: "", redacted: Array(100_001).fill("x") } }), "messages[1].reasoning.redacted"],
  ["10,000 annotations", assistantWith({ annotations: Array(10_000).fill({}) }), "ok"],
  ["10,001 annotations", assistantWith({ annotations: Array(10_001).fill({}) }), "messages[1].annotations"],
  ["10,001 images", assistantWith({ images: Array(10_001).fill({}) }), "messages[1].images"],
  ["512 tools", { tools: toolsOf(512) }, "ok"],
  ["513 tools", { tools: toolsOf(513) }, "tools"],
  ["16 stop strings", { stop: Array(16).fill("x") }, "ok"],
  ["17 stop strings", { stop: Array(17).fill("x") }, "stop"],
  ["32 models", { models: Array(32).fill("a/b") }, "ok"],
  ["33 models", { models: Array(33).fill("a/b") }, "models"],
  ["64 request_tags", { request_tags: Array(64).fill("t") }, "ok"],
  ["65 request_tags", { request_tags: Array(65).fill("t") }, "request_tags"],
  ["64 providers in only", { provider: { only: Array(64).fill("p") } }, "ok"],
  ["65 providers in only", { provider: { only: Array(65).fill("p") } }, "provider.only"],
  ["65 providers in order", { provider: { order: Array(65).fill("p") } }, "provider.order"],

  // Nesting: the body object is level 1, tool parameters start at level 5.
  ["a body 128 levels deep", { tools: [{ type: "function", function: { name: "f", parameters: nested(124) } }] }, "ok"],
  ["a body 129 levels deep", { tools: [{ type: "function", function: { name: "f", parameters: nested(125) } }] }, "tools"],
  ["a schema 2,000 levels deep", { response_format: { type: "json_schema", json_schema: { name: "x", schema: nested(2_000) } } }, "response_format"],
  ["arrays count as levels too", { metadata: nestedArrays(200) }, "metadata"],
];

describe("decodeChatRequest validation", () => {
  it.each(rows)("%s", (_what, fields, expected) => {
    expect(outcome({ ...base, ...fields })).toBe(expected);
  });

  it.each([null, "text", 3, [base]])("rejects a body that is not a JSON object: %j", (body) => {
    expect(outcome(body)).toBe("body");
  });

  it("names the parameter and the rule in plain words", () => {
    const error = catchError(() => decodeChatRequest({ ...base, temperature: 3 }, context));
    expect(error.rawMessage).toBe("temperature must be between 0 and 2");
    expect(errorDetailOf(error)?.reason).toBe("invalid_parameter");
  });

  it("explains that only one choice is supported", () => {
    const error = catchError(() => decodeChatRequest({ ...base, n: 3 }, context));
    expect(error.rawMessage).toMatch(/only one choice/);
  });

  it("names the reasoning_details types it knows when the type is unknown", () => {
    const error = catchError(() => decodeChatRequest({ ...base, ...assistantWith({ reasoning_details: [{ type: "reasoning.tool_call" }] }) }, context));
    expect(error.rawMessage).toBe("messages[1].reasoning_details[0].type must be one of reasoning.text, reasoning.encrypted, reasoning.summary");
  });

  it("gives an integer beyond int32 the same bound as any other too-large value", () => {
    expect(catchError(() => decodeChatRequest({ ...base, max_tokens: 9007199254740992 }, context)).rawMessage).toBe("max_tokens must be at most 2147483647");
    expect(catchError(() => decodeChatRequest({ ...base, seed: 9007199254740992 }, context)).rawMessage).toBe("seed must be at most 9007199254740991");
    expect(catchError(() => decodeChatRequest({ ...base, top_k: Infinity }, context)).rawMessage).toBe("top_k must be a finite number");
  });

  it("names a required field sent as null as missing", () => {
    expect(catchError(() => decodeChatRequest({ ...base, model: null }, context)).rawMessage).toBe("model is required");
  });

  it("says how deep a body may nest, naming the top-level field", () => {
    const error = catchError(() => decodeChatRequest({ ...base, tools: [{ type: "function", function: { name: "f", parameters: nested(2_000) } }] }, context));
    expect(error.rawMessage).toBe("tools is nested too deeply: a request body may nest objects and arrays at most 128 levels deep");
  });

  it("says how many items an array may have", () => {
    expect(catchError(() => decodeChatRequest({ ...base, stop: Array(17).fill("x") }, context)).rawMessage).toBe("stop must have at most 16 items");
  });

  it("refuses an own __proto__ key at any depth, naming where it is", () => {
    const body = JSON.parse('{"model":"a/b","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"__proto__":{"polluted":true}}}}]}');
    const error = catchError(() => decodeChatRequest(body, context));
    expect(errorDetailOf(error)?.param).toBe("tools[0].function.parameters.__proto__");
    expect(error.rawMessage).toBe("tools[0].function.parameters.__proto__ is not accepted as a key");
  });

  it("calls an empty body empty, not a missing model", () => {
    expect(catchError(() => decodeChatRequest(undefined, context)).rawMessage).toBe("The request body is empty: send a JSON object");
  });

  it("calls an unknown field unsupported", () => {
    const error = catchError(() => decodeChatRequest({ ...base, logit_bias: {} }, context));
    expect(error.rawMessage).toBe("logit_bias is not a supported parameter");
  });
});

describe("decodeChatRequest mapping", () => {
  it("fills the envelope and turns a string content into one text part", () => {
    const { request, stream } = decodeChatRequest(base, context);
    expect(request.format).toBe(PublicFormat.CHAT_COMPLETIONS);
    expect(request.caller?.apiKey).toBe("sk-test");
    expect(request.requestId).toBe("rtr_1");
    expect(request.model).toBe("openai/gpt-4o");
    expect(request.messages[0].role).toBe(Role.USER);
    expect(request.messages[0].content.map((part) => part.part)).toEqual([{ case: "text", value: expect.objectContaining({ text: "hi" }) }]);
    expect([stream, request.stream]).toEqual([false, false]);
    expect(request.cache).toBeUndefined();
    expect(request.media).toBeUndefined();
  });

  it("round-trips a tool call and its result", () => {
    const { request } = decodeChatRequest(
      {
        ...base,
        tools: [tool],
        tool_choice: { type: "function", function: { name: "get_weather" } },
        messages: [
          { role: "user", content: "weather?" },
          { role: "assistant", content: "Checking.", tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
          { role: "tool", tool_call_id: "call_1", content: "sunny" },
        ],
      },
      context,
    );
    const [, assistant, result] = request.messages;
    expect(assistant.content.map((part) => part.part.case)).toEqual(["text", "toolCall"]);
    expect(assistant.content[1].part.value).toMatchObject({ id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' });
    expect(result.role).toBe(Role.TOOL);
    expect(result.content).toHaveLength(1);
    const toolResult = result.content[0].part;
    expect(toolResult.case).toBe("toolResult");
    if (toolResult.case !== "toolResult") return;
    expect(toolResult.value.toolCallId).toBe("call_1");
    expect(toolResult.value.content[0].part).toMatchObject({ case: "text", value: { text: "sunny" } });
    expect(request.tools[0]).toMatchObject({ name: "get_weather", parameters: { type: "object" } });
    expect(request.toolChoice).toMatchObject({ mode: ToolChoice_Mode.NAMED, name: "get_weather" });
  });

  describe("earlier reasoning", () => {
    const reasoningOf = (fields: Record<string, unknown>) =>
      decodeChatRequest({ ...base, ...assistantWith(fields) }, context).request.messages[1].content.map((part) => part.part);
    const thinking = (text: string, signature: string) => ({ case: "reasoning", value: expect.objectContaining({ text, signature, redactedData: "" }) });
    const redacted = (redactedData: string) => ({ case: "reasoning", value: expect.objectContaining({ text: "", signature: "", redactedData }) });
    const text = { case: "text", value: expect.objectContaining({ text: "ok" }) };

    it("makes one part per reasoning_details entry, in order, each with its signature", () => {
      const parts = reasoningOf({
        reasoning: { text: "AB", signature: "sig-b", redacted: ["opaque"] },
        reasoning_details: [
          { type: "reasoning.text", text: "A", signature: "sig-a", index: 0 },
          { type: "reasoning.encrypted", data: "opaque", index: 1 },
          { type: "reasoning.text", text: "B", signature: "sig-b", index: 2 },
        ],
      });
      expect(parts).toEqual([thinking("A", "sig-a"), redacted("opaque"), thinking("B", "sig-b"), text]);
    });

    it("puts back together the pieces of a block collected from a stream (same type and index)", () => {
      const parts = reasoningOf({
        reasoning_details: [
          { type: "reasoning.text", text: "Fir", index: 0 },
          { type: "reasoning.text", text: "st", index: 0 },
          { type: "reasoning.text", text: "", signature: "sig-a", index: 0 },
          { type: "reasoning.encrypted", data: "opaque", index: 1 },
          { type: "reasoning.encrypted", data: "opaque-2", index: 2 },
          { type: "reasoning.text", text: "Then", index: 3 },
          { type: "reasoning.text", text: "", signature: "sig-b", index: 3 },
        ],
      });
      expect(parts).toEqual([thinking("First", "sig-a"), redacted("opaque"), redacted("opaque-2"), thinking("Then", "sig-b"), text]);
    });

    it("keeps entries without an index apart, and reads a summary as unsigned text", () => {
      const parts = reasoningOf({
        reasoning_details: [
          { type: "reasoning.text", text: "A", signature: "sig-a" },
          { type: "reasoning.text", text: "B", signature: "sig-b" },
          { type: "reasoning.summary", summary: "in short" },
        ],
      });
      expect(parts).toEqual([thinking("A", "sig-a"), thinking("B", "sig-b"), thinking("in short", ""), text]);
    });

    it("without reasoning_details, reads the joined reasoning object as before", () => {
      expect(reasoningOf({ reasoning: { text: "AB", signature: "sig-b", redacted: ["opaque"] } })).toEqual([thinking("AB", "sig-b"), redacted("opaque"), text]);
      expect(reasoningOf({ reasoning_details: [] })).toEqual([text]);
    });
  });

  it("maps media blocks and per-block cache_control", () => {
    const blocks = [
      { type: "text", text: "look", cache_control: { type: "ephemeral" } },
      { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "high" } },
      { type: "input_audio", input_audio: { data: "UklGR", format: "wav" } },
      { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBER" } },
    ];
    const { request } = decodeChatRequest({ ...base, ...user(blocks) }, context);
    const [text, image, audio, file] = request.messages[0].content;
    expect(text.cacheControl).toMatchObject({ type: "ephemeral", ttl: "" });
    expect(image.cacheControl).toBeUndefined();
    expect(image.part).toMatchObject({ case: "image", value: { url: "https://example.com/cat.png", detail: "high" } });
    expect(audio.part).toMatchObject({ case: "audio", value: { data: "UklGR", format: "wav" } });
    expect(file.part).toMatchObject({ case: "file", value: { filename: "a.pdf", mimeType: "application/pdf" } });
  });

  it("maps sampling: seed as bigint, a stop string as a list, max_completion_tokens as max_tokens", () => {
    const { request } = decodeChatRequest({ ...base, seed: 42, stop: "END", max_completion_tokens: 100, temperature: 0 }, context);
    expect(request.sampling).toMatchObject({ seed: 42n, stop: ["END"], maxTokens: 100, temperature: 0 });
    expect(request.sampling?.topP).toBeUndefined();
  });

  it("maps routing, reasoning, response format, cache, media and user", () => {
    const { request, stream } = decodeChatRequest(
      {
        ...base,
        models: ["anthropic/claude"],
        request_tags: ["eval"],
        stream: true,
        stream_options: { include_usage: true },
        provider: { order: ["a", "b"], allow_fallbacks: false },
        reasoning: { effort: "low", exclude: true },
        response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" } } },
        cache: { conversation_mode: "last_n_turns", last_n_turns: 2 },
        aspectRatio: "16:9",
        prompt: "birdsong",
        duration: 5,
        user: "u-1",
      },
      { ...context, cacheKey: "k1" },
    );
    expect([stream, request.stream]).toEqual([true, true]);
    expect(request.models).toEqual(["anthropic/claude"]);
    expect(request.requestTags).toEqual(["eval"]);
    expect(request.provider).toMatchObject({ only: [], order: ["a", "b"], allowFallbacks: false });
    expect(request.reasoning).toMatchObject({ effort: "low", exclude: true });
    expect(request.reasoning?.maxTokens).toBeUndefined();
    expect(request.responseFormat).toMatchObject({ type: ResponseFormat_Type.JSON_SCHEMA, name: "answer", schema: { type: "object" }, strict: false });
    expect(request.cache).toMatchObject({ cacheKey: "k1", conversationMode: "last_n_turns", lastNTurns: 2 });
    expect(request.media).toMatchObject({ aspectRatio: "16:9", audioPrompt: "birdsong", durationSeconds: 5 });
    expect(request.passthrough).toEqual({ user: "u-1" });
  });

  it("reads null fields as unset and passes a tool's JSON schema on with its own nulls", () => {
    const parameters = { type: "object", properties: { unit: { type: ["string", "null"], default: null } } };
    const { request, stream } = decodeChatRequest(
      { ...base, temperature: null, stream: null, stop: null, max_tokens: null, reasoning: { effort: null, max_tokens: 2048 }, tools: [{ type: "function", function: { name: "f", parameters, description: null } }] },
      context,
    );
    expect(stream).toBe(false);
    expect(request.sampling).toMatchObject({ stop: [] });
    expect(request.sampling?.temperature).toBeUndefined();
    expect(request.sampling?.maxTokens).toBeUndefined();
    expect(request.reasoning).toMatchObject({ effort: "", maxTokens: 2048 });
    expect(request.tools[0]).toMatchObject({ name: "f", description: "", parameters });
  });

  it("turns the cache on from the cache_key header alone", () => {
    const { request } = decodeChatRequest(base, { ...context, cacheKey: "k1" });
    expect(request.cache?.cacheKey).toBe("k1");
  });
});

function catchError(run: () => unknown): ConnectError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConnectError) return error;
    throw error;
  }
  throw new Error("expected a ConnectError");
}
