// Reasoning signatures make the round trip through the chat format (as
// `message.reasoning` and `reasoning_details`; several blocks: reasoning-details.test.ts), and cited
// sources arrive as `annotations` and `citations`, in JSON and in streams.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { TEST_KEY, useGatewayWithUpstream } from "../../../support/harness.ts";

describe("reasoning signatures and citations in the chat format", () => {
  const stack = useGatewayWithUpstream();
  const post = (body: Record<string, unknown>) =>
    fetch(`${stack.gateway.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const streamedChunks = async (body: Record<string, unknown>) => {
    const text = await (await post({ ...body, stream: true })).text();
    return text
      .split("\n\n")
      .filter((event) => event.startsWith("data: {"))
      .map((event) => JSON.parse(event.slice(6)) as Record<string, any>);
  };
  const hello = [{ role: "user", content: "hi" }];

  it("returns the reasoning's signature and accepts the answer sent back unchanged", async () => {
    const client = new OpenAI({ apiKey: TEST_KEY, baseURL: stack.gateway.apiUrl });
    const first = await client.chat.completions.create({ model: "simulator/reasoning", messages: [{ role: "user", content: "why?" }] });
    const reasoning = (first.choices[0].message as unknown as { reasoning: { text: string; signature: string } }).reasoning;
    expect(reasoning.text).toMatch(/^Considering the request: why\?/);
    expect(reasoning.signature).toMatch(/^sim_[0-9a-f]{32}$/);
    const details = (first.choices[0].message as unknown as { reasoning_details: unknown[] }).reasoning_details;
    expect(details).toEqual([{ type: "reasoning.text", text: reasoning.text, signature: reasoning.signature, index: 0 }]);
    const second = await post({
      model: "simulator/reasoning",
      messages: [{ role: "user", content: "why?" }, first.choices[0].message, { role: "user", content: "and then?" }],
    });
    expect(second.status).toBe(200);
  });

  it("streams the signature as a reasoning delta", async () => {
    const chunks = await streamedChunks({ model: "simulator/reasoning", messages: hello });
    const signatures = chunks.flatMap((c) => c.choices[0]?.delta?.reasoning?.signature ?? []);
    expect(signatures).toHaveLength(1);
    expect(signatures[0]).toMatch(/^sim_/);
    const detailed = chunks.flatMap((c) => c.choices[0]?.delta?.reasoning_details ?? []).filter((d: any) => d.signature);
    expect(detailed).toEqual([{ type: "reasoning.text", text: "", signature: signatures[0], index: 0 }]);
  });

  it("accepts reasoning_details sent back, and refuses them on a user message", async () => {
    const details = [
      { type: "reasoning.text", text: "a", signature: "s1", index: 0 },
      { type: "reasoning.encrypted", data: "opaque", index: 1 },
    ];
    expect((await post({ model: "test/ok", messages: [...hello, { role: "assistant", content: "ok", reasoning_details: details }, ...hello] })).status).toBe(200);
    const onUser = await post({ model: "test/ok", messages: [{ role: "user", content: "hi", reasoning_details: details }] });
    expect(onUser.status).toBe(400);
    expect(((await onUser.json()) as any).error.param).toBe("messages[0].reasoning_details");
  });

  it("accepts redacted reasoning sent back, and refuses it on a user message", async () => {
    const assistant = { role: "assistant", content: "ok", reasoning: { text: "", signature: "s", redacted: ["opaque"] } };
    expect((await post({ model: "test/ok", messages: [...hello, assistant, ...hello] })).status).toBe(200);
    const onUser = await post({ model: "test/ok", messages: [{ role: "user", content: "hi", reasoning: { text: "x" } }] });
    expect(onUser.status).toBe(400);
    expect(((await onUser.json()) as any).error.param).toBe("messages[0].reasoning");
  });

  it("relays an OpenAI url_citation as annotations and citations", async () => {
    const body = (await (await post({ model: "test/cite", messages: hello })).json()) as any;
    const citation = { url: "https://example.com/source", title: "A source", start_index: 0, end_index: 5 };
    expect(body.choices[0].message.annotations).toEqual([{ type: "url_citation", url_citation: citation }]);
    expect(body.citations).toEqual([{ url: citation.url, title: citation.title }]);
    const chunks = await streamedChunks({ model: "test/cite", messages: hello });
    expect(chunks.flatMap((c) => c.choices[0]?.delta?.annotations ?? [])).toEqual([{ type: "url_citation", url_citation: citation }]);
  });

  it("relays Perplexity-style citation URLs once each, covering the whole text when no range is given", async () => {
    const body = (await (await post({ model: "test/cite-urls", messages: hello })).json()) as any;
    const text: string = body.choices[0].message.content;
    expect(body.choices[0].message.annotations.map((a: any) => a.url_citation)).toEqual([
      { url: "https://example.org/first", title: "", start_index: 0, end_index: text.length },
      { url: "https://example.org/second", title: "", start_index: 0, end_index: text.length },
    ]);
    expect(body.citations.map((c: any) => c.url)).toEqual(["https://example.org/first", "https://example.org/second"]);
  });

  it("answers citations: null when there are none", async () => {
    const body = (await (await post({ model: "test/ok", messages: hello })).json()) as any;
    expect(body.citations).toBeNull();
    expect(body.choices[0].message.annotations).toEqual([]);
  });
});
