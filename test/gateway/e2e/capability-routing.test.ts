// Capability-aware routing: routes that cannot serve a request are skipped
// before dispatch (and shown in the trace); when none is left the answer is a
// 400 naming the missing capability, and nothing is sent upstream.
import { describe, expect, it } from "vitest";
import { TEST_KEY, useGatewayWithUpstream } from "../../support/harness.ts";

describe("capability-aware routing", () => {
  const stack = useGatewayWithUpstream();

  const chat = (body: Record<string, unknown>) =>
    fetch(`${stack.gateway.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const json = (response: Response) => response.json() as Promise<Record<string, any>>;
  const hello = [{ role: "user", content: "hi" }];
  const image = { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } };
  const audio = { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } };
  const weatherTool = { type: "function", function: { name: "weather", parameters: { type: "object", properties: {} } } };

  async function expectRefused(body: Record<string, unknown>, param: string, missing: string, words: RegExp) {
    const before = stack.upstream.requests.length;
    const response = await chat(body);
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error).toMatchObject({ code: "capability_not_supported", type: "invalid_request_error", param, metadata: { missing } });
    expect(error.message).toMatch(words);
    // The routing trace names the skipped routes on the error answer too.
    expect(response.headers.get("x-router-trace")).toContain(`;skipped;${missing}`);
    expect(stack.upstream.requests.length).toBe(before);
  }

  it("refuses an image for a model without image input, naming the content block", async () => {
    const messages = [{ role: "user", content: [{ type: "text", text: "what is this?" }, image] }];
    await expectRefused({ model: "test/text-only", messages }, "messages[0].content[1]", "image_input", /test\/text-only lacks image input/);
  });

  it("refuses audio for a model whose inputs are text and image", async () => {
    await expectRefused({ model: "test/ok", messages: [{ role: "user", content: [audio] }] }, "messages[0].content[0]", "audio_input", /audio input/);
  });

  it("refuses tools for a model that does not list them", async () => {
    await expectRefused({ model: "test/plain", messages: hello, tools: [weatherTool] }, "tools", "tools", /tool calling/);
  });

  it.each([{ type: "json_object" }, { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" } } }])(
    "refuses response_format %o for a model that does not list it",
    async (format) => {
      await expectRefused({ model: "test/plain", messages: hello, response_format: format }, "response_format", "response_format", /structured output/);
    },
  );

  it("refuses a max_tokens above every route's completion limit", async () => {
    await expectRefused({ model: "test/ok", messages: hello, max_tokens: 4097 }, "max_tokens", "max_completion_tokens", /at least 4097 tokens/);
  });

  it("accepts max_tokens at the completion limit", async () => {
    const response = await chat({ model: "test/ok", messages: hello, max_tokens: 4096 });
    expect(response.status).toBe(200);
  });

  it("skips a route whose context is too small for the prompt and says so in the trace", async () => {
    // About 1,200 estimated tokens: over the cheap route's 1,000, within the dear route's 128,000.
    const long = [{ role: "user", content: "word ".repeat(1200) }];
    const response = await chat({ model: "test/limited", messages: long });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-router-provider")).toBe("dear");
    expect(response.headers.get("x-router-trace")).toBe("test/limited@cheap;skipped;context_length, test/limited@dear;ok");
    const short = await chat({ model: "test/limited", messages: hello });
    expect(short.headers.get("x-router-provider")).toBe("cheap");
  });

  it("moves on to the next model of `models` when the first lacks a capability", async () => {
    const messages = [{ role: "user", content: [image] }];
    const response = await chat({ model: "test/text-only", models: ["test/ok"], messages });
    expect(response.status).toBe(200);
    expect((await json(response)).model).toBe("ok");
    expect(response.headers.get("x-router-trace")).toBe("test/text-only@cheap;skipped;image_input, test/ok@cheap;ok");
  });

  it("drops a sampling parameter the model does not list, with a warning, and never sends it", async () => {
    const response = await chat({ model: "test/plain", messages: hello, temperature: 0.5, top_p: 0.9, seed: 7 });
    expect(response.status).toBe(200);
    const warnings = response.headers.get("x-router-warnings") ?? "";
    expect(warnings).toMatch(/top_p is not supported by test\/plain on cheap and was ignored/);
    expect(warnings).toMatch(/seed is not supported/);
    const sent = stack.upstream.requests.at(-1)!.body;
    expect(sent).toMatchObject({ temperature: 0.5 });
    expect(sent).not.toHaveProperty("top_p");
    expect(sent).not.toHaveProperty("seed");
  });
});
