// The Gemini Interactions adapter asked for a video (MediaOptions.video):
// created in the background, polled until done, read whole; failures and a
// caller who leaves, against the fake speaking the Interactions API.
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { modelProviderSchema, providerSchema } from "../../../../core/config/schema.ts";
import { createGeminiInteractionsAdapter } from "../../../../core/providers/gemini-interactions/adapter.ts";
import { VIDEO_POLLING } from "../../../../core/providers/gemini-interactions/video.ts";
import { createHttpClient, type HttpClient } from "../../../../core/providers/http-client.ts";
import { UpstreamError, type ProviderAdapter, type UpstreamCall } from "../../../../core/providers/types.ts";
import { BlockType, FinishReason, GenerateRequestSchema, Modality, Role, type GenerateResponse } from "../../../../gen/router/v1/inference_pb.js";
import { expectWellFormedBlocks } from "../../../support/block-lifecycle.ts";
import { FAKE_VIDEO, FAKE_VIDEO_POLLS, startFakeGeminiInteractionsUpstream, type FakeGeminiInteractionsUpstream } from "../../../support/fake-gemini-interactions-upstream.ts";

let upstream: FakeGeminiInteractionsUpstream;
let http: HttpClient;
let adapter: ProviderAdapter;
const DEFAULT_POLLING = { ...VIDEO_POLLING };

beforeAll(async () => {
  upstream = await startFakeGeminiInteractionsUpstream();
  http = createHttpClient();
  adapter = createGeminiInteractionsAdapter(http);
  Object.assign(VIDEO_POLLING, { firstPollMs: 2, maxPollMs: 5 });
});
afterAll(async () => {
  Object.assign(VIDEO_POLLING, DEFAULT_POLLING);
  await http.close();
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});

const prompt = { role: Role.USER, content: [{ part: { case: "text" as const, value: { text: "a wave at dusk" } } }] };

function call(model: string, request: { store?: boolean } = {}, signal = new AbortController().signal): UpstreamCall {
  return {
    request: create(GenerateRequestSchema, { messages: [prompt], media: { video: { aspectRatio: "16:9" } }, store: false, ...request }),
    provider: providerSchema.parse({ id: "google", label: "Google", protocol: "gemini-interactions", base_url: upstream.url, timeout_ms: 5000 }),
    route: modelProviderSchema.parse({ provider: "google", provider_model_id: model, pricing: { prompt: "0", completion: "0" } }),
    apiKey: "gemini-secret",
    stream: false,
    maxCompletionTokens: 8192,
    signal,
  };
}

async function collect(upstreamCall: UpstreamCall): Promise<GenerateResponse[]> {
  const events: GenerateResponse[] = [];
  for await (const event of adapter.stream(upstreamCall)) events.push(event);
  return events;
}

const creates = () => upstream.requests.filter((request) => request.method === "POST" && request.path === "/v1beta/interactions");
const polls = () => upstream.requests.filter((request) => request.method === "GET");

describe("a video from the Interactions API", () => {
  it("creates it in the background, polls until it is done and answers the video's bytes and the usage by modality", async () => {
    const events = await collect(call("veo-fake"));
    expect(creates().map((request) => request.body)).toEqual([
      {
        model: "veo-fake",
        input: [{ type: "user_input", content: [{ type: "text", text: "a wave at dusk" }] }],
        response_format: { type: "video", aspect_ratio: "16:9", delivery: "inline" },
        stream: false,
        background: true,
        store: true,
      },
    ]);
    const id = upstream.jobs.keys().next().value!;
    expect(polls().map((request) => request.path)).toEqual(Array.from({ length: FAKE_VIDEO_POLLS + 1 }, () => `/v1beta/interactions/${id}`));

    expect(events[0].event).toMatchObject({ case: "progress", value: { status: "in_progress" } });
    expectWellFormedBlocks(events.slice(1));
    const start = events.find((event) => event.event.case === "blockStart")!.event.value as { type: BlockType; mimeType: string };
    expect(start).toMatchObject({ type: BlockType.VIDEO, mimeType: "video/mp4" });
    const bytes = Buffer.concat(events.flatMap((event) => (event.event.case === "blockDelta" ? [event.event.value.data] : [])));
    expect(bytes.equals(FAKE_VIDEO)).toBe(true);
    const usage = events.find((event) => event.event.case === "usage")!.event.value as { outputTokens: number; outputByModality: { modality: Modality; tokens: number }[] };
    expect(usage.outputTokens).toBe(1005);
    expect(usage.outputByModality.map(({ modality, tokens }) => ({ modality, tokens }))).toEqual([
      { modality: Modality.VIDEO, tokens: 1000 },
      { modality: Modality.TEXT, tokens: 5 },
    ]);
    expect(events.at(-1)!.event).toMatchObject({ case: "finish", value: { reason: FinishReason.STOP, upstreamId: "" } });
    // Not kept by the caller: forgotten upstream once read.
    await vi.waitFor(() => expect(upstream.requests.filter((request) => request.method === "DELETE").map((request) => request.path)).toEqual([`/v1beta/interactions/${id}`]));
  });

  it("a kept answer names Google's interaction, which stays upstream", async () => {
    const events = await collect(call("veo-fake", { store: true }));
    const id = [...upstream.jobs.keys()].at(-1)!;
    expect(events.at(-1)!.event).toMatchObject({ case: "finish", value: { upstreamId: id } });
    expect(upstream.requests.some((request) => request.method === "DELETE")).toBe(false);
  });

  it("a failed interaction is a retryable upstream error with Google's reason", async () => {
    const error = await collect(call("veo-fail")).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ retryable: true, reason: "interaction_failed", message: expect.stringContaining("fake video generation failed") });
  });

  it("a caller who leaves cancels the interaction upstream", async () => {
    const controller = new AbortController();
    const iterator = adapter.stream(call("veo-hang", {}, controller.signal))[Symbol.asyncIterator]();
    expect((await iterator.next()).value!.event.case).toBe("progress");
    const reading = iterator.next();
    await vi.waitFor(() => expect(polls().length).toBeGreaterThan(0));
    controller.abort();
    await expect(reading).rejects.toThrow();
    const id = [...upstream.jobs.keys()].at(-1)!;
    await vi.waitFor(() => expect(upstream.jobs.get(id)!.status).toBe("cancelled"));
    expect(upstream.requests.filter((request) => request.method === "POST").map((request) => request.path)).toEqual(["/v1beta/interactions", `/v1beta/interactions/${id}/cancel`]);
  });

  it("a refused create is the upstream's error, before any event", async () => {
    upstream.failNext(429);
    const error = await collect(call("veo-fake")).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 429, retryable: true });
  });
});
