// The chat fields of an audio-generation model: `prompt` (what the audio is)
// and `duration` (seconds). The simulator's audio model answers with a WAV of
// that length; a Gemini music model (Lyria) gets both in its prompt text and
// its MP3 comes back as OpenAI's `message.audio`. Other models drop both with
// a warning.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../../../core/config/load.ts";
import { FAKE_AUDIO_PARTS, startFakeGeminiUpstream } from "../../../support/fake-gemini-upstream.ts";
import type { FakeUpstream } from "../../../support/fake-openai-upstream.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { expectValid } from "../../../support/openai-schema.ts";

const WAV_HEADER_BYTES = 44;
const WAV_BYTES_PER_SECOND = 8000 * 2;

describe("audio generation through chat completions", () => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  let client: OpenAI;
  const model = (id: string, provider: string, outputs: string[]) => ({
    id,
    name: id,
    created: 1700000000,
    creator: id.split("/")[0],
    context_length: 32768,
    max_completion_tokens: 8192,
    input_modalities: ["text"],
    output_modalities: outputs,
    supported_parameters: ["max_tokens"],
    providers: [{ provider, provider_model_id: id.split("/")[1], pricing: { prompt: "0.0000001", completion: "0.000001" } }],
  });

  beforeAll(async () => {
    upstream = await startFakeGeminiUpstream();
    const config = parseConfig(
      JSON.stringify({
        providers: [
          { id: "simulator", label: "Simulator", protocol: "simulator" },
          { id: "google", label: "Google", protocol: "gemini", base_url: upstream.url, api_key_env: "CHEAP_KEY" },
        ],
        models: [
          model("simulator/audio", "simulator", ["text", "audio"]),
          model("simulator/echo", "simulator", ["text"]),
          model("google/lyria-3-pro-preview", "google", ["text", "audio"]),
          model("google/writer", "google", ["text"]),
        ],
        organizations: [{ id: "org_test", name: "Test", credits: "1000", keys: [{ id: "key_test", env: "TEST_API_KEY" }] }],
      }),
    );
    gateway = await startGateway(config);
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  // The SDK sends fields it does not know as they are.
  const audioRequest = (body: Record<string, unknown>) =>
    ({ messages: [{ role: "user", content: "Make a jingle" }], ...body }) as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
  const post = (body: Record<string, unknown>) =>
    fetch(`${gateway.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "Make a jingle" }], ...body }),
    });

  it("answers the simulator's audio model with a WAV as long as duration, described by prompt", async () => {
    const completion = await client.chat.completions.create(audioRequest({ model: "simulator/audio", prompt: "a calm sea", duration: 3 }));
    expectValid("CreateChatCompletionResponse", completion, "audio answer");
    const audio = completion.choices[0].message.audio as unknown as { id: string; data: string; format: string; transcript: string; expires_at: number };
    const bytes = Buffer.from(audio.data, "base64");
    expect(bytes.subarray(0, 4).toString("ascii")).toBe("RIFF");
    expect(bytes.subarray(8, 12).toString("ascii")).toBe("WAVE");
    expect(bytes.length).toBe(WAV_HEADER_BYTES + 3 * WAV_BYTES_PER_SECOND);
    expect(audio.format).toBe("wav");
    expect(audio.id).toBe(`audio_${completion.id}`);
    expect(completion.choices[0].message.content).toMatch(/^A 3-second \d+ Hz tone for: a calm sea$/);
    // 32 tokens a second of audio, plus the caption's words.
    expect(completion.usage!.completion_tokens).toBe(3 * 32 + completion.choices[0].message.content!.split(" ").length);
  });

  it("gives the same prompt the same sound and another prompt another", async () => {
    const first = await client.chat.completions.create(audioRequest({ model: "simulator/audio", prompt: "rain", duration: 1 }));
    const again = await client.chat.completions.create(audioRequest({ model: "simulator/audio", prompt: "rain", duration: 1 }));
    const other = await client.chat.completions.create(audioRequest({ model: "simulator/audio", prompt: "thunder and a long storm", duration: 1 }));
    expect(again.choices[0].message.audio!.data).toBe(first.choices[0].message.audio!.data);
    expect(other.choices[0].message.audio!.data).not.toBe(first.choices[0].message.audio!.data);
  });

  it("uses the default length without duration and the last user message without prompt", async () => {
    const completion = await client.chat.completions.create(audioRequest({ model: "simulator/audio" }));
    expect(Buffer.from(completion.choices[0].message.audio!.data, "base64").length).toBe(WAV_HEADER_BYTES + 5 * WAV_BYTES_PER_SECOND);
    expect(completion.choices[0].message.content).toMatch(/tone for: Make a jingle$/);
  });

  it("streams the whole clip as one audio delta when its block ends", async () => {
    const text = await (await post({ model: "simulator/audio", prompt: "birds", duration: 2, stream: true })).text();
    const chunks = text.split("\n\n").filter((e) => e.startsWith("data: {")).map((e) => JSON.parse(e.slice(6)));
    for (const chunk of chunks) expectValid("CreateChatCompletionStreamResponse", chunk, "audio stream chunk");
    const audio = chunks.flatMap((c: any) => (c.choices[0]?.delta?.audio ? [c.choices[0].delta.audio] : []));
    expect(audio).toHaveLength(1);
    expect(Buffer.from(audio[0].data, "base64").length).toBe(WAV_HEADER_BYTES + 2 * WAV_BYTES_PER_SECOND);
    expect(audio[0].format).toBe("wav");
  });

  it("refuses a duration below 1 before dispatch and serves the edge of 1 second", async () => {
    const zero = await post({ model: "simulator/audio", duration: 0 });
    expect(zero.status).toBe(400);
    expect(((await zero.json()) as any).error.param).toBe("duration");
    const one = await post({ model: "simulator/audio", duration: 1 });
    expect(one.status).toBe(200);
  });

  it("passes the simulator's 60-second limit on as the provider's 400, at its edge", async () => {
    const sixty = await post({ model: "simulator/audio", duration: 60 });
    expect(sixty.status).toBe(200);
    const over = await post({ model: "simulator/audio", duration: 61 });
    expect(over.status).toBe(400);
    expect(((await over.json()) as any).error.message).toMatch(/at most 60 seconds/);
  });

  it("sends prompt and duration to a Gemini music model as prompt text and relays its MP3 whole", async () => {
    const response = await post({ model: "google/lyria-3-pro-preview", prompt: "upbeat folk with harmonica", duration: 90 });
    expect(response.status).toBe(200);
    const body = (await response.json()) as any;
    expectValid("CreateChatCompletionResponse", body, "Gemini audio answer");
    const expected = Buffer.concat(FAKE_AUDIO_PARTS.map((part) => Buffer.from(part, "base64"))).toString("base64");
    expect(body.choices[0].message.audio).toMatchObject({ data: expected, format: "mp3", transcript: "" });
    expect(body.choices[0].message.content).toBe("Hello from lyria-3-pro-preview");
    const sent = upstream.requests.at(-1)!.body;
    expect(sent.contents).toEqual([{ role: "user", parts: [{ text: "Make a jingle" }, { text: "upbeat folk with harmonica Length: 90 seconds." }] }]);
    expect(response.headers.get("x-router-warnings")).toBeNull();
  });

  it("streams a Gemini music model's audio pieces as audio deltas of one file", async () => {
    const text = await (await post({ model: "google/lyria-3-pro-preview", prompt: "folk", stream: true })).text();
    const chunks = text.split("\n\n").filter((e) => e.startsWith("data: {")).map((e) => JSON.parse(e.slice(6)));
    const pieces = chunks.flatMap((c: any) => (c.choices[0]?.delta?.audio ? [c.choices[0].delta.audio.data] : []));
    expect(Buffer.concat(pieces.map((p: string) => Buffer.from(p, "base64")))).toEqual(
      Buffer.concat(FAKE_AUDIO_PARTS.map((part) => Buffer.from(part, "base64"))),
    );
  });

  it.each([
    ["simulator/echo", "simulator"],
    ["google/writer", "google"],
  ])("drops prompt and duration with a warning on %s, which makes no audio", async (id, provider) => {
    const response = await post({ model: id, prompt: "a calm sea", duration: 3 });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-router-warnings")).toContain(`prompt and duration are not supported by ${id} on ${provider} and were ignored`);
    const body = (await response.json()) as any;
    expect(body.choices[0].message.audio).toBeUndefined();
    if (provider === "google") expect(JSON.stringify(upstream.requests.at(-1)!.body)).not.toContain("a calm sea");
  });
});
