// End to end, through the official @google/genai SDK: a video interaction on a
// model whose route is a gemini-interactions provider (Veo at Google), which
// the media task system cannot serve, is served through the hub: the upstream
// is asked `background: true` and polled until its video is done; the answer
// carries the fake's exact bytes inline (JSON and stream), its usage bills the
// video tokens at the route's completion_video and the rest at completion,
// within the hold; a long wait is kept alive; a text-only model asked for
// video is still the task path's 400; a client that leaves a video it does
// not keep has it cancelled upstream.
import { GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../../../core/config/load.ts";
import { VIDEO_POLLING } from "../../../../core/providers/gemini-interactions/video.ts";
import { TASK_WAIT } from "../../../../gateway/formats/interactions/await-task.ts";
import { femtosOf, nanosRoundedUp } from "../../../support/exact-money.ts";
import { FAKE_VIDEO, FAKE_VIDEO_POLLS, startFakeGeminiInteractionsUpstream, type FakeGeminiInteractionsUpstream } from "../../../support/fake-gemini-interactions-upstream.ts";
import { expectEventIdsInStreamOrder, expectGenaiValid } from "../../../support/genai-interactions-schema.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";

type Json = Record<string, any>;

const VEO = "google/veo-fake";
const VEO_HANG = "google/veo-hang";
const TEXT_ONLY = "google/gemini-text";
/** USD per token: prompt, text output, video output. */
const PRICES = { prompt: "0.000001", completion: "0.000002", completion_video: "0.00003" };
/** The fake's usage (FAKE_VIDEO_USAGE) at PRICES: 10 prompt, 5 text and 1000 video tokens, in femto-dollars. */
const VIDEO_COST_FEMTOS = 10n * femtosOf(PRICES.prompt) + 5n * femtosOf(PRICES.completion) + 1000n * femtosOf(PRICES.completion_video);

function config(url: string) {
  const model = (id: string, upstreamModel: string, output: string[]) => ({
    id,
    name: id,
    created: 1700000000,
    creator: "google",
    context_length: 1024,
    max_completion_tokens: 2000,
    input_modalities: ["text", "image"],
    output_modalities: output,
    supported_parameters: ["max_tokens", "seed"],
    providers: [{ provider: "google", provider_model_id: upstreamModel, pricing: PRICES }],
  });
  return parseConfig(
    JSON.stringify({
      providers: [{ id: "google", label: "Google", protocol: "gemini-interactions", base_url: url, api_key_env: "CHEAP_KEY", timeout_ms: 5000 }],
      models: [model(VEO, "veo-fake", ["video"]), model(VEO_HANG, "veo-hang", ["video"]), model(TEXT_ONLY, "gemini-text", ["text"])],
      organizations: [{ id: "org_test", name: "Test", credits: "1000", keys: [{ id: "key_test", env: "TEST_API_KEY" }] }],
    }),
  );
}

let upstream: FakeGeminiInteractionsUpstream;
let gateway: Gateway;
let ai: GoogleGenAI;
const DEFAULT_POLLING = { ...VIDEO_POLLING };
const DEFAULT_WAIT = { ...TASK_WAIT };

beforeAll(async () => {
  upstream = await startFakeGeminiInteractionsUpstream();
  gateway = await startGateway(config(upstream.url));
  ai = new GoogleGenAI({ apiKey: TEST_KEY, httpOptions: { baseUrl: gateway.url, apiVersion: "v1" } });
});
afterAll(async () => {
  Object.assign(VIDEO_POLLING, DEFAULT_POLLING);
  Object.assign(TASK_WAIT, DEFAULT_WAIT);
  await gateway?.close();
  await upstream?.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
  // Polled soon and often; keep-alives rare unless a test asks.
  Object.assign(VIDEO_POLLING, { firstPollMs: 2, maxPollMs: 5 });
  TASK_WAIT.keepAliveMs = 10_000;
});

const balance = async () => {
  await gateway.core.accounts.idle();
  return gateway.core.accounts.stores.credits.balance("org_test");
};
const creates = () => upstream.requests.filter((request) => request.method === "POST" && request.path === "/v1beta/interactions");
const pollsOf = (id: string) => upstream.requests.filter((request) => request.method === "GET" && request.path === `/v1beta/interactions/${id}`);
const newestJob = () => [...upstream.jobs.values()].at(-1)!;
const post = (body: Json, signal?: AbortSignal) =>
  fetch(`${gateway.url}/v1/interactions`, { method: "POST", headers: { "x-goog-api-key": TEST_KEY, "content-type": "application/json" }, body: JSON.stringify(body), signal });
const videoOf = (contents: Json[]) => Buffer.from(contents.map((content) => content.data).join(""), "base64");

describe("a video interaction served by a gemini-interactions upstream", () => {
  it("asks the upstream in the background, polls it, answers the exact bytes inline and bills video tokens at completion_video", async () => {
    const before = await balance();
    const interaction = (await ai.interactions.create({ model: VEO, input: "a wave at dusk", response_format: { type: "video", aspect_ratio: "16:9" } } as never)) as Json;
    expectGenaiValid("Interaction", interaction, "the video interaction");
    expect(interaction).toMatchObject({ status: "completed", model: "veo-fake" });
    expect(interaction.outputs).toEqual([{ type: "video", data: FAKE_VIDEO.toString("base64"), mime_type: "video/mp4" }]);
    expect(videoOf(interaction.outputs).equals(FAKE_VIDEO)).toBe(true);

    expect(creates().map((request) => request.body)).toEqual([
      expect.objectContaining({ model: "veo-fake", background: true, stream: false, response_format: { type: "video", aspect_ratio: "16:9", delivery: "inline" } }),
    ]);
    const job = newestJob();
    expect(pollsOf(job.id)).toHaveLength(FAKE_VIDEO_POLLS + 1);

    expect(interaction.usage).toMatchObject({ total_input_tokens: 10, total_output_tokens: 1005, output_tokens_by_modality: [{ modality: "video", tokens: 1000 }, { modality: "text", tokens: 5 }] });
    expect(femtosOf(interaction.usage.cost)).toBe(VIDEO_COST_FEMTOS);
    expect(before - (await balance())).toBe(nanosRoundedUp(VIDEO_COST_FEMTOS));
  });

  it("streams the video as a model_output step, its status repeated while the upstream works, delivery uri answered inline", async () => {
    TASK_WAIT.keepAliveMs = 5;
    Object.assign(VIDEO_POLLING, { firstPollMs: 40, maxPollMs: 40 });
    const stream = await ai.interactions.create({ model: VEO, input: "a stream of waves", stream: true, store: false, response_format: { type: "video", delivery: "uri" } } as never);
    const events: Json[] = [];
    for await (const event of stream as unknown as AsyncIterable<Json>) events.push(event);
    for (const event of events) expectGenaiValid("InteractionSSEEvent", event, `${event.event_type} event`);
    expectEventIdsInStreamOrder(events);
    const types = events.map((event) => event.event_type);
    const firstStep = types.indexOf("step.start");
    // Keep-alives: the status again before the step started, none after.
    expect(types.slice(0, firstStep).filter((type) => type === "interaction.status_update").length).toBeGreaterThan(1);
    expect(types.slice(firstStep)).toEqual(["step.start", "step.delta", "step.stop", "interaction.completed"]);
    expect(events[firstStep].step).toEqual({ type: "model_output" });
    const deltas = events.filter((event) => event.event_type === "step.delta").map((event) => event.delta);
    expect(deltas.every((delta) => delta.type === "video" && delta.mime_type === "video/mp4")).toBe(true);
    expect(videoOf(deltas).equals(FAKE_VIDEO)).toBe(true);
    const completed = events.at(-1)!.interaction;
    expect(videoOf(completed.outputs).equals(FAKE_VIDEO)).toBe(true);
    expect(femtosOf(completed.usage.cost)).toBe(VIDEO_COST_FEMTOS);
    expect(creates().at(-1)!.body).toMatchObject({ background: true, response_format: { type: "video", delivery: "inline" } });
  });

  it("a JSON answer that outlasts a keep-alive gets its 200 at once and newlines before the resource", async () => {
    TASK_WAIT.keepAliveMs = 5;
    Object.assign(VIDEO_POLLING, { firstPollMs: 40, maxPollMs: 40 });
    const response = await post({ model: VEO, input: "a slow wave", response_format: { type: "video" } });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text.startsWith("\n\n")).toBe(true);
    const interaction = JSON.parse(text) as Json;
    expect(videoOf(interaction.outputs).equals(FAKE_VIDEO)).toBe(true);
  });

  it("a text-only model asked for video is a 400 naming model, nothing sent upstream", async () => {
    const response = await post({ model: TEXT_ONLY, input: "a wave", response_format: { type: "video" } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as Json).error).toMatchObject({ param: "model" });
    expect(upstream.requests).toEqual([]);
  });

  it.each([{ store: false }, { store: true }])("holds at least the video's cost while it is made; a client that leaves has it cancelled upstream, the hold released (store: $store: a kept turn keeps no video)", async ({ store }) => {
    upstream.requests.length = 0;
    const jobsBefore = upstream.jobs.size;
    const before = await balance();
    const leaving = new AbortController();
    const answer = post({ model: VEO_HANG, input: "a wave never done", store, response_format: { type: "video" } }, leaving.signal).catch((error: unknown) => error);
    await vi.waitFor(() => expect(upstream.jobs.size > jobsBefore && newestJob().body.model === "veo-hang" && newestJob().polls > 0).toBe(true));
    expect(before - (await balance())).toBeGreaterThanOrEqual(nanosRoundedUp(VIDEO_COST_FEMTOS));
    leaving.abort();
    await answer;
    const job = newestJob();
    await vi.waitFor(() => expect(job.status).toBe("cancelled"));
    expect(upstream.requests.filter((request) => request.method === "POST").map((request) => request.path)).toEqual(["/v1beta/interactions", `/v1beta/interactions/${job.id}/cancel`]);
    await vi.waitFor(async () => expect(await balance()).toBe(before));
  });
});
