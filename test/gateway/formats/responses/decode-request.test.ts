// A Responses body as the core's GenerateRequest: input items onto the hub's
// messages (an earlier answer's items gathered into one assistant message, in
// order; function_call_output as a tool message), instructions as a system
// message, the conversation reference and store flag, tools and formats.
import { describe, expect, it } from "vitest";
import { decodeResponsesRequest } from "../../../../gateway/formats/responses/decode-request.ts";
import { PublicFormat, ResponseFormat_Type, Role, ToolChoice_Mode, type Message } from "../../../../gen/router/v1/inference_pb.js";

const decode = (body: object) => decodeResponsesRequest({ model: "p/m", ...body }, { apiKey: "k", requestId: "req_1" }).request;

/** Messages as role and part kinds, for assertions at a glance. */
const view = (messages: Message[]) =>
  messages.map((m) => ({ role: Role[m.role], parts: m.content.map((p) => p.part.case) }));

describe("decoding a Responses request", () => {
  it("reads a string input as one user message, instructions as a system message first", () => {
    const request = decode({ input: "Hi", instructions: "Be brief." });
    expect(request.format).toBe(PublicFormat.RESPONSES);
    expect(view(request.messages)).toEqual([
      { role: "SYSTEM", parts: ["text"] },
      { role: "USER", parts: ["text"] },
    ]);
    expect(request.store).toBeUndefined();
    expect(request.conversation).toBeUndefined();
  });

  it("gathers an earlier answer's reasoning, message and calls into one assistant message, and each output into a tool message", () => {
    const request = decode({
      input: [
        { role: "user", content: [{ type: "input_text", text: "Weather?" }, { type: "input_image", image_url: "https://x/y.png", detail: "low" }] },
        { type: "reasoning", id: "r1", summary: [{ type: "summary_text", text: "Thinking" }], encrypted_content: "sig:abc" },
        { type: "message", role: "assistant", id: "m1", status: "completed", content: [{ type: "output_text", text: "Let me check.", annotations: [] }] },
        { type: "function_call", id: "fc1", call_id: "call_1", name: "get_weather", arguments: "{\"city\":\"Paris\"}", status: "completed" },
        { type: "function_call_output", call_id: "call_1", output: "Sunny" },
        { role: "user", content: [{ type: "input_file", filename: "a.pdf", file_data: "data:application/pdf;base64,AAAA" }] },
      ],
    });
    expect(view(request.messages)).toEqual([
      { role: "USER", parts: ["text", "image"] },
      { role: "ASSISTANT", parts: ["reasoning", "text", "toolCall"] },
      { role: "TOOL", parts: ["toolResult"] },
      { role: "USER", parts: ["file"] },
    ]);
    const [, answer, tool, file] = request.messages;
    expect(answer.content[0].part.value).toMatchObject({ text: "Thinking", signature: "abc" });
    expect(answer.content[2].part.value).toMatchObject({ id: "call_1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" });
    expect(tool.content[0].part.value).toMatchObject({ toolCallId: "call_1" });
    expect(file.content[0].part.value).toMatchObject({ filename: "a.pdf", mimeType: "application/pdf" });
  });

  it("sends sealed reasoning back as redacted data", () => {
    const request = decode({ input: [{ type: "reasoning", summary: [], encrypted_content: "redacted:XYZ" }, { role: "user", content: "Go on" }] });
    expect(request.messages[0].content[0].part.value).toMatchObject({ redactedData: "XYZ", text: "", signedBy: "" });
  });

  it("reads the protocol that signed the reasoning from encrypted_content, so no other provider is sent it", () => {
    const signed = decode({ input: [{ type: "reasoning", summary: [], encrypted_content: "sig@gemini:c2lnbg==" }, { role: "user", content: "Go on" }] });
    expect(signed.messages[0].content[0].part.value).toMatchObject({ signature: "c2lnbg==", signedBy: "gemini" });
    const sealed = decode({ input: [{ type: "reasoning", summary: [], encrypted_content: "redacted@anthropic:XYZ" }, { role: "user", content: "Go on" }] });
    expect(sealed.messages[0].content[0].part.value).toMatchObject({ redactedData: "XYZ", signedBy: "anthropic" });
    // Not the gateway's own form: a signature of unknown origin.
    const foreign = decode({ input: [{ type: "reasoning", summary: [], encrypted_content: "gAAAAopaque" }, { role: "user", content: "Go on" }] });
    expect(foreign.messages[0].content[0].part.value).toMatchObject({ signature: "gAAAAopaque", signedBy: "" });
  });

  it("maps the conversation reference, store, tools, tool_choice, text.format, reasoning and limits", () => {
    const request = decode({
      input: "Hi",
      previous_response_id: "resp_1",
      store: false,
      tools: [{ type: "function", name: "f", parameters: { type: "object" }, strict: true }],
      tool_choice: { type: "function", name: "f" },
      parallel_tool_calls: false,
      text: { format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true } },
      reasoning: { effort: "high", summary: "auto" },
      max_tokens: 100,
      temperature: 0.2,
      top_p: 0.5,
      user: "u1",
    });
    expect(request.conversation?.previousId).toBe("resp_1");
    expect(request.store).toBe(false);
    expect(request.tools[0]).toMatchObject({ name: "f", strict: true });
    expect(request.toolChoice).toMatchObject({ mode: ToolChoice_Mode.NAMED, name: "f" });
    expect(request.parallelToolCalls).toBe(false);
    expect(request.responseFormat).toMatchObject({ type: ResponseFormat_Type.JSON_SCHEMA, name: "out", strict: true });
    expect(request.reasoning?.effort).toBe("high");
    expect(request.sampling).toMatchObject({ maxTokens: 100, temperature: 0.2, topP: 0.5 });
    expect(request.passthrough).toEqual({ user: "u1" });
  });

  it("refuses output parts in a user message, naming the part", () => {
    expect(() => decode({ input: [{ role: "user", content: [{ type: "output_text", text: "x" }] }] })).toThrow(/input\[0\]\.content\[0\]\.type/);
  });
});

describe("text.format description", () => {
  it("rides in the schema, which every protocol passes on, unless the schema has its own", () => {
    const decode = (schema: Record<string, unknown>) =>
      decodeResponsesRequest(
        { model: "m/x", input: "hi", text: { format: { type: "json_schema", name: "answer", description: "The answer", schema } } },
        { apiKey: "k", requestId: "r" },
      ).request.responseFormat?.schema;
    expect(decode({ type: "object" })).toEqual({ type: "object", description: "The answer" });
    expect(decode({ type: "object", description: "Own" })).toEqual({ type: "object", description: "Own" });
  });
});
