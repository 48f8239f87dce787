// An Interactions body as the core's GenerateRequest: input as a string,
// content or a timeline of steps and turns onto the hub's messages (an
// earlier answer's steps gathered into one assistant message, each function
// result its own tool message), images as data or uri, a thought's signature
// read back with its signer, the format's policy, and a 400 naming each field
// this gateway does not serve yet.
import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { decodeInteractionsRequest } from "../../../../gateway/formats/interactions/decode-request.ts";
import { PublicFormat, ResponseFormat_Type, Role, ToolChoice_Mode, type Message } from "../../../../gen/router/v1/inference_pb.js";

const decode = (body: object) => decodeInteractionsRequest({ model: "p/m", ...body }, { apiKey: "k", requestId: "req_1" }).request;

const view = (messages: Message[]) => messages.map((m) => ({ role: Role[m.role], parts: m.content.map((p) => p.part.case) }));

describe("decoding an Interactions request", () => {
  it("states the format's policy and reads a string input, the system instruction first", () => {
    const request = decode({ input: "Hi", system_instruction: "Be brief.", previous_interaction_id: "rtr_1" });
    expect(request.format).toBe(PublicFormat.INTERACTIONS);
    expect(request.formatPolicy).toMatchObject({ referenceParam: "previous_interaction_id", storeByDefault: true, bareModelNames: true });
    expect(request.conversation?.previousId).toBe("rtr_1");
    expect(view(request.messages)).toEqual([
      { role: "SYSTEM", parts: ["text"] },
      { role: "USER", parts: ["text"] },
    ]);
  });

  it("reads a timeline: user content, an earlier answer as one assistant message, each function result a tool message", () => {
    const request = decode({
      input: [
        { type: "text", text: "What is in it?" },
        { type: "image", data: "iVBORw0KGgo=", mime_type: "image/png" },
        { type: "thought", signature: "anthropic:c2ln", summary: [{ type: "text", text: "Hmm" }] },
        { type: "model_output", content: [{ type: "text", text: "Checking." }] },
        { type: "function_call", id: "call_1", name: "look", arguments: { at: "it" } },
        { type: "function_call", id: "call_2", name: "look", arguments: {} },
        { type: "function_result", call_id: "call_1", result: "a cat" },
        { type: "function_result", call_id: "call_2", result: [{ type: "text", text: "a dog" }], is_error: true },
        { role: "user", content: [{ type: "image", uri: "https://x/y.png" }] },
      ],
    });
    expect(view(request.messages)).toEqual([
      { role: "USER", parts: ["text", "image"] },
      { role: "ASSISTANT", parts: ["reasoning", "text", "toolCall", "toolCall"] },
      { role: "TOOL", parts: ["toolResult"] },
      { role: "TOOL", parts: ["toolResult"] },
      { role: "USER", parts: ["image"] },
    ]);
    const [user, answer, , second, last] = request.messages;
    expect(user.content[1].part.value).toMatchObject({ data: "iVBORw0KGgo=", mimeType: "image/png" });
    expect(answer.content[0].part.value).toMatchObject({ text: "Hmm", signature: "c2ln", signedBy: "anthropic" });
    expect(answer.content[2].part.value).toMatchObject({ id: "call_1", name: "look", arguments: '{"at":"it"}' });
    expect(second.content[0].part.value).toMatchObject({ toolCallId: "call_2", isError: true });
    expect(last.content[0].part.value).toMatchObject({ url: "https://x/y.png" });
  });

  it("reads tools, generation settings and a JSON schema output", () => {
    const request = decode({
      input: "Hi",
      tools: [{ type: "function", name: "look", parameters: { type: "object" } }],
      generation_config: { temperature: 0.2, max_output_tokens: 64, stop_sequences: ["END"], thinking_level: "low", tool_choice: "any" },
      response_format: { type: "text", mime_type: "application/json", schema: { type: "object" } },
      request_tags: ["a"],
      store: false,
    });
    expect(request.tools.map((tool) => tool.name)).toEqual(["look"]);
    expect(request.sampling).toMatchObject({ temperature: 0.2, maxTokens: 64, stop: ["END"] });
    expect(request.reasoning?.effort).toBe("low");
    expect(request.toolChoice?.mode).toBe(ToolChoice_Mode.REQUIRED);
    expect(request.responseFormat?.type).toBe(ResponseFormat_Type.JSON_SCHEMA);
    expect(request.requestTags).toEqual(["a"]);
    expect(request.store).toBe(false);
  });

  it("passes Google's own settings to the Gemini protocols as provider options, generateContent's in its spelling", () => {
    const { request, background } = decodeInteractionsRequest({
      model: "p/m",
      input: "Hi",
      background: true,
      safety_settings: [{ type: "hate_speech", threshold: "block_only_high", method: "severity" }],
      service_tier: "flex",
      environment: { type: "remote", sources: [{ type: "repository", uri: "https://github.com/a/b" }] },
    }, { apiKey: "k", requestId: "req_1" });
    expect(background).toBe(true);
    expect(request.providerOptions["gemini-interactions"]).toEqual({
      safety_settings: [{ type: "hate_speech", threshold: "block_only_high", method: "severity" }],
      service_tier: "flex",
      environment: { type: "remote", sources: [{ type: "repository", uri: "https://github.com/a/b" }] },
    });
    expect(request.providerOptions.gemini).toEqual({ safety_settings: [{ category: "HARM_CATEGORY_HATE_SPEECH", threshold: "BLOCK_ONLY_HIGH", method: "SEVERITY" }] });
    // An environment by id; no setting, no options.
    expect(decode({ input: "Hi", environment: "env_1" }).providerOptions).toEqual({ "gemini-interactions": { environment: "env_1" } });
    expect(decode({ input: "Hi" }).providerOptions).toEqual({});
  });

  it.each([
    ["agent", { agent: "deep-research-pro-preview-12-2025" }],
    ["webhook_config", { webhook_config: { uri: "https://example.com/hook" } }],
    ["background", { background: true, store: false }],
    ["stream", { background: true, stream: true }],
    ["service_tier", { service_tier: "gold" }],
    ["threshold", { safety_settings: [{ type: "hate_speech" }] }],
    ["environment", { environment: { type: "local" } }],
    ["response_format", { response_format: { type: "video" } }],
    ["input", { input: [{ type: "video", uri: "https://x/v.mp4" }] }],
    ["input", { input: [{ type: "image" }] }],
    ["cache_control", { input: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }] }],
    ["strict", { tools: [{ type: "function", name: "look", strict: true }] }],
  ])("refuses what is not served yet with a 400 naming %s", (param, body) => {
    let thrown: unknown;
    try {
      decode({ input: "Hi", ...body });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConnectError);
    expect((thrown as ConnectError).rawMessage).toContain(param);
  });
});
