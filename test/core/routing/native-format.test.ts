// What a Messages request carries for Anthropic's own protocol alone, and how
// routing hands it out: the native format's protocol gets the unmodelled
// blocks, originals, every pass-through field and the betas; another protocol
// the typed parts, with a warning per dropped block type. Server tools decide
// which routes can serve; bare model names resolve in the Messages format.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { parseConfig } from "../../../core/config/load.ts";
import { convertRequest } from "../../../core/providers/anthropic/convert-request.ts";
import { planAttempts } from "../../../core/routing/plan.ts";
import { GenerateRequestSchema, PublicFormat, Role } from "../../../gen/router/v1/inference_pb.js";
import { FORMAT_FIELDS } from "../../support/request-formats.ts";

const model = (id: string, provider: string) => ({
  id,
  name: id,
  created: 0,
  creator: "t",
  context_length: 100_000,
  max_completion_tokens: 10_000,
  input_modalities: ["text", "image", "file"],
  output_modalities: ["text"],
  supported_parameters: ["max_tokens", "tools", "reasoning"],
  providers: [{ provider, provider_model_id: id.split("/")[1], pricing: { prompt: "0.000001", completion: "0.000002" } }],
});

const catalogue = createCatalogue(
  parseConfig(
    JSON.stringify({
      providers: [
        { id: "claude", label: "Claude", protocol: "anthropic", base_url: "https://api.anthropic.com/v1" },
        { id: "oai", label: "OAI", protocol: "openai-compatible", base_url: "https://oai.example/v1" },
        { id: "goog", label: "Goog", protocol: "gemini", base_url: "https://goog.example/v1beta" },
      ],
      models: [model("anthropic/claude-x", "claude"), model("openai/gpt-x", "oai"), model("google/gemini-x", "goog"), model("other/gpt-x", "oai")],
    }),
  ),
  {},
);

type RequestInit = MessageInitShape<typeof GenerateRequestSchema>;

const searchResult = { type: "search_result", source: "https://s.example", title: "S", content: [{ type: "text", text: "found" }] };
const citedText = { type: "text", text: "As cited.", citations: [{ type: "char_location", cited_text: "x", document_index: 0, start_char_index: 0, end_char_index: 1 }] };

/** A Messages request with one of everything only Anthropic takes. */
function messagesRequest(init: RequestInit = {}) {
  const defaults: RequestInit = {
    ...FORMAT_FIELDS.messages,
    sampling: { maxTokens: 100 },
    messages: [
      {
        role: Role.USER,
        content: [
          { part: { case: "native", value: { format: PublicFormat.MESSAGES, block: searchResult } } },
          { part: { case: "text", value: { text: "As cited." } }, original: citedText },
        ],
      },
    ],
    tools: [{ name: "lookup", parameters: { type: "object" }, original: { name: "lookup", input_schema: { type: "object" }, defer_loading: true } }],
    passthrough: { service_tier: "auto", context_management: { edits: [] }, user: "u1" },
    providerOptions: { anthropic: { betas: ["context-management-2025-06-27"] } },
  };
  return create(GenerateRequestSchema, { ...defaults, ...init } as RequestInit);
}

const attemptFor = (modelId: string, init: RequestInit = {}) => planAttempts(messagesRequest({ model: modelId, ...init }), catalogue).attempts[0];

describe("the native format's own protocol", () => {
  it("sends Anthropic every block, original, pass-through field and beta of a Messages request as it came", () => {
    const attempt = attemptFor("anthropic/claude-x");
    expect(attempt.warnings).toEqual([]);
    const body = convertRequest({
      request: attempt.request,
      provider: attempt.route.provider,
      route: attempt.route.route,
      apiKey: "k",
      stream: false,
      maxCompletionTokens: 10_000,
      signal: new AbortController().signal,
    }).body;
    expect(body.messages).toEqual([{ role: "user", content: [searchResult, citedText] }]);
    expect(body.tools).toEqual([{ name: "lookup", input_schema: { type: "object" }, defer_loading: true }]);
    expect(body).toMatchObject({ service_tier: "auto", context_management: { edits: [] }, metadata: { user_id: "u1" } });
    expect(attempt.request.providerOptions).toEqual({ anthropic: { betas: ["context-management-2025-06-27"] } });
  });

  it("gives another protocol the typed parts only, saying which blocks and fields were left out", () => {
    const attempt = attemptFor("openai/gpt-x");
    const [message] = attempt.request.messages;
    expect(message.content.map((part) => part.part.case)).toEqual(["text"]);
    expect(message.content[0].original).toBeUndefined();
    expect(attempt.request.tools[0].original).toBeUndefined();
    expect(attempt.request.providerOptions).toEqual({});
    expect(attempt.request.passthrough).toEqual({ user: "u1" });
    const words = attempt.warnings.map((w) => w.message).join(" | ");
    expect(words).toContain("search_result blocks are not supported by openai/gpt-x");
    expect(words).toContain("service_tier");
    expect(words).toContain("context_management");
  });

  it("looks inside tool results: a block of an unmodelled type there is left out on another protocol, with its warning", () => {
    const attempt = attemptFor("openai/gpt-x", {
      messages: [
        {
          role: Role.TOOL,
          content: [
            {
              part: {
                case: "toolResult",
                value: {
                  toolCallId: "call_1",
                  content: [
                    { part: { case: "text", value: { text: "found" } }, original: { type: "text", text: "found", citations: [] } },
                    { part: { case: "native", value: { format: PublicFormat.MESSAGES, block: searchResult } } },
                  ],
                },
              },
            },
          ],
        },
      ],
    });
    const result = attempt.request.messages[0].content[0].part;
    expect(result.case).toBe("toolResult");
    const inner = result.case === "toolResult" ? result.value.content : [];
    expect(inner.map((part) => [part.part.case, part.original])).toEqual([["text", undefined]]);
    expect(attempt.warnings.map((w) => w.message).join(" | ")).toContain("search_result blocks are not supported by openai/gpt-x");
  });

  it("keeps a chat request's pass-through filter on Anthropic (only the native format's fields all go)", () => {
    const chat = create(GenerateRequestSchema, {
      ...FORMAT_FIELDS.chatCompletions,
      model: "anthropic/claude-x",
      sampling: { maxTokens: 100 },
      messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Hi" } } }] }],
      passthrough: { user: "u1", logit_bias: { "1": 2 } },
    });
    const attempt = planAttempts(chat, catalogue).attempts[0];
    expect(attempt.request.passthrough).toEqual({ user: "u1" });
  });
});

describe("server tools decide the routes", () => {
  const webSearch = { serverTools: [{ name: "web_search" }] };
  const codeExecution = { serverTools: [{ name: "code_execution_20250825", native: { type: "code_execution_20250825", name: "code_execution" } }] };

  it("web search is served by Anthropic and Gemini, and refused (400 naming tools) where only other protocols serve the model", () => {
    expect(attemptFor("anthropic/claude-x", webSearch).route.provider.id).toBe("claude");
    expect(attemptFor("google/gemini-x", webSearch).route.provider.id).toBe("goog");
    expect(() => attemptFor("openai/gpt-x", webSearch)).toThrow(expect.objectContaining({ rawMessage: expect.stringContaining("web_search server tool") }));
  });

  it("a tool only Anthropic defines is served by Anthropic alone, for a Messages request", () => {
    expect(attemptFor("anthropic/claude-x", codeExecution).route.provider.id).toBe("claude");
    expect(() => attemptFor("google/gemini-x", codeExecution)).toThrow(expect.objectContaining({ rawMessage: expect.stringContaining("code_execution_20250825") }));
  });
});

describe("bare model names", () => {
  it("resolve in the Messages format to the one model with that bare name", () => {
    expect(attemptFor("claude-x").model.config.id).toBe("anthropic/claude-x");
  });

  it("name every candidate when several models share the bare name (400), and are unknown otherwise (404)", () => {
    expect(() => attemptFor("gpt-x")).toThrow(expect.objectContaining({ rawMessage: expect.stringMatching(/openai\/gpt-x, other\/gpt-x/) }));
    expect(() => attemptFor("nothing-x")).toThrow(expect.objectContaining({ rawMessage: "Model nothing-x is not in the catalogue." }));
  });

  it("are not read in chat completions, whose spec asks for <provider>/<model>", () => {
    const chat = create(GenerateRequestSchema, { ...FORMAT_FIELDS.chatCompletions, model: "claude-x", messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Hi" } } }] }] });
    expect(() => planAttempts(chat, catalogue)).toThrow(expect.objectContaining({ rawMessage: "Model claude-x is not in the catalogue." }));
  });
});
