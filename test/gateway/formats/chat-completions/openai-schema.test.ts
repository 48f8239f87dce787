// Wire compatibility against OpenAI's own OpenAPI document: every chat completion
// the gateway answers (JSON and each stream chunk) and every request body the
// OpenAI-compatible adapter sends upstream is validated with a JSON Schema
// validator against the document's CreateChatCompletionResponse,
// CreateChatCompletionStreamResponse and CreateChatCompletionRequest.
//
// Our extra fields (usage.cost, usage.chat_id, usage.provider, top-level provider,
// citations, message.reasoning, delta.reasoning) pass only because those schemas
// leave additionalProperties open; the checks are not loosened to let them in.
import { describe, expect, it } from "vitest";
import type { RecordedRequest } from "../../../support/fake-openai-upstream.ts";
import { expectValid, validatorFor } from "../../../support/openai-schema.ts";

type Json = Record<string, any>;
import { TEST_KEY, useGatewayWithUpstream } from "../../../support/harness.ts";

const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

// A 1x1 transparent PNG.
const PNG_DATA_URI =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

interface Answer {
  /** The JSON answer, or every stream chunk but `[DONE]`. */
  json?: Json;
  chunks?: Json[];
  /** The upstream requests this call caused. */
  sent: RecordedRequest[];
}

interface Case {
  name: string;
  body: Json;
  /** False for simulator models, which send nothing upstream. */
  upstream: boolean;
  /** Checks that the feature under test really reached the wire (so the validation covered it). */
  check(answer: Answer): void;
}

/** The final chunk with usage, the final finish chunk, and the assembled delta text. */
function summarize(chunks: Json[]) {
  const withChoices = chunks.filter((c) => c.choices.length > 0);
  return {
    usageChunk: chunks.at(-1)!,
    finish: withChoices.at(-1)!.choices[0].finish_reason as string,
    content: withChoices.map((c) => c.choices[0].delta.content ?? "").join(""),
    reasoning: withChoices.map((c) => c.choices[0].delta.reasoning?.text ?? "").join(""),
    toolCalls: withChoices.flatMap((c) => c.choices[0].delta.tool_calls ?? []),
  };
}

const cases: Case[] = [
  {
    name: "plain text (test/ok)",
    body: {
      model: "test/ok",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
      ],
      max_tokens: 50,
      temperature: 0.5,
      top_p: 0.9,
    },
    upstream: true,
    check({ json, chunks }) {
      // The extras are present in what was validated.
      const usage = json ? json.usage : chunks!.at(-1)!.usage;
      expect(usage).toMatchObject({ cost: expect.any(Number), chat_id: expect.stringMatching(/^rtr_/), provider: "cheap" });
      if (json) {
        expect(json).toMatchObject({ provider: "cheap", citations: null });
        expect(json.choices[0].message.content).toBe("Hello from ok");
      } else {
        expect(chunks!.every((c) => c.provider === "cheap")).toBe(true);
        expect(summarize(chunks!).content).toBe("Hello from ok");
      }
    },
  },
  {
    name: "json_schema response_format",
    body: {
      model: "test/ok",
      messages: [{ role: "user", content: "Give me an answer object" }],
      response_format: {
        type: "json_schema",
        json_schema: {
          name: "answer",
          schema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false },
          strict: true,
        },
      },
    },
    upstream: true,
    check({ sent }) {
      expect(sent[0].body.response_format).toMatchObject({ type: "json_schema", json_schema: { name: "answer", strict: true } });
    },
  },
  {
    name: "reasoning effort through a reasoning_effort_map (test/thinker)",
    body: { model: "test/thinker", messages: [{ role: "user", content: "Think hard" }], max_tokens: 4096, reasoning: { effort: "high" } },
    upstream: true,
    check({ sent }) {
      expect(sent[0].body.reasoning_effort).toBe("high");
    },
  },
  {
    name: "image input (image_url data URI)",
    body: {
      model: "test/ok",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is in this image?" },
            { type: "image_url", image_url: { url: PNG_DATA_URI, detail: "low" } },
          ],
        },
      ],
    },
    upstream: true,
    check({ sent }) {
      expect(sent[0].body.messages).toEqual([
        {
          role: "user",
          content: [
            { type: "text", text: "What is in this image?" },
            { type: "image_url", image_url: { url: PNG_DATA_URI, detail: "low" } },
          ],
        },
      ]);
    },
  },
  {
    name: "stop, seed and penalties",
    body: {
      model: "test/ok",
      messages: [{ role: "user", content: "Count to ten" }],
      stop: ["\n\n", "END"],
      seed: 42,
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
    },
    upstream: true,
    check({ sent }) {
      expect(sent[0].body).toMatchObject({ stop: ["\n\n", "END"], seed: 42, frequency_penalty: 0.5, presence_penalty: -0.5 });
    },
  },
  {
    name: "reasoning deltas (simulator/reasoning)",
    body: { model: "simulator/reasoning", messages: [{ role: "user", content: "Why is the sky blue?" }], reasoning: { effort: "low" } },
    upstream: false,
    check({ json, chunks }) {
      if (json) {
        expect(json.choices[0].message.reasoning.text).toMatch(/Considering the request/);
        expect(json.usage.completion_tokens_details.reasoning_tokens).toBeGreaterThan(0);
      } else {
        expect(summarize(chunks!).reasoning).toMatch(/Considering the request/);
      }
    },
  },
  {
    name: "citations (test/cite)",
    body: { model: "test/cite", messages: [{ role: "user", content: "Cite a source" }] },
    upstream: true,
    check({ json, chunks }) {
      const annotations = json ? json.choices[0].message.annotations : chunks!.flatMap((c) => c.choices[0]?.delta?.annotations ?? []);
      expect(annotations).toHaveLength(1);
    },
  },
];

describe("chat completions against OpenAI's OpenAPI schemas", () => {
  const stack = useGatewayWithUpstream();

  /** Posts a chat request, validates the answer and every upstream request it caused. */
  async function call(body: Json, stream: boolean): Promise<Answer> {
    const before = stack.upstream.requests.length;
    const response = await fetch(`${stack.gateway.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ ...body, stream }),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    const sent = stack.upstream.requests.slice(before);
    for (const [i, request] of sent.entries()) {
      expect(request.path).toBe("/v1/chat/completions");
      expectValid("CreateChatCompletionRequest", request.body, `upstream request ${i}`);
    }
    if (!stream) {
      const json = JSON.parse(text) as Json;
      expectValid("CreateChatCompletionResponse", json, "JSON answer");
      return { json, sent };
    }
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const data = text
      .split("\n\n")
      .filter((frame) => frame.trim() !== "")
      .map((frame) => {
        expect(frame).toMatch(/^data: /);
        return frame.slice("data: ".length);
      });
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Json);
    expect(chunks.length).toBeGreaterThan(2);
    for (const [i, chunk] of chunks.entries()) expectValid("CreateChatCompletionStreamResponse", chunk, `chunk ${i}`);
    return { chunks, sent };
  }

  it("loads the document and compiles the three schemas", () => {
    for (const name of ["CreateChatCompletionRequest", "CreateChatCompletionResponse", "CreateChatCompletionStreamResponse"] as const) {
      expect(typeof validatorFor(name)).toBe("function");
    }
  });

  it("the validators reject what OpenAI's schemas forbid (the loader is not vacuous)", () => {
    const ok = { id: "x", object: "chat.completion", created: 1, model: "m", choices: [] };
    expectValid("CreateChatCompletionResponse", ok, "minimal answer");
    expect(validatorFor("CreateChatCompletionResponse")({ ...ok, object: "chat.completion.chunk" })).toBe(false);
    expect(validatorFor("CreateChatCompletionResponse")({ ...ok, created: "1" })).toBe(false);
    const choice = { index: 0, message: { role: "assistant", content: "x", refusal: null }, logprobs: null, finish_reason: "error" };
    expect(validatorFor("CreateChatCompletionResponse")({ ...ok, choices: [choice] })).toBe(false);
    // A `nullable` enum (the chunk's finish_reason) takes null, and nothing outside the enum.
    const chunk = { id: "x", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: null }] };
    expectValid("CreateChatCompletionStreamResponse", chunk, "minimal chunk");
    expect(validatorFor("CreateChatCompletionStreamResponse")({ ...chunk, choices: [{ ...chunk.choices[0], finish_reason: "error" }] })).toBe(false);
    // `usage: {$ref, nullable: true}` takes null but still checks an object.
    expectValid("CreateChatCompletionStreamResponse", { ...chunk, usage: null }, "chunk with usage null");
    expect(validatorFor("CreateChatCompletionStreamResponse")({ ...chunk, usage: { prompt_tokens: 1 } })).toBe(false);
    const request = { model: "m", messages: [{ role: "user", content: "hi" }] };
    expectValid("CreateChatCompletionRequest", request, "minimal request");
    expect(validatorFor("CreateChatCompletionRequest")({ ...request, messages: [] })).toBe(false);
    expect(validatorFor("CreateChatCompletionRequest")({ ...request, messages: [{ role: "robot", content: "hi" }] })).toBe(false);
    expect(validatorFor("CreateChatCompletionRequest")({ ...request, stop: null })).toBe(true);
    expect(validatorFor("CreateChatCompletionRequest")({ ...request, stop: 3 })).toBe(false);
    const image = (url: string) => ({ ...request, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url } }] }] });
    expect(validatorFor("CreateChatCompletionRequest")(image(PNG_DATA_URI))).toBe(true);
    expect(validatorFor("CreateChatCompletionRequest")(image("not a uri"))).toBe(false);
  });

  describe.each([{ stream: false }, { stream: true }])("stream: $stream", ({ stream }) => {
    it.each(cases)("$name", async ({ body, upstream: sendsUpstream, check }) => {
      const answer = await call(body, stream);
      expect(answer.sent).toHaveLength(sendsUpstream ? 1 : 0);
      check(answer);
    });

    it("tool call, then the tool result turn (test/tool)", async () => {
      const question = { role: "user", content: "What is the weather in Paris?" };
      const first = await call({ model: "test/tool", messages: [question], tools: [weatherTool], tool_choice: "auto" }, stream);
      expect(first.sent).toHaveLength(1);
      expect(first.sent[0].body.tools).toEqual([weatherTool]);
      let toolCalls: Json[];
      if (first.json) {
        expect(first.json.choices[0].finish_reason).toBe("tool_calls");
        toolCalls = first.json.choices[0].message.tool_calls;
      } else {
        const summary = summarize(first.chunks!);
        expect(summary.finish).toBe("tool_calls");
        toolCalls = [
          {
            id: summary.toolCalls[0].id,
            type: "function",
            function: { name: summary.toolCalls[0].function.name, arguments: summary.toolCalls.map((t) => t.function.arguments).join("") },
          },
        ];
      }
      expect(toolCalls).toEqual([{ id: "call_fake1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }]);

      const second = await call(
        {
          model: "test/tool",
          messages: [
            question,
            { role: "assistant", content: null, tool_calls: toolCalls },
            { role: "tool", tool_call_id: "call_fake1", content: '{"temperature_c":18,"sky":"clear"}' },
          ],
          tools: [weatherTool],
        },
        stream,
      );
      expect(second.sent).toHaveLength(1);
      expect(second.sent[0].body.messages).toEqual([
        question,
        { role: "assistant", content: null, tool_calls: toolCalls },
        { role: "tool", tool_call_id: "call_fake1", content: '{"temperature_c":18,"sky":"clear"}' },
      ]);
    });
  });
});
