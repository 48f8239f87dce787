// The Responses fields real clients send besides the core ones (docs/responses.md,
// "Fields real clients send"): the request bodies Codex CLI and the OpenAI
// Agents SDK were captured sending (test/fixtures/responses-clients/) are served
// as they are, and each field is accepted, honoured where the hub has a home
// for it, warned about where it is dropped, and refused with a 400 naming it
// when its value is not one OpenAI knows. The gateway runs on the three fake
// upstreams (OpenAI-compatible, Anthropic, Gemini), whose recorded requests
// show what went upstream.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { expectValid } from "../../../support/openai-schema.ts";
import { closeProtocolUpstreams, protocolConfig, startProtocolUpstreams, urlsOf, type Protocol } from "../../../support/protocol-upstreams.ts";
import type { FakeUpstream } from "../../../support/recording-server.ts";
import { TOOL_MEDIA_FOLLOWS } from "../../../../core/providers/openai-compatible/convert-request.ts";
import { decodeEncryptedReasoning } from "../../../../gateway/formats/responses/encode-response.ts";
import { FAKE_SIGNATURE } from "../../../support/fake-anthropic-upstream.ts";

type Json = Record<string, any>;

const FIXTURES = new URL("../../../fixtures/responses-clients/", import.meta.url);
const UPSTREAM_MODEL: Record<Protocol, string> = { "openai-compatible": "gpt-fields", anthropic: "claude-fields", gemini: "gemini-fields", "gemini-interactions": "gemini-ix-fields" };
const OPENAI = "fields/openai-compatible";
const ANTHROPIC = "fields/anthropic";
const GEMINI = "fields/gemini";

const weatherTool = { type: "function", name: "get_weather", description: "Weather of a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }, strict: true };

function fixture(name: string): Json {
  return JSON.parse(readFileSync(new URL(name, FIXTURES), "utf8")) as Json;
}

describe("Responses fields real clients send", () => {
  let upstreams: Record<Protocol, FakeUpstream>;
  let gateway: Gateway;

  beforeAll(async () => {
    upstreams = await startProtocolUpstreams();
    gateway = await startGateway(protocolConfig(urlsOf(upstreams), "fields", UPSTREAM_MODEL));
  });

  afterAll(async () => {
    await gateway?.close();
    await closeProtocolUpstreams(upstreams ?? {});
  });

  async function post(body: Json) {
    const response = await fetch(`${gateway.apiUrl}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    const json = body.stream === true && response.status === 200 ? lastEvent(text) : (JSON.parse(text) as Json);
    return { status: response.status, warnings: response.headers.get("x-router-warnings") ?? "", body: json };
  }

  /** A stream's last event's data: the response of response.completed. */
  function lastEvent(text: string): Json {
    const frames = text.split("\n\n").filter((frame) => frame.trim() !== "");
    const event = JSON.parse(/^data: (.*)$/m.exec(frames.at(-1)!)![1]) as Json;
    expect(event.type).toBe("response.completed");
    return event.response as Json;
  }

  const ok = (model: string, fields: Json) => post({ model, input: "Hi", ...fields });
  const sentTo = (protocol: Protocol) => upstreams[protocol].requests.at(-1)!.body as Json;

  async function expect400(fields: Json, param: string, message?: string) {
    const { status, body } = await ok(OPENAI, fields);
    expect(status, JSON.stringify(body)).toBe(400);
    expect(body.error.param).toBe(param);
    if (message) expect(body.error.message).toBe(message);
  }

  describe("the captured request bodies", () => {
    it.each([
      ["codex-0.169.0-unknown-model-turn1.json", ANTHROPIC],
      ["codex-0.169.0-unknown-model-turn2.json", ANTHROPIC],
      ["codex-0.169.0-gpt-5.5-turn1.json", OPENAI],
      ["codex-0.169.0-mcp-server-turn1.json", ANTHROPIC],
      ["codex-0.169.0-view-image-turn2.json", ANTHROPIC],
      ["codex-0.169.0-view-image-turn2.json", GEMINI],
      ["codex-0.169.0-view-image-turn2.json", OPENAI],
      ["agents-0.20.0-turn1.json", ANTHROPIC],
      ["agents-0.20.0-turn2.json", OPENAI],
    ])("%s is served on %s", async (name, model) => {
      const { status, body } = await post({ ...fixture(name), model });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.status).toBe("completed");
      expectValid("Response", body, name);
    });

    it("Codex CLI's: its function tools and its namespace's functions (flat, <namespace>__<name>) go upstream, its built-in web_search is left out with a warning", async () => {
      const body = fixture("codex-0.169.0-unknown-model-turn1.json");
      const { status, warnings } = await post({ ...body, model: ANTHROPIC });
      expect(status).toBe(200);
      const tools = body.tools as Json[];
      const functions = tools.filter((tool) => tool.type === "function").map((tool) => tool.name);
      const namespaced = tools.filter((tool) => tool.type === "namespace").flatMap((ns) => (ns.tools as Json[]).map((tool) => `${ns.name}__${tool.name}`));
      expect(namespaced).toContain("multi_agent_v1__spawn_agent");
      expect(sentTo("anthropic").tools.map((tool: Json) => tool.name)).toEqual([...functions, ...namespaced]);
      expect(warnings).not.toContain("namespace");
      expect(warnings).toContain("tools[8] (web_search) was left out: OpenAI's web search runs on OpenAI only");
    });

    it("Codex CLI's with an MCP server configured: the server's tools (namespace mcp__<server>) go upstream, and a call to one comes back with its name and namespace", async () => {
      const { status } = await post({ ...fixture("codex-0.169.0-mcp-server-turn1.json"), model: ANTHROPIC });
      expect(status).toBe(200);
      expect(sentTo("anthropic").tools.map((tool: Json) => tool.name)).toContain("mcp__weather__get_weather");
      // The fake calls the first tool it is offered: here the namespace's only function.
      const namespace = { type: "namespace", name: "mcp__weather", description: "Weather server", tools: [{ type: "function", name: "get_weather", parameters: { type: "object" } }] };
      for (const stream of [false, true]) {
        const answer = await ok(OPENAI, { tools: [namespace], stream });
        expect(answer.status).toBe(200);
        const call = (answer.body.output as Json[]).find((item) => item.type === "function_call")!;
        expect(call).toMatchObject({ name: "get_weather", namespace: "mcp__weather" });
        expectValid("Response", answer.body, `stream: ${stream}`);
      }
      expect(sentTo("openai-compatible").tools[0].function).toMatchObject({ name: "mcp__weather__get_weather", description: "Weather server" });
    });

    it("Codex CLI's for a model it knows: custom apply_patch and tool_search are left out too, and text.verbosity is said not sent", async () => {
      const { status, warnings } = await post({ ...fixture("codex-0.169.0-gpt-5.5-turn1.json"), model: OPENAI });
      expect(status).toBe(200);
      expect(warnings).toContain("tools[3] (custom apply_patch) was left out: custom tools (free-form input with a grammar) are not served");
      expect(warnings).toContain("tools[8] (tool_search) was left out");
      expect(warnings).toContain("text.verbosity low was not sent");
      expect(sentTo("openai-compatible").tools).toHaveLength(7);
    });

    it("Codex CLI's second turn: its reasoning, message and function call are one assistant turn, the output a tool result", async () => {
      const { status } = await post({ ...fixture("codex-0.169.0-unknown-model-turn2.json"), model: ANTHROPIC });
      expect(status).toBe(200);
      const messages = sentTo("anthropic").messages as Json[];
      const [assistant, toolTurn] = messages.slice(-2);
      expect(assistant.role).toBe("assistant");
      // The recorder that stood in for OpenAI signed its reasoning "sig:abc": the signature goes back as it came.
      expect(assistant.content.map((block: Json) => block.type)).toEqual(["thinking", "text", "tool_use"]);
      expect(assistant.content[0]).toMatchObject({ thinking: "thinking", signature: "abc" });
      expect(toolTurn.content[0]).toMatchObject({ type: "tool_result", tool_use_id: "call_1" });
    });
  });

  describe("function_call_output with an image (Codex's view_image)", () => {
    const IMAGE = "data:image/png;base64,iVBORw0KGgo=";
    const input = [
      { role: "user", content: "Look at red.png" },
      { type: "function_call", call_id: "call_1", name: "view_image", arguments: '{"path":"red.png"}' },
      { type: "function_call_output", call_id: "call_1", output: [{ type: "input_image", image_url: IMAGE, detail: "high" }] },
    ];
    const viewImage = { type: "function", name: "view_image", parameters: { type: "object", properties: { path: { type: "string" } } } };

    it("Anthropic gets the image inside the tool_result", async () => {
      expect((await post({ model: ANTHROPIC, input, tools: [viewImage] })).status).toBe(200);
      const result = (sentTo("anthropic").messages as Json[]).at(-1)!.content[0];
      expect(result).toMatchObject({ type: "tool_result", tool_use_id: "call_1", content: [{ type: "image", source: { type: "base64", media_type: "image/png" } }] });
    });

    it("an OpenAI-compatible upstream, whose tool messages are text only, gets the image in a user message after the tool message", async () => {
      expect((await post({ model: OPENAI, input, tools: [viewImage] })).status).toBe(200);
      const [tool, user] = (sentTo("openai-compatible").messages as Json[]).slice(-2);
      expect(tool).toEqual({ role: "tool", tool_call_id: "call_1", content: TOOL_MEDIA_FOLLOWS });
      expect(user).toEqual({ role: "user", content: [{ type: "image_url", image_url: { url: IMAGE, detail: "high" } }] });
    });

    it("a part other than input_text, input_image or input_file is a 400", () =>
      expect400({ input: [input[0], input[1], { ...input[2], output: [{ type: "output_text", text: "x" }] }], tools: [viewImage] }, "input[2].output[0].type"));
  });

  describe("include", () => {
    it("takes OpenAI's values; reasoning.encrypted_content is what every reasoning item carries anyway", async () => {
      const { status, body } = await ok(ANTHROPIC, { include: ["reasoning.encrypted_content", "message.input_image.image_url", "web_search_call.action.sources"], reasoning: { effort: "low" }, max_output_tokens: 4096 });
      expect(status).toBe(200);
      const reasoning = (body.output as Json[]).find((item) => item.type === "reasoning")!;
      expect(decodeEncryptedReasoning(reasoning.encrypted_content).signature).toBe(FAKE_SIGNATURE);
    });

    it("an empty list, as the Agents SDK sends it, is served", async () => {
      expect((await ok(OPENAI, { include: [] })).status).toBe(200);
    });

    it("refuses a value OpenAI does not know, naming the entry", async () => {
      const { body } = await ok(OPENAI, { include: ["reasoning.encrypted_content", "everything"] });
      expect(body.error.param).toBe("include[1]");
      expect(body.error.message).toMatch(/^include\[1\] must be one of reasoning\.encrypted_content, /);
    });

    it("message.output_text.logprobs is accepted with a warning: the gateway reports no logprobs", async () => {
      const { status, warnings } = await ok(OPENAI, { include: ["message.output_text.logprobs"] });
      expect(status).toBe(200);
      expect(warnings).toContain("log probabilities are not returned");
    });
  });

  describe("truncation", () => {
    it("disabled is what the gateway does: no warning", async () => {
      const { status, warnings } = await ok(OPENAI, { truncation: "disabled" });
      expect(status).toBe(200);
      expect(warnings).toBe("");
    });

    it("auto is served as disabled, with a warning", async () => {
      const { status, warnings } = await ok(OPENAI, { truncation: "auto" });
      expect(status).toBe(200);
      expect(warnings).toContain("truncation auto was served as disabled");
    });

    it("anything else is a 400", () => expect400({ truncation: "sometimes" }, "truncation", "truncation must be one of auto, disabled"));
  });

  describe("prompt_cache_key and prompt_cache_retention", () => {
    it("are accepted and not sent upstream, without a warning (a caching hint changes no answer)", async () => {
      const { status, warnings } = await ok(OPENAI, { prompt_cache_key: "thread-1", prompt_cache_retention: "24h" });
      expect(status).toBe(200);
      expect(warnings).toBe("");
      expect(sentTo("openai-compatible")).not.toHaveProperty("prompt_cache_key");
    });

    it("a retention OpenAI does not know is a 400", () => expect400({ prompt_cache_retention: "forever" }, "prompt_cache_retention"));
  });

  describe("safety_identifier", () => {
    it("is the end user the upstream is told of: OpenAI's user, Anthropic's metadata.user_id", async () => {
      expect((await ok(OPENAI, { safety_identifier: "hashed-user-1" })).status).toBe(200);
      expect(sentTo("openai-compatible").user).toBe("hashed-user-1");
      expect((await ok(ANTHROPIC, { safety_identifier: "hashed-user-1" })).status).toBe(200);
      expect(sentTo("anthropic").metadata).toEqual({ user_id: "hashed-user-1" });
    });

    it("user wins when both are sent", async () => {
      await ok(OPENAI, { safety_identifier: "hashed-user-1", user: "user-2" });
      expect(sentTo("openai-compatible").user).toBe("user-2");
    });

    it("is at most 128 characters, as OpenAI says", () => expect400({ safety_identifier: "x".repeat(129) }, "safety_identifier"));
  });

  describe("service_tier", () => {
    it.each(["auto", "default"])("%s is served without a warning", async (tier) => {
      const { status, warnings } = await ok(OPENAI, { service_tier: tier });
      expect(status).toBe(200);
      expect(warnings).toBe("");
    });

    it("flex is served at the default tier, with a warning", async () => {
      const { status, warnings } = await ok(OPENAI, { service_tier: "flex" });
      expect(status).toBe(200);
      expect(warnings).toContain("service_tier flex was served at the default tier");
    });

    it("a tier OpenAI does not know is a 400", () => expect400({ service_tier: "turbo" }, "service_tier"));
  });

  describe("store, parallel_tool_calls, reasoning.summary, client_metadata", () => {
    it("store: false keeps nothing: GET answers 404", async () => {
      const { body } = await ok(OPENAI, { store: false });
      const read = await fetch(`${gateway.apiUrl}/responses/${body.id}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect(read.status).toBe(404);
    });

    it("parallel_tool_calls: false goes upstream", async () => {
      expect((await ok(OPENAI, { tools: [weatherTool], parallel_tool_calls: false })).status).toBe(200);
      expect(sentTo("openai-compatible").parallel_tool_calls).toBe(false);
    });

    it("reasoning.summary is accepted and echoed; an unknown one is a 400", async () => {
      const { body } = await ok(OPENAI, { reasoning: { summary: "detailed" } });
      expect(body.reasoning).toEqual({ effort: null, summary: "detailed" });
      await expect400({ reasoning: { summary: "verbose" } }, "reasoning.summary");
    });

    it("reasoning.effort xhigh and max (OpenAI's newest levels, Codex's model_reasoning_effort takes xhigh) are served as high, with a warning", async () => {
      for (const effort of ["xhigh", "max"]) {
        const { status, warnings, body } = await ok(ANTHROPIC, { reasoning: { effort }, max_output_tokens: 4096 });
        expect(status).toBe(200);
        expect(warnings).toContain(`reasoning.effort ${effort} was served as high, the router's highest level`);
        expect(body.reasoning.effort).toBe(effort);
        // Anthropic thinks on a budget: high's share of the completion limit.
        expect(sentTo("anthropic").thinking).toEqual({ type: "enabled", budget_tokens: 3276 });
      }
    });

    it("client_metadata (Codex CLI's window and turn ids) is accepted and read by no one", async () => {
      const { status, warnings } = await ok(OPENAI, { client_metadata: { thread_id: "t-1", turn_id: "u-1" } });
      expect(status).toBe(200);
      expect(warnings).toBe("");
      expect(sentTo("openai-compatible")).not.toHaveProperty("client_metadata");
    });

    it("client_metadata values must be strings", () => expect400({ client_metadata: { n: 1 } }, "client_metadata.n"));
  });

  describe("text.verbosity, top_logprobs, stream_options", () => {
    it("text.verbosity medium (the default) is served without a warning, low with one", async () => {
      expect((await ok(OPENAI, { text: { verbosity: "medium" } })).warnings).toBe("");
      expect((await ok(OPENAI, { text: { verbosity: "low" } })).warnings).toContain("text.verbosity low was not sent: no upstream protocol here takes it");
      await expect400({ text: { verbosity: "loud" } }, "text.verbosity");
    });

    it("top_logprobs 0 is served silently, above 0 with a warning, above 20 is a 400", async () => {
      expect((await ok(OPENAI, { top_logprobs: 0 })).warnings).toBe("");
      expect((await ok(OPENAI, { top_logprobs: 5 })).warnings).toContain("log probabilities are not returned");
      await expect400({ top_logprobs: 21 }, "top_logprobs");
    });

    it("stream_options.include_obfuscation is accepted (no event carries obfuscation); unknown options are a 400", async () => {
      const { status } = await ok(OPENAI, { stream: true, stream_options: { include_obfuscation: false } });
      expect(status).toBe(200);
      await expect400({ stream: true, stream_options: { include_usage: true } }, "stream_options.include_usage");
    });
  });

  describe("input_file.file_url and input_image file_id", () => {
    const PDF_URL = "https://example.com/report.pdf";
    const withFile = (part: Json) => ({ input: [{ role: "user", content: [{ type: "input_text", text: "Summarise" }, part] }] });

    it("a file by URL reaches Anthropic as a document with a url source", async () => {
      const { status } = await ok(ANTHROPIC, withFile({ type: "input_file", file_url: PDF_URL, filename: "report.pdf" }));
      expect(status).toBe(200);
      expect(sentTo("anthropic").messages[0].content[1]).toEqual({ type: "document", source: { type: "url", url: PDF_URL }, title: "report.pdf" });
    });

    it("a file by URL reaches Gemini as fileData Google fetches", async () => {
      const { status } = await ok(GEMINI, withFile({ type: "input_file", file_url: PDF_URL }));
      expect(status).toBe(200);
      expect(sentTo("gemini").contents[0].parts[1]).toEqual({ fileData: { mimeType: "application/pdf", fileUri: PDF_URL } });
    });

    it("a file by URL reaches an OpenAI-compatible upstream as file_data (the protocol has no file URL; OpenRouter-style vendors take one there)", async () => {
      const { status } = await ok(OPENAI, withFile({ type: "input_file", file_url: PDF_URL, filename: "report.pdf" }));
      expect(status).toBe(200);
      expect(sentTo("openai-compatible").messages[0].content[1]).toEqual({ type: "file", file: { filename: "report.pdf", file_data: PDF_URL } });
    });

    it("file_url must be an http(s) URL", () =>
      expect400(withFile({ type: "input_file", file_url: "ftp://example.com/a.pdf" }), "input[0].content[1].file_url", "input[0].content[1].file_url must be an http(s) URL"));

    it("an input_file needs a source", () => expect400(withFile({ type: "input_file", filename: "a.pdf" }), "input[0].content[1]", "input[0].content[1] must have file_data, file_id or file_url"));

    it("an image by file_id goes as a file reference; a detail other than auto is said not sent", async () => {
      const { status, warnings } = await ok(GEMINI, withFile({ type: "input_image", file_id: "files/abc", detail: "high" }));
      expect(status).toBe(200);
      expect(sentTo("gemini").contents[0].parts[1]).toEqual({ fileData: { fileUri: "files/abc" } });
      expect(warnings).toContain("input[0].content[1].detail high was not sent: an image given by file_id goes upstream as a file reference, which has no detail");
      expect((await ok(GEMINI, withFile({ type: "input_image", file_id: "files/abc", detail: "auto" }))).warnings).toBe("");
    });
  });

  describe("tools", () => {
    it("a function tool with strict: true goes upstream strict", async () => {
      expect((await ok(OPENAI, { tools: [weatherTool] })).status).toBe(200);
      expect(sentTo("openai-compatible").tools[0].function).toMatchObject({ name: "get_weather", strict: true });
    });

    it("web_search, custom and tool_search are left out with a warning naming tools[i]; a namespace's functions go up flat; the echo lists the function tools", async () => {
      const tools = [
        { type: "web_search", external_web_access: false },
        weatherTool,
        { type: "custom", name: "apply_patch", format: { type: "grammar", syntax: "lark", definition: "start: /.+/" } },
        { type: "namespace", name: "crm", description: "CRM", tools: [{ type: "function", name: "lookup", parameters: {} }] },
        { type: "tool_search", execution: "client" },
      ];
      const { status, warnings, body } = await ok(OPENAI, { tools });
      expect(status).toBe(200);
      expect(warnings.split("; ").filter((w) => w.startsWith("tools["))).toEqual([
        "tools[0] (web_search) was left out: OpenAI's web search runs on OpenAI only",
        "tools[2] (custom apply_patch) was left out: custom tools (free-form input with a grammar) are not served",
        "tools[4] (tool_search) was left out: tool search (deferred tools) is not served",
      ]);
      expect(sentTo("openai-compatible").tools.map((tool: Json) => tool.function.name)).toEqual(["get_weather", "crm__lookup"]);
      expect(body.tools.map((tool: Json) => tool.name)).toEqual(["get_weather"]);
    });

    it("echoes the fields it accepted as the gateway served them: truncation disabled, the default tier, top_logprobs, the cache key, the safety identifier, the verbosity", async () => {
      const fields = { truncation: "auto", service_tier: "flex", top_logprobs: 2, prompt_cache_key: "thread-1", safety_identifier: "user-hash", text: { verbosity: "low" } };
      for (const stream of [false, true]) {
        const { status, body } = await ok(OPENAI, { ...fields, stream });
        expect(status).toBe(200);
        expectValid("Response", body, `stream: ${stream}`);
        expect(body).toMatchObject({ truncation: "disabled", service_tier: "default", top_logprobs: 2, prompt_cache_key: "thread-1", safety_identifier: "user-hash", text: { verbosity: "low" } });
      }
      const plain = await ok(OPENAI, {});
      expect(plain.body).toMatchObject({ truncation: "disabled", service_tier: "default", top_logprobs: 0 });
      expect(plain.body).not.toHaveProperty("prompt_cache_key");
    });

    it("the same in a stream: the warnings are headers", async () => {
      const { status, warnings } = await ok(OPENAI, { stream: true, tools: [{ type: "web_search" }] });
      expect(status).toBe(200);
      expect(warnings).toContain("tools[0] (web_search) was left out");
    });

    it.each(["local_shell", "file_search", "computer_use_preview", "code_interpreter", "image_generation", "mcp", "shell", "apply_patch", "web_search_preview"])(
      "%s, a built-in tool no upstream runs and no client sends by default, is a 400 naming tools[i].type",
      (type) => expect400({ tools: [weatherTool, { type }] }, "tools[1].type", `tools[1].type is ${type}, a built-in tool that the upstream providers cannot run; only function tools are served`),
    );

    it("an unknown tool type is a 400 naming tools[i].type", () =>
      expect400({ tools: [{ type: "teleport" }] }, "tools[0].type", "tools[0].type must be function or namespace (or web_search, custom, tool_search, which are left out)"));

    it("tool_choice required needs a function tool: the left-out ones do not count", () =>
      expect400({ tools: [{ type: "web_search" }], tool_choice: "required" }, "tool_choice", 'tool_choice is "required", but tools has no function tool'));

    it("a function_call sent back with OpenAI's namespace goes upstream under its flat name", async () => {
      const input = [
        { role: "user", content: "Weather?" },
        { type: "function_call", call_id: "call_1", name: "get_weather", namespace: "weather", arguments: '{"city":"Paris"}' },
        { type: "function_call_output", call_id: "call_1", output: "sunny" },
      ];
      const { status } = await post({ model: OPENAI, input, tools: [weatherTool] });
      expect(status).toBe(200);
      const assistant = (sentTo("openai-compatible").messages as Json[]).find((message) => message.role === "assistant")!;
      expect(assistant.tool_calls[0].function.name).toBe("weather__get_weather");
    });
  });
});
